package groups_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// TestDeadLetters runs workers on the fulfilment lanes of examples/orders: one
// message is always rejected until it exhausts max_deliver, one is terminated. Both
// land in ORDERS_DLQ as advisories naming their stream sequence, and the original is
// read back from ORDERS by that sequence, as docs/dead-letter.md tells workers to.
func TestDeadLetters(t *testing.T) {
	e := setup(t, "", ordersExample)
	subjects := []string{"orders.c1.created", "orders.c2.poison", "orders.c3.bad", "orders.c4.created"}
	e.publish(subjects)

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var wg sync.WaitGroup
	wk := e.worker()
	for _, c := range e.m.ConsumersOf("ORDERS") {
		if c.Group != "consumer_group.fulfilment" {
			continue
		}
		wk.pull(ctx, t, &wg, "ORDERS", c.Name, 1, func(m jetstream.Msg) {
			switch {
			case strings.HasSuffix(string(m.Data()), ".poison"):
				_ = m.Nak()
			case strings.HasSuffix(string(m.Data()), ".bad"):
				_ = m.TermWithReason("unparseable order")
			default:
				_ = m.Ack()
			}
		})
	}
	dlq, err := e.js.Stream(e.ctx, "ORDERS_DLQ")
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := dlq.Info(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs >= 2 {
			break
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("ORDERS_DLQ holds %d advisories, want 2", info.State.Msgs)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	wg.Wait()

	orders, err := e.js.Stream(e.ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // advisory kind -> original subject
	for seq := uint64(1); seq <= 2; seq++ {
		adv, err := dlq.GetMsg(e.ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			Type       string `json:"type"`
			Stream     string `json:"stream"`
			Consumer   string `json:"consumer"`
			StreamSeq  uint64 `json:"stream_seq"`
			Deliveries uint64 `json:"deliveries"`
			Reason     string `json:"reason"`
		}
		if err := json.Unmarshal(adv.Data, &a); err != nil {
			t.Fatalf("advisory %s: %v", adv.Subject, err)
		}
		if a.Stream != "ORDERS" || !strings.HasSuffix(adv.Subject, ".ORDERS."+a.Consumer) || a.StreamSeq == 0 {
			t.Fatalf("advisory %s = %+v", adv.Subject, a)
		}
		orig, err := orders.GetMsg(e.ctx, a.StreamSeq)
		if err != nil {
			t.Fatalf("original of %s: %v", adv.Subject, err)
		}
		switch a.Type {
		case server.JSConsumerDeliveryExceededAdvisoryType:
			if a.Deliveries != 5 {
				t.Errorf("max-deliveries advisory after %d deliveries, want max_deliver 5", a.Deliveries)
			}
		case server.JSConsumerDeliveryTerminatedAdvisoryType:
			if a.Reason != "unparseable order" {
				t.Errorf("terminated advisory reason %q", a.Reason)
			}
		}
		got[a.Type] = string(orig.Data)
	}
	if got[server.JSConsumerDeliveryExceededAdvisoryType] != "orders.c2.poison" ||
		got[server.JSConsumerDeliveryTerminatedAdvisoryType] != "orders.c3.bad" {
		t.Fatalf("dead letters = %v", got)
	}
}
