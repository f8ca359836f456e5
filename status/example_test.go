package status_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/natsplan/natsplan/status"
)

// TestOrdersExample runs the scenario examples/orders/README.md describes: a hot
// customer holds one lane back while a worker holds an email message, then acking
// workers drain everything and status is healthy.
func TestOrdersExample(t *testing.T) {
	src, err := os.ReadFile("../examples/orders/orders.hcl")
	if err != nil {
		t.Fatal(err)
	}
	e := setup(t, string(src))
	for i := 1; i <= 8; i++ {
		e.publish(fmt.Sprintf("orders.c%d.created", i))
	}
	e.publish(repeat("orders.acme.created", 150)...)
	held := e.fetch("ORDERS", "email", 1, 1, time.Second)

	r := e.eventually(status.DefaultThresholds(), has(status.CodeHotLane))
	hot := codes(r)[status.CodeHotLane]
	if len(hot) != 1 || hot[0].Address != "consumer_group.fulfilment" {
		t.Fatalf("findings %s, want NP503 on consumer_group.fulfilment", text(t, r))
	}
	if row := consumerRow(r, "ORDERS", fmt.Sprint(hot[0].Counters["lane"])); row == nil || row.NumPending < 150 {
		t.Errorf("hot lane row %+v, want acme's 150 orders", row)
	}
	if row := consumerRow(r, "ORDERS", "email"); row.NumAckPending != 1 || row.MaxAckPending != 200 {
		t.Errorf("email row %+v, want 1/200 in flight", row)
	}

	if err := held[0].Ack(); err != nil {
		t.Fatal(err)
	}
	e.drain(50)
	r = e.eventually(status.DefaultThresholds(), func(r *status.Report) bool { return r.Healthy() })
	if !r.Healthy() {
		t.Fatalf("drained example not healthy:\n%s", text(t, r))
	}
}
