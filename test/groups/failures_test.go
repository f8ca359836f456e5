package groups_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
)

// requireFinding fails unless the invariants report code on the env's model.
func (e *env) requireFinding(code finding.Code) {
	e.t.Helper()
	for _, f := range plan.CheckInvariants(e.m, nil) {
		if f.Code == code {
			return
		}
	}
	e.t.Fatalf("the config does not trigger %s", code)
}

// TestFanOutProcessesEveryMessageOncePerWorker forces the NP103 config onto the server:
// each worker process pulls from its own durable, and each gets every message.
func TestFanOutProcessesEveryMessageOncePerWorker(t *testing.T) {
	const msgs = 20
	e := setup(t, "", "../../examples/invalid/NP103-per-process-durables.hcl")
	e.requireFinding(finding.CodeFanOut)
	durables := []string{"worker-1", "worker-2"}
	e.publish(created(msgs))

	var (
		mu      sync.Mutex
		seen    = map[string]int{}
		handled atomic.Int64
	)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, d := range durables {
		e.worker().pull(ctx, t, &wg, "ORDERS", d, 10, func(m jetstream.Msg) {
			mu.Lock()
			seen[string(m.Data())]++
			mu.Unlock()
			_ = m.Ack()
			if handled.Add(1) == msgs*int64(len(durables)) {
				cancel()
			}
		})
	}
	wg.Wait()
	if handled.Load() != msgs*int64(len(durables)) {
		t.Fatalf("handled %d, want %d: every worker gets every message", handled.Load(), msgs*len(durables))
	}
	for subj, n := range seen {
		if n != len(durables) {
			t.Fatalf("%s handled %d times, want once per worker (%d)", subj, n, len(durables))
		}
	}
}

// TestFetchAboveAckPendingWaitsForExpiry forces the NP101 config onto the server: a
// fetch of 50 from a consumer with max_ack_pending 10 gets 10 messages, then the
// request is held until it expires and ends with 408 Request Timeout.
func TestFetchAboveAckPendingWaitsForExpiry(t *testing.T) {
	e := setup(t, "", "../../examples/invalid/NP101-fetch-batch-above-ack-pending.hcl")
	e.requireFinding(finding.CodeFetchAboveAckPending)
	g := e.m.Groups["email"]
	maxp := e.m.Consumers[consumerKey("ORDERS", "email")].Config.MaxAckPending
	e.publish(created(3 * maxp))

	inbox := nats.NewInbox()
	sub, err := e.nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"batch": g.Workers.FetchBatch, "expires": (500 * time.Millisecond).Nanoseconds()})
	if err := e.nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.ORDERS.email", inbox, req); err != nil {
		t.Fatal(err)
	}
	got := 0
	for {
		m, err := sub.NextMsgWithContext(e.ctx)
		if err != nil {
			t.Fatalf("after %d messages: %v", got, err)
		}
		if status := m.Header.Get("Status"); status != "" {
			if status != "408" || got != maxp {
				t.Fatalf("status %s %q after %d messages, want 408 after %d", status, m.Header.Get("Description"), got, maxp)
			}
			if pending := m.Header.Get("Nats-Pending-Messages"); pending != fmt.Sprint(g.Workers.FetchBatch-maxp) {
				t.Fatalf("Nats-Pending-Messages = %s, want %d undelivered of the batch", pending, g.Workers.FetchBatch-maxp)
			}
			return
		}
		got++
	}
}
