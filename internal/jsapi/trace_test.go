package jsapi

import (
	"strings"
	"testing"
)

func TestTraceRedacts(t *testing.T) {
	cases := []struct{ body, want string }{
		{``, `(empty)`},
		{`{"config":{"name":"ORDERS","subjects":["orders.>"]}}`, `{"config":{"name":"ORDERS","subjects":["orders.>"]}}`},
		{`{"user":"bob","password":"hunter2","nested":[{"Token":"t0k"},{"jwt":"eyJ"}]}`,
			`{"nested":[{"Token":"[redacted]"},{"jwt":"[redacted]"}],"password":"[redacted]","user":"bob"}`},
		{"\x00\x01", `(2 bytes, not JSON)`},
	}
	for _, c := range cases {
		if got := redact([]byte(c.body)); got != c.want {
			t.Errorf("redact(%q) = %s, want %s", c.body, got, c.want)
		}
	}
	var b strings.Builder
	tr := NewTracer(&b)
	n := tr.request("$JS.API.INFO", nil)
	tr.reply(n, "$JS.API.INFO", 0, []byte(`{"type":"io.nats.jetstream.api.v1.account_info_response"}`), nil)
	want := ">>> #1 $JS.API.INFO (empty)\n<<< #1 $JS.API.INFO (0s) {\"type\":\"io.nats.jetstream.api.v1.account_info_response\"}\n"
	if b.String() != want {
		t.Errorf("trace:\n%s\nwant:\n%s", b.String(), want)
	}
}
