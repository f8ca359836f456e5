package groups_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestSharedPoolGivesEveryWorkerWork runs the email group of examples/orders: 4
// workers with fetch_batch 50 on one durable with max_ack_pending 200 = 4 × 50. Every
// worker must get messages, and every message is handled exactly once.
func TestSharedPoolGivesEveryWorkerWork(t *testing.T) {
	const msgs = 1200
	e := setup(t, "", ordersExample)
	g := e.m.Groups["email"]
	w := g.Workers
	if w.Count*w.FetchBatch > e.m.Consumers[consumerKey("ORDERS", "email")].Config.MaxAckPending {
		t.Fatalf("the example no longer fits count × fetch_batch into max_ack_pending")
	}
	e.publish(created(msgs))

	var (
		mu      sync.Mutex
		seen    = map[string]int{}
		perWkr  = make([]atomic.Int64, w.Count)
		handled atomic.Int64
	)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range w.Count {
		wk := e.worker()
		wk.pull(ctx, t, &wg, "ORDERS", "email", w.FetchBatch, func(m jetstream.Msg) {
			mu.Lock()
			seen[string(m.Data())]++
			mu.Unlock()
			perWkr[i].Add(1)
			time.Sleep(200 * time.Microsecond) // an I/O-bound handler
			if err := m.Ack(); err != nil {
				t.Errorf("ack: %v", err)
			}
			if handled.Add(1) == msgs {
				cancel()
			}
		})
	}
	wg.Wait()
	if len(seen) != msgs {
		t.Fatalf("handled %d distinct messages, want %d", len(seen), msgs)
	}
	for subj, n := range seen {
		if n != 1 {
			t.Fatalf("%s handled %d times", subj, n)
		}
	}
	for i := range perWkr {
		if perWkr[i].Load() == 0 {
			t.Fatalf("worker %d got no work: %v", i, counts(perWkr))
		}
	}
	t.Logf("messages per worker: %v", counts(perWkr))
}

func counts(c []atomic.Int64) []int64 {
	out := make([]int64, len(c))
	for i := range c {
		out[i] = c[i].Load()
	}
	return out
}
