package status_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/status"
)

// pool is a shared consumer at one message in flight (the seed's scenario).
const pool = `natsplan {
  project = "t"
}
stream "Q" {
  subjects = ["q.>"]
}
consumer "Q" "pool" {
  ack_policy      = "explicit"
  max_ack_pending = 1
  ack_wait        = "1s"
}
`

// lanes is a partitioned group: one lane per customer partition, and a shared group
// with dead letters on the same stream.
const lanes = `natsplan {
  project = "t"
}
stream "P" {
  subjects = ["p.>"]
}
subject_mapping "by_customer" {
  stream     = "P"
  source     = "p.*.*"
  partitions = 4
  key        = [1]
}
consumer_group "lanes" {
  stream   = "P"
  mapping  = "by_customer"
  ordering = "per_key"
}
consumer_group "work" {
  stream          = "P"
  filter_subjects = ["*.p.*.work"]
  consumer {
    max_deliver = 3
  }
  dead_letter { stream = "P_DLQ" }
}
`

func customers(n int, event string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("p.c%d.%s", i, event)
	}
	return out
}

func repeat(subject string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = subject
	}
	return out
}

// TestConditions reproduces each condition with real clients on a real server and
// checks the code, the address, where it points and that the report is not healthy.
func TestConditions(t *testing.T) {
	idle0 := status.DefaultThresholds()
	idle0.Idle = 0
	cases := []struct {
		name string
		src  string
		th   status.Thresholds
		act  func(e *env) []jetstream.Msg // messages held (unacked) until the check
		code finding.Code
		addr string
		decl string // the file:line the finding points at ("" when not checked)
		// until is what to wait for besides the finding: the server counts some
		// messages into num_pending a moment after it acked their publish.
		until func(*status.Report) bool
		check func(t *testing.T, f *status.Finding, r *status.Report)
	}{
		{
			name: "fetch without ack saturates the pool", src: pool, th: status.DefaultThresholds(),
			act: func(e *env) []jetstream.Msg {
				e.publish("q.1", "q.2", "q.3", "q.4", "q.5")
				return e.fetch("Q", "pool", 1, 1, time.Second)
			},
			code: status.CodePoolSaturated, addr: "consumer.Q.pool", decl: "status.hcl:9",
			check: func(t *testing.T, f *status.Finding, r *status.Report) {
				if f.Counters["num_pending"] != uint64(4) || f.Counters["num_ack_pending"] != 1 {
					t.Errorf("counters %v, want 4 pending and 1 in flight", f.Counters)
				}
				if len(codes(r)[status.CodeParkedPulls]) != 0 {
					t.Errorf("NP507 without a parked pull: %v", r.Findings)
				}
			},
		},
		{
			name: "fetch batch above the pool parks the request", src: pool, th: status.DefaultThresholds(),
			act: func(e *env) []jetstream.Msg {
				e.publish("q.1", "q.2", "q.3", "q.4", "q.5")
				return e.fetch("Q", "pool", 10, 1, 30*time.Second)
			},
			code: status.CodeParkedPulls, addr: "consumer.Q.pool",
			check: func(t *testing.T, f *status.Finding, r *status.Report) {
				if f.Counters["num_waiting"] != 1 || f.Severity != "error" {
					t.Errorf("finding %+v, want one parked request, an error", f)
				}
				if len(codes(r)[status.CodePoolSaturated]) != 0 {
					t.Errorf("NP501 besides NP507 on the same consumer: %v", r.Findings)
				}
			},
		},
		{
			name: "ack_wait expiry redelivers", src: pool, th: status.DefaultThresholds(),
			act: func(e *env) []jetstream.Msg {
				e.publish("q.1")
				e.fetch("Q", "pool", 1, 1, time.Second)
				time.Sleep(1500 * time.Millisecond) // past ack_wait = 1s
				return e.fetch("Q", "pool", 1, 1, 5*time.Second)
			},
			code: status.CodeRedeliveries, addr: "consumer.Q.pool", decl: "status.hcl:10",
		},
		{
			name: "nak redelivers", src: pool, th: status.DefaultThresholds(),
			act: func(e *env) []jetstream.Msg {
				e.publish("q.1")
				m := e.fetch("Q", "pool", 1, 1, time.Second)
				if err := m[0].Nak(); err != nil {
					e.t.Fatal(err)
				}
				return e.fetch("Q", "pool", 1, 1, 5*time.Second)
			},
			code: status.CodeRedeliveries, addr: "consumer.Q.pool",
		},
		{
			name: "messages wait and nobody pulls", src: pool, th: idle0,
			act: func(e *env) []jetstream.Msg {
				e.publish("q.1", "q.2", "q.3")
				return nil
			},
			code: status.CodeNobodyPulls, addr: "consumer.Q.pool",
		},
		{
			name: "no lane is pulled", src: lanes, th: idle0,
			act: func(e *env) []jetstream.Msg {
				e.publish(customers(8, "created")...)
				return nil
			},
			code: status.CodeNobodyPulls, addr: "consumer_group.lanes", decl: "status.hcl:13",
		},
		{
			name: "a hot key holds one lane back", src: lanes, th: status.DefaultThresholds(),
			act: func(e *env) []jetstream.Msg {
				e.publish(customers(16, "created")...)
				e.publish(repeat("p.c3.created", 150)...)
				return nil
			},
			code: status.CodeHotLane, addr: "consumer_group.lanes", decl: "status.hcl:15",
			until: func(r *status.Report) bool {
				var total uint64
				for _, c := range r.Consumers {
					total += c.NumPending
				}
				return total == 166
			},
			check: func(t *testing.T, f *status.Finding, r *status.Report) {
				hot := f.Counters["lane"]
				row := consumerRow(r, "P", fmt.Sprint(hot))
				if row == nil || row.NumPending < 150 {
					t.Fatalf("finding names lane %v, whose row is %+v: want the lane holding c3's 150 messages", hot, row)
				}
				if !strings.Contains(f.Message, fmt.Sprint(hot)) {
					t.Errorf("message does not name the lane: %s", f.Message)
				}
			},
		},
		{
			name: "terminated messages land in the dead-letter stream", src: lanes, th: status.DefaultThresholds(),
			act: func(e *env) []jetstream.Msg {
				e.publish("p.c1.work")
				m := e.fetch("P", "work", 1, 1, time.Second)
				if err := m[0].Term(); err != nil {
					e.t.Fatal(err)
				}
				return nil
			},
			code: status.CodeDeadLetters, addr: "stream.P_DLQ", decl: "status.hcl:24",
			check: func(t *testing.T, f *status.Finding, r *status.Report) {
				if f.Counters["messages"] != uint64(1) || f.Counters["newest"] == nil {
					t.Errorf("counters %v, want 1 message and the newest's time", f.Counters)
				}
			},
		},
		{
			name: "per-process durables fan out", src: pool, th: status.DefaultThresholds(),
			act: func(e *env) []jetstream.Msg {
				for _, name := range []string{"worker-4711", "worker-4712"} {
					c, err := e.js.CreateConsumer(e.ctx, "Q", jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy})
					if err != nil {
						e.t.Fatal(err)
					}
					if _, err := c.Fetch(1, jetstream.FetchMaxWait(30*time.Second)); err != nil {
						e.t.Fatal(err)
					}
				}
				return nil
			},
			code: status.CodeRuntimeFanOut, addr: "consumer.Q.pool",
			until: func(r *status.Report) bool {
				a, b := consumerRow(r, "Q", "worker-4711"), consumerRow(r, "Q", "worker-4712")
				return a != nil && b != nil && a.NumWaiting > 0 && b.NumWaiting > 0
			},
			check: func(t *testing.T, f *status.Finding, r *status.Report) {
				if got := fmt.Sprint(f.Counters["consumers"]); got != "[worker-4711 worker-4712]" {
					t.Errorf("consumers %s, want both per-process durables", got)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, c.src)
			held := c.act(e)
			r := e.eventually(c.th, func(r *status.Report) bool {
				return has(c.code)(r) && (c.until == nil || c.until(r))
			})
			fs := codes(r)[c.code]
			if len(fs) != 1 {
				t.Fatalf("%d %s findings, want 1; findings: %s", len(fs), c.code, text(t, r))
			}
			f := fs[0]
			if f.Address != c.addr {
				t.Errorf("address %s, want %s", f.Address, c.addr)
			}
			if c.decl != "" && !strings.Contains(f.Range, "/"+c.decl+":") {
				t.Errorf("range %q, want %s", f.Range, c.decl)
			}
			if f.Message == "" || f.Fix == "" || len(f.Counters) == 0 {
				t.Errorf("finding lacks message, fix or counters: %+v", f)
			}
			if r.Healthy() {
				t.Error("report with a finding is healthy")
			}
			if c.check != nil {
				c.check(t, f, r)
			}
			out := text(t, r)
			if !strings.Contains(out, string(c.code)) || !strings.Contains(out, "fix: ") || !strings.Contains(out, "counters: ") {
				t.Errorf("text lacks the finding:\n%s", out)
			}
			_ = held
		})
	}
}

func text(t *testing.T, r *status.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := status.Text(&b, r, false); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
