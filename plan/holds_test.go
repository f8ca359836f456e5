package plan

import "testing"

// TestHolds: a change was carried out when every value it sent is in the live config;
// the server may add defaults and its own metadata, nothing else may differ.
func TestHolds(t *testing.T) {
	cases := []struct {
		name, want, have string
		ok               bool
	}{
		{"equal", `{"name":"S","max_msgs":5}`, `{"name":"S","max_msgs":5}`, true},
		{"server defaults added", `{"name":"S"}`, `{"name":"S","max_msgs":-1,"discard":"old"}`, true},
		{"server metadata added", `{"metadata":{"natsplan.project":"shop"}}`, `{"metadata":{"natsplan.project":"shop","_nats.req.level":"0"}}`, true},
		{"a zero value the server omits", `{"name":"S","description":""}`, `{"name":"S"}`, true},
		{"a value differs", `{"name":"S","max_msgs":5}`, `{"name":"S","max_msgs":6}`, false},
		{"a list differs", `{"subjects":["a","b"]}`, `{"subjects":["a"]}`, false},
		{"a metadata value differs", `{"metadata":{"natsplan.project":"shop"}}`, `{"metadata":{"natsplan.project":"other"}}`, false},
		{"a value missing", `{"name":"S","max_msgs":5}`, `{"name":"S"}`, false},
		{"one instant written two ways", `{"pause_until":"2030-01-02T03:04:05Z"}`, `{"pause_until":"2030-01-02T04:04:05.000+01:00"}`, true},
		{"another instant", `{"pause_until":"2030-01-02T03:04:05Z"}`, `{"pause_until":"2030-01-02T03:04:06Z"}`, false},
		{"large numbers compare exactly", `{"max_bytes":9007199254740993}`, `{"max_bytes":9007199254740992}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := Holds([]byte(tc.want), []byte(tc.have))
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok {
				t.Errorf("Holds(%s, %s) = %v, want %v", tc.want, tc.have, ok, tc.ok)
			}
		})
	}
}
