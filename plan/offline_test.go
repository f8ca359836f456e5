package plan_test

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/model"
)

// TestOfflineObjectsAreNotTouched: a declared stream or consumer the server lists as
// offline is neither created nor changed, and the plan says why with NP406.
func TestOfflineObjectsAreNotTouched(t *testing.T) {
	desired := desiredModel([]server.StreamConfig{stream("A", nil), stream("B", nil)}, nil)
	desired.Consumers[model.ConsumerKey{Stream: "B", Name: "c"}] = &model.Consumer{Stream: "B", Name: "c",
		Config: server.ConsumerConfig{Durable: "c", AckPolicy: server.AckExplicit}}
	live := liveOf(5, liveObj{cfg: stream("B", nil), meta: owned})
	live.Offline = []model.Offline{{Address: "stream.A", Reason: "peer offline"}, {Address: "consumer.B.c", Reason: "unsupported - required API level: 9"}}
	p := mustCompute(t, desired, live)
	if len(p.Changes) != 0 {
		t.Fatalf("offline objects must not be planned:\n%s", testkit.Describe(p))
	}
	got := codes(p)
	want := []string{"NP406 consumer.B.c", "NP406 stream.A"}
	if len(got) != 2 || !(got[0] == want[0] && got[1] == want[1] || got[0] == want[1] && got[1] == want[0]) {
		t.Fatalf("findings = %v, want %v", got, want)
	}
	for _, f := range p.Findings {
		if f.Severity != finding.SevError {
			t.Fatalf("NP406 must be an error: %+v", f)
		}
	}
}

// TestLockBucketIsNotUnmanaged: the apply lock's bucket is natsplan's own.
func TestLockBucketIsNotUnmanaged(t *testing.T) {
	live := liveOf(5, liveObj{cfg: stream("KV_natsplan_lock", nil), meta: map[string]string{model.MetaRole: "lock"}, kind: model.KindKV})
	p := mustCompute(t, desiredModel(nil, nil), live)
	if len(p.Unmanaged) != 0 || len(p.Changes) != 0 {
		t.Fatalf("the lock bucket must be neither unmanaged nor changed:\n%s", testkit.Describe(p))
	}
}
