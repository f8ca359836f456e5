package status_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/status"
)

// TestHealthyReportsNothing: workers that pull and ack everything leave no finding,
// even with the strictest idle threshold, and a consumer with nothing to do is
// never flagged.
func TestHealthyReportsNothing(t *testing.T) {
	idle0 := status.DefaultThresholds()
	idle0.Idle = 0
	cases := []struct {
		name string
		src  string
		work func(e *env)
	}{
		{"idle pool with nothing to do", pool, func(e *env) {}},
		{"a partitioned group drained by workers", lanes, func(e *env) {
			e.publish(customers(40, "created")...)
			e.publish(customers(10, "work")...)
			e.drain(10)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, c.src)
			c.work(e)
			r := e.eventually(idle0, func(r *status.Report) bool {
				for _, c := range r.Consumers {
					if c.Backlog() > 0 {
						return false
					}
				}
				return true
			})
			if len(r.Findings) > 0 || !r.Healthy() {
				t.Fatalf("healthy topology reported:\n%s", text(t, r))
			}
			if len(r.Consumers) != len(e.desired.Consumers) {
				t.Errorf("%d consumer rows, want the %d declared", len(r.Consumers), len(e.desired.Consumers))
			}
			if !strings.Contains(text(t, r), "Healthy") {
				t.Errorf("text does not say healthy:\n%s", text(t, r))
			}
		})
	}
}

// TestDeletedOutOfBand: a declared consumer deleted behind natsplan's back is
// reported as missing, not a crash, and makes the report unhealthy.
func TestDeletedOutOfBand(t *testing.T) {
	e := setup(t, lanes)
	if err := e.api.DeleteConsumer(e.ctx, "P", "lanes-2"); err != nil {
		t.Fatal(err)
	}
	e.publish(customers(8, "created")...)
	r := e.report(status.DefaultThresholds())
	row := consumerRow(r, "P", "lanes-2")
	if row == nil || !row.Missing {
		t.Fatalf("row of the deleted lane: %+v, want missing", row)
	}
	if r.Healthy() {
		t.Error("a report with a missing consumer is healthy")
	}
	out := text(t, r)
	if !strings.Contains(out, "consumer.P.lanes-2 is declared but not on the server") {
		t.Errorf("text does not report the missing lane:\n%s", out)
	}
	var b bytes.Buffer
	if err := status.Prometheus(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `natsplan_consumer_up{stream="P",consumer="lanes-2",group="lanes",lane="2"} 0`) {
		t.Errorf("prometheus does not mark the lane down:\n%s", b.String())
	}
}

// TestUndeclaredConsumersAreRead: consumers nobody declared on a declared stream get a
// row, and the JSON document carries every consumer's counters with subjects
// unescaped.
func TestUndeclaredConsumersAreRead(t *testing.T) {
	e := setup(t, pool)
	if _, err := e.js.CreateConsumer(e.ctx, "Q", jetstream.ConsumerConfig{Durable: "audit", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "q.>"}); err != nil {
		t.Fatal(err)
	}
	e.publish("q.1", "q.2")
	r := e.eventually(status.DefaultThresholds(), func(r *status.Report) bool {
		row := consumerRow(r, "Q", "audit")
		return row != nil && row.NumPending == 2
	})
	row := consumerRow(r, "Q", "audit")
	if row == nil || row.Declared || row.NumPending != 2 {
		t.Fatalf("undeclared consumer row %+v, want undeclared with 2 pending", row)
	}
	var b bytes.Buffer
	if err := status.JSON(&b, r, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Consumers []map[string]any `json:"consumers"`
		Findings  []any            `json:"findings"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, b.String())
	}
	if len(doc.Consumers) != 2 || doc.Findings == nil {
		t.Errorf("document: %d consumers, findings %v", len(doc.Consumers), doc.Findings)
	}
	for _, key := range []string{"num_pending", "num_ack_pending", "max_ack_pending", "num_redelivered", "num_waiting"} {
		if _, ok := doc.Consumers[0][key]; !ok {
			t.Errorf("consumer lacks %s: %v", key, doc.Consumers[0])
		}
	}
}
