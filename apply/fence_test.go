package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/lock"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// TestRunStopsWhenTheLockIsLost: an apply stalls between two changes for longer than
// its lock's TTL (its lease is not refreshed: here its lock connection is cut), a
// second apply takes the lock over and updates a stream, and the stalled apply then
// resumes. It sends no write after the takeover, leaves the second apply's result in
// place, and reports the lost lock as why it stopped.
func TestRunStopsWhenTheLockIsLost(t *testing.T) {
	s := testsrv.Start(t)
	c := jsapi.New(testsrv.Connect(t, s), "", 5*time.Second)
	const n = 6
	var changes []*plan.Change
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("S%d", i)
		seedStream(t, c, name, fmt.Sprintf(`{"subjects":["s%d.>"],"max_msgs":1}`, i))
		changes = append(changes, stream(plan.ActUpdate, name, 1, fmt.Sprintf(`{"subjects":["s%d.>"],"max_msgs":100}`, i)))
	}
	changes = append(changes, consumer(plan.ActCreate, "S1", "c", 2, `{"ack_policy":"explicit"}`))

	proxy := testsrv.StartProxy(t, s.ClientURL(), 0)
	lnc, err := nats.Connect(proxy.URL, nats.ReconnectBufSize(-1), nats.ReconnectWait(50*time.Millisecond), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lnc.Close)
	ctx := context.Background()
	// Long enough that a loaded machine does not lose the lease before the stall.
	const ttl = 2 * time.Second
	lease, err := lock.Acquire(ctx, lnc, "shop", lock.Options{TTL: ttl, Holder: "first apply"})
	if err != nil {
		t.Fatal(err)
	}

	// Count the writes the stalled apply sends after the takeover. The watcher's
	// subscription is synchronous: after a flush, every request routed before it is
	// queued there, so none is counted late or missed.
	watch := testsrv.Connect(t, s)
	sub, err := watch.SubscribeSync("$JS.API.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	// writes drains what the watcher has queued and counts the stream and consumer
	// writes among it.
	writes := func() int {
		// The apply's connection first: the server may answer a request before it
		// has passed it on to the watcher, but it handles one connection's messages
		// in order, so a flush of the sender's connection is the barrier.
		if err := c.NC.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := watch.Flush(); err != nil {
			t.Fatal(err)
		}
		queued, _, err := sub.Pending()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range queued {
			m, err := sub.NextMsg(time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if (strings.Contains(m.Subject, ".UPDATE.") || strings.Contains(m.Subject, ".CREATE.")) && !strings.Contains(m.Subject, "KV_") {
				n++
			}
		}
		return n
	}

	// The stall: as S3 starts, the apply stops while the lease goes unrefreshed; a
	// second apply takes the lock and updates S4.
	out := &lines{marker: "stream.S3: updating", onMark: func() {
		proxy.Cut()
		second, err := lock.Acquire(ctx, testsrv.Connect(t, s), "shop", lock.Options{TTL: ttl, Wait: 30 * time.Second, Holder: "second apply"})
		if err != nil {
			t.Errorf("the second apply did not take the lock over: %v", err)
			return
		}
		t.Cleanup(func() { _ = second.Release(ctx) })
		if _, err := c.UpdateStream(ctx, "S4", []byte(`{"name":"S4","subjects":["s4.>"],"max_msgs":7}`)); err != nil {
			t.Errorf("the second apply's update: %v", err)
		}
		writes() // everything up to and with the takeover
		proxy.Restore()
	}}
	res := mustRun(t, c, &plan.Plan{Changes: changes}, Options{Parallelism: 1, Progress: out, Fence: lease.Fence})

	if got := writes(); got != 0 {
		t.Errorf("the stalled apply sent %d write(s) after the takeover", got)
	}
	var lost *lock.LostError
	if !errors.As(res.Stopped, &lost) {
		t.Fatalf("Stopped = %v, want a *lock.LostError", res.Stopped)
	}
	for i, s := range res.Steps {
		want := StatusNotStarted
		if i < 2 {
			want = StatusDone
		}
		if s.Status != want {
			t.Errorf("%s: %s, want %s (%v)", s.Address, s.Status, want, s.Err)
		}
	}
	if got := streamInfo(t, c, "S4").Config.MaxMsgs; got != 7 {
		t.Errorf("S4 max_msgs = %d, want 7: the stalled apply overwrote the second apply's result", got)
	}
	if strings.Contains(out.String(), "stream.S3: updated") {
		t.Errorf("progress reports S3 updated after the lock was lost:\n%s", out)
	}
}
