package apply

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// TestRunTimeoutsAreReadBack: behind a 200ms round trip with a 50ms request timeout,
// every request times out although the server carries it out. A timed-out change is
// "outcome unknown" until its object is read back: one that was carried out is done
// and its dependants (in the same step and later) still run; one the server refused
// is sent once more (every change is idempotent) and then failed, and its dependants
// are skipped.
func TestRunTimeoutsAreReadBack(t *testing.T) {
	s := testsrv.Start(t)
	direct := jsapi.New(testsrv.Connect(t, s), "", 5*time.Second)
	seedStream(t, direct, "X", `{"subjects":["x.>"]}`)

	nc, err := nats.Connect(testsrv.LatencyProxy(t, s.ClientURL(), 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	slow := jsapi.New(nc, "", 50*time.Millisecond)

	p := &plan.Plan{Changes: []*plan.Change{
		stream(plan.ActCreate, "A", 1, `{"subjects":["a.>"]}`),
		consumer(plan.ActCreate, "A", "c", 1, `{"ack_policy":"explicit"}`, "stream.A"),
		// The server refuses B (its subjects overlap X's), after the client gave up.
		stream(plan.ActCreate, "B", 1, `{"subjects":["x.b"]}`),
		consumer(plan.ActCreate, "B", "c", 2, `{"ack_policy":"explicit"}`, "stream.B"),
		consumer(plan.ActCreate, "A", "d", 2, `{"ack_policy":"explicit"}`, "stream.A"),
	}}
	out := &lines{}
	res := mustRun(t, slow, p, Options{Progress: out})

	want := map[string]Status{
		"stream.A": StatusDone, "consumer.A.c": StatusDone, "consumer.A.d": StatusDone,
		"stream.B": StatusFailed, "consumer.B.c": StatusSkipped,
	}
	for addr, st := range statuses(res) {
		if st != want[addr] {
			t.Errorf("%s: %s, want %s", addr, st, want[addr])
		}
	}
	for _, s := range res.Steps {
		if s.Address == "stream.B" && !strings.Contains(s.Err.Error(), "not carried out") {
			t.Errorf("stream.B: %v, want it read back as not carried out", s.Err)
		}
	}
	if consumerInfo(t, direct, "A", "c") == nil || consumerInfo(t, direct, "A", "d") == nil || streamInfo(t, direct, "B") != nil {
		t.Error("the server's state does not match the result")
	}
	// Every request timed out (B's twice): the results come from reading back.
	if n := strings.Count(out.String(), "read back: "); n != 5 {
		t.Errorf("%d requests timed out, want 5\n%s", n, out)
	}
	if !strings.Contains(out.String(), "read back: stream.B: not carried out; sending it again") {
		t.Errorf("progress does not report sending B again\n%s", out)
	}
	if !strings.Contains(out.String(), "read back: stream.A: created") {
		t.Errorf("progress does not report the read-back\n%s", out)
	}
}
