package plan

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// TestAlreadyApplied: a plan is recognised as applied only when every object it
// touches is as it leaves them, on the planned target.
func TestAlreadyApplied(t *testing.T) {
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sent := server.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, MaxAge: time.Hour, Storage: server.FileStorage,
		Metadata: map[string]string{model.MetaProject: "shop"}}
	sent.MaxMsgs, sent.MaxBytes, sent.MaxMsgsPer, sent.MaxMsgSize, sent.MaxConsumers, sent.Replicas = -1, -1, -1, -1, -1, 1
	// The server adds its own metadata, and fields the request left out.
	stored := sent
	stored.Duplicates = 2 * time.Minute
	stored.Metadata = map[string]string{model.MetaProject: "shop", "_nats.req.level": "0"}
	older := stored
	older.MaxAge = 2 * time.Hour

	target := Target{Server: "n1", Account: "$G"}
	liveWith := func(server string, streams ...server.StreamConfig) *model.Model {
		m := model.New()
		m.Target = &model.Target{Server: server, Account: "$G"}
		for _, s := range streams {
			m.Streams[s.Name] = &model.Stream{Name: s.Name, Kind: model.KindStream, Config: s}
		}
		return m
	}
	create := &Change{Address: "stream.ORDERS", Kind: "stream", Name: "ORDERS", Action: ActCreate, After: raw(sent)}
	del := &Change{Address: "stream.OLD", Kind: "stream", Name: "OLD", Action: ActDelete}
	cases := []struct {
		name    string
		changes []*Change
		live    *model.Model
		want    bool
	}{
		{"created as planned", []*Change{create}, liveWith("n1", stored), true},
		{"not created yet", []*Change{create}, liveWith("n1"), false},
		{"created, then changed", []*Change{create}, liveWith("n1", older), false},
		{"deleted as planned", []*Change{create, del}, liveWith("n1", stored), true},
		{"not deleted yet", []*Change{create, del}, liveWith("n1", stored, server.StreamConfig{Name: "OLD", Storage: server.MemoryStorage}), false},
		{"another server", []*Change{create}, liveWith("n2", stored), false},
		{"no changes", nil, liveWith("n1", stored), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &Plan{Target: target, Changes: c.changes}
			if got := AlreadyApplied(p, c.live); got != c.want {
				t.Errorf("AlreadyApplied = %v, want %v", got, c.want)
			}
		})
	}
}
