package groups_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const ordersExample = "../../examples/orders"

// TestPerKeyOrder runs 4 worker processes against every lane of the fulfilment group
// of examples/orders: 50 customers × 20 events each, handlers with random delays.
// Every customer's events must be handled in the order they were published, and
// several lanes must have been busy at the same time.
func TestPerKeyOrder(t *testing.T) {
	const keys, events, workers = 50, 20, 4
	e := setup(t, "", ordersExample)
	g := e.m.Groups["fulfilment"]
	var lanes []string
	for _, c := range e.m.ConsumersOf("ORDERS") {
		if c.Group == g.Address() {
			lanes = append(lanes, c.Name)
		}
	}
	if len(lanes) != 8 {
		t.Fatalf("fulfilment has %d lanes, want 8", len(lanes))
	}
	var subjects []string
	for ev := range events {
		for k := range keys {
			subjects = append(subjects, fmt.Sprintf("orders.c%d.e%d", k, ev))
		}
	}
	e.publish(subjects)

	var (
		mu       sync.Mutex
		seen     = map[string][]int{} // customer -> event numbers in handling order
		handled  atomic.Int64
		inFlight atomic.Int64
		maxLanes atomic.Int64
		busy     sync.Map // lane -> *atomic.Int64 messages in flight
	)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		wk := e.worker()
		rng := rand.New(rand.NewPCG(uint64(w), 7))
		var rngMu sync.Mutex
		for _, lane := range lanes {
			counter, _ := busy.LoadOrStore(lane, new(atomic.Int64))
			wk.pull(ctx, t, &wg, "ORDERS", lane, g.Workers.FetchBatch, func(m jetstream.Msg) {
				if counter.(*atomic.Int64).Add(1) > 1 {
					t.Errorf("lane %s has two messages in flight", lane)
				}
				for n := inFlight.Add(1); ; {
					if old := maxLanes.Load(); n <= old || maxLanes.CompareAndSwap(old, n) {
						break
					}
				}
				parts := strings.Split(string(m.Data()), ".")
				ev, _ := strconv.Atoi(strings.TrimPrefix(parts[2], "e"))
				mu.Lock()
				seen[parts[1]] = append(seen[parts[1]], ev)
				mu.Unlock()
				rngMu.Lock()
				d := time.Duration(rng.IntN(2000)) * time.Microsecond
				rngMu.Unlock()
				time.Sleep(d)
				inFlight.Add(-1)
				counter.(*atomic.Int64).Add(-1)
				if err := m.Ack(); err != nil {
					t.Errorf("ack: %v", err)
				}
				if handled.Add(1) == keys*events {
					cancel()
				}
			})
		}
	}
	wg.Wait()
	if got := handled.Load(); got != keys*events {
		t.Fatalf("handled %d of %d events", got, keys*events)
	}
	for k := range keys {
		key := fmt.Sprintf("c%d", k)
		got := seen[key]
		if len(got) != events {
			t.Fatalf("customer %s: handled %d events, want %d", key, len(got), events)
		}
		for i, ev := range got {
			if ev != i {
				t.Fatalf("customer %s: events handled in the order %v", key, got)
			}
		}
	}
	if maxLanes.Load() < 2 {
		t.Fatalf("at most %d message in flight at once: the lanes did not run in parallel", maxLanes.Load())
	}
	t.Logf("at most %d lanes in flight at once", maxLanes.Load())
}
