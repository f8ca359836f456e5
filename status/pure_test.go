package status_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/status"
)

// sample is a live model holding one consumer Q/pool with the given state.
func sample(at time.Time, st model.ConsumerState, filter string) *status.Sample {
	live := model.New()
	live.Streams["Q"] = &model.Stream{Name: "Q", Kind: model.KindStream, State: &model.StreamState{}}
	live.Consumers[model.ConsumerKey{Stream: "Q", Name: "pool"}] = &model.Consumer{Stream: "Q", Name: "pool",
		Config: server.ConsumerConfig{Durable: "pool", AckPolicy: server.AckExplicit, MaxAckPending: 100, FilterSubject: filter}, State: &st}
	return &status.Sample{Time: at, Live: live}
}

func declaredPool() *model.Model {
	d := model.New()
	d.Streams["Q"] = &model.Stream{Name: "Q", Kind: model.KindStream}
	d.Consumers[model.ConsumerKey{Stream: "Q", Name: "pool"}] = &model.Consumer{Stream: "Q", Name: "pool", Group: "consumer_group.pool"}
	d.Groups["pool"] = &model.ConsumerGroup{Name: "pool", Stream: "Q"}
	return d
}

// TestRates: rates and the drain estimate are computed from two samples; a consumer
// re-created between them has none.
func TestRates(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	created := t0.Add(-time.Hour)
	before := model.ConsumerState{Created: created, NumPending: 100, NumAckPending: 10,
		Delivered: model.SeqState{Consumer: 50}, AckFloor: model.SeqState{Consumer: 40}}
	after := model.ConsumerState{Created: created, NumPending: 60, NumAckPending: 10,
		Delivered: model.SeqState{Consumer: 100}, AckFloor: model.SeqState{Consumer: 85}}
	cases := []struct {
		name        string
		after       model.ConsumerState
		wantRates   *status.Rates
		wantDrain   float64 // seconds; -1 for none
		wantNoRates bool
	}{
		// 50 deliveries in 10s; the floor passed 45; in flight unchanged, so 5 were repeats.
		{"draining", after, &status.Rates{Delivered: 5, Acked: 4.5, Redelivered: 0.5, PendingGrowth: -4}, 17.5, false},
		{"growing", model.ConsumerState{Created: created, NumPending: 150, NumAckPending: 10,
			Delivered: model.SeqState{Consumer: 60}, AckFloor: model.SeqState{Consumer: 50}},
			&status.Rates{Delivered: 1, Acked: 1, Redelivered: 0, PendingGrowth: 5}, -1, false},
		{"re-created", model.ConsumerState{Created: t0, NumPending: 1}, nil, -1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := status.Evaluate(declaredPool(), sample(t0.Add(10*time.Second), c.after, ""), sample(t0, before, ""), status.DefaultThresholds())
			row := r.Consumers[0]
			if c.wantNoRates {
				if row.Rates != nil || r.Groups[0].Rates != nil {
					t.Fatalf("rates across a re-created consumer: %+v", row.Rates)
				}
				return
			}
			if row.Rates == nil || *row.Rates != *c.wantRates {
				t.Fatalf("rates %+v, want %+v", row.Rates, c.wantRates)
			}
			g := r.Groups[0]
			switch {
			case c.wantDrain < 0 && g.DrainSeconds != nil:
				t.Errorf("drain %v for a growing backlog", *g.DrainSeconds)
			case c.wantDrain >= 0 && (g.DrainSeconds == nil || *g.DrainSeconds != c.wantDrain):
				t.Errorf("drain %v, want %v", g.DrainSeconds, c.wantDrain)
			}
		})
	}
}

// TestOutputEscaping: subjects stay readable in JSON, and label values are escaped
// as the exposition format requires.
func TestOutputEscaping(t *testing.T) {
	d := declaredPool()
	d.Consumers[model.ConsumerKey{Stream: "Q", Name: "pool"}].Group = ""
	now := time.Now().UTC()
	cur := sample(now, model.ConsumerState{Created: now.Add(-time.Hour)}, "q.>")
	// Two live per-process durables beside the declared pool: NP506, whose counters
	// carry the filter subject.
	for _, n := range []string{`w-"1\x`, "w-2"} {
		cur.Live.Consumers[model.ConsumerKey{Stream: "Q", Name: n}] = &model.Consumer{Stream: "Q", Name: n,
			Config: server.ConsumerConfig{Durable: n, AckPolicy: server.AckExplicit, FilterSubject: "q.>"},
			State:  &model.ConsumerState{NumWaiting: 1, Created: now}}
	}
	r := status.Evaluate(d, cur, nil, status.DefaultThresholds())
	var j, p bytes.Buffer
	if err := status.JSON(&j, r, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"filter": "q.>"`) {
		t.Errorf("JSON escapes the subject or lacks it:\n%s", j.String())
	}
	if err := status.Prometheus(&p, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`natsplan_consumer_waiting{stream="Q",consumer="w-\"1\\x",group="",lane=""} 1`,
		`natsplan_condition{code="NP506"} 1`,
		`natsplan_condition{code="NP501"} 0`,
		`natsplan_finding{code="NP506",severity="error",address="consumer.Q.pool"} 1`,
	} {
		if !strings.Contains(p.String(), want) {
			t.Errorf("prometheus lacks %s:\n%s", want, p.String())
		}
	}
}

// TestFanOutNames: live consumers on the declared filter are fan-out when their names
// look per-process (one stem, or the declared name plus a suffix), not when another
// team's consumer happens to read the same subjects.
func TestFanOutNames(t *testing.T) {
	cases := []struct {
		extra []string
		want  bool
	}{
		{[]string{"worker-4711", "worker-4712"}, true},
		{[]string{"pool-7f3a"}, true},
		{[]string{"billing"}, false},
		{[]string{"billing", "audit"}, false},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.extra, ","), func(t *testing.T) {
			d := declaredPool()
			d.Consumers[model.ConsumerKey{Stream: "Q", Name: "pool"}].Group = ""
			now := time.Now().UTC()
			cur := sample(now, model.ConsumerState{Created: now}, "q.>")
			for _, n := range c.extra {
				cur.Live.Consumers[model.ConsumerKey{Stream: "Q", Name: n}] = &model.Consumer{Stream: "Q", Name: n,
					Config: server.ConsumerConfig{Durable: n, AckPolicy: server.AckExplicit, FilterSubject: "q.>"},
					State:  &model.ConsumerState{NumWaiting: 1, Created: now}}
			}
			r := status.Evaluate(d, cur, nil, status.DefaultThresholds())
			if got := len(r.Findings) == 1 && r.Findings[0].Code == status.CodeRuntimeFanOut; got != c.want {
				t.Fatalf("NP506 %v, want %v: %+v", got, c.want, r.Findings)
			}
		})
	}
}
