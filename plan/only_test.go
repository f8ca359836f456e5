package plan_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// computeOnly computes the plan of desired against live with --only patterns.
func computeOnly(t *testing.T, desired, live *model.Model, only ...string) *plan.Plan {
	t.Helper()
	p, err := plan.Compute(desired, live, plan.Options{Version: "test", Only: only})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// steps lists the changes as "step action address [phase]".
func steps(p *plan.Plan) []string {
	var out []string
	for _, ch := range p.Changes {
		out = append(out, strings.TrimSpace(strings.Join([]string{itoa(ch.Step), string(ch.Action), ch.Address, ch.Phase}, " ")))
	}
	return out
}

// loadExample loads one of the repository's examples.
func loadExample(t *testing.T, name string) *model.Model {
	t.Helper()
	m, diags := schema.Load([]string{"../examples/" + name}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return m
}

// TestOnlySelection covers what --only keeps: the matched changes, what the ordering
// puts before them, group and mapping expansion, deletes only when matched, and the
// findings about what is kept.
func TestOnlySelection(t *testing.T) {
	sub := func(s ...string) func(*server.StreamConfig) {
		return func(c *server.StreamConfig) { c.Subjects = s }
	}
	twoStreams := desiredModel([]server.StreamConfig{stream("A", nil), stream("B", nil)},
		map[string][]server.ConsumerConfig{"A": {pull("c", nil)}, "B": {pull("d", nil)}})
	withOrphan := liveOf(5, liveObj{cfg: stream("X", nil), meta: owned, cons: []server.ConsumerConfig{pull("x1", nil)},
		cmeta: map[string]map[string]string{"x1": owned}})
	orders := loadExample(t, "orders")
	for _, tc := range []struct {
		name     string
		desired  *model.Model
		live     *model.Model
		only     []string
		changes  []string
		findings []string
		leftOut  int
	}{
		{name: "a consumer brings its stream's create",
			desired: twoStreams, live: liveOf(5), only: []string{"consumer.A.c"},
			changes: []string{"1 create stream.A", "2 create consumer.A.c"}, leftOut: 2},
		{name: "a stream alone leaves its consumers",
			desired: twoStreams, live: liveOf(5), only: []string{"stream.B"},
			changes: []string{"1 create stream.B"}, leftOut: 3},
		{name: "globs: * spans dots, ? is one character",
			desired: twoStreams, live: liveOf(5), only: []string{"consumer.*", "stream.?"},
			changes: []string{"1 create stream.A", "1 create stream.B", "2 create consumer.A.c", "2 create consumer.B.d"}},
		{name: "a consumer of an unchanged stream starts at step 1",
			desired: twoStreams, live: liveOf(5, liveObj{cfg: stream("A", nil), meta: owned}), only: []string{"consumer.A.c"},
			changes: []string{"1 create consumer.A.c"}, leftOut: 2},
		{name: "a mirror brings its origin",
			desired: desiredModel([]server.StreamConfig{stream("A", nil),
				stream("M", func(c *server.StreamConfig) { c.Subjects = nil; c.Mirror = &server.StreamSource{Name: "A"} }),
				stream("Z", nil)}, nil),
			live: liveOf(5), only: []string{"stream.M"},
			changes: []string{"1 create stream.A", "2 create stream.M"}, leftOut: 1},
		{name: "a delete is left out unless it matches",
			desired: twoStreams, live: withOrphan, only: []string{"stream.A"},
			changes: []string{"1 create stream.A"}, leftOut: 5},
		{name: "a matched stream delete takes its consumers' deletes along",
			desired: twoStreams, live: withOrphan, only: []string{"stream.X"},
			changes: []string{"1 delete consumer.X.x1", "2 delete stream.X"}, leftOut: 4},
		{name: "a matched consumer delete alone",
			desired: twoStreams, live: withOrphan, only: []string{"consumer.X.*"},
			changes: []string{"1 delete consumer.X.x1"}, leftOut: 5},
		{name: "a change that needs a delete left out is an error",
			desired: desiredModel([]server.StreamConfig{stream("B", sub("x.>"))}, nil),
			live:    liveOf(5, liveObj{cfg: stream("A", sub("x.>")), meta: owned}), only: []string{"stream.B"},
			changes: []string{"1 create stream.B"}, findings: []string{"NP402 stream.B"}, leftOut: 1},
		{name: "the delete selected too: no error",
			desired: desiredModel([]server.StreamConfig{stream("B", sub("x.>"))}, nil),
			live:    liveOf(5, liveObj{cfg: stream("A", sub("x.>")), meta: owned}), only: []string{"stream.*"},
			changes: []string{"1 delete stream.A", "2 create stream.B"}},
		{name: "workqueue: a consumer that needs a delete left out is an error",
			desired: desiredModel([]server.StreamConfig{stream("W", func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy })},
				map[string][]server.ConsumerConfig{"W": {pull("b", nil)}}),
			live: liveOf(5, liveObj{cfg: stream("W", func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy }), meta: owned,
				cons: []server.ConsumerConfig{pull("a", nil)}, cmeta: map[string]map[string]string{"a": owned}}),
			only:    []string{"consumer.W.b"},
			changes: []string{"1 create consumer.W.b"}, findings: []string{"NP203 consumer.W.b"}, leftOut: 1},
		{name: "an error on an object left out does not block",
			desired: desiredModel([]server.StreamConfig{stream("S1", func(c *server.StreamConfig) { c.Sealed = true }), stream("S2", nil)}, nil),
			live:    liveOf(5), only: []string{"stream.S2"},
			changes: []string{"1 create stream.S2"}, leftOut: 1},
		{name: "an error on the selected object stays",
			desired: desiredModel([]server.StreamConfig{stream("S1", func(c *server.StreamConfig) { c.Sealed = true }), stream("S2", nil)}, nil),
			live:    liveOf(5), only: []string{"stream.S1"},
			changes: []string{"1 create stream.S1"}, findings: []string{"NP303 stream.S1"}, leftOut: 1},
		{name: "an overlap reported on the other stream stays",
			desired: desiredModel([]server.StreamConfig{stream("A", sub("x.>")), stream("B", sub("x.a")), stream("C", nil)}, nil),
			live:    liveOf(5), only: []string{"stream.B"},
			changes: []string{"1 create stream.B"}, findings: []string{"NP402 stream.A"}, leftOut: 2},
		{name: "an overlap of two streams left out goes",
			desired: desiredModel([]server.StreamConfig{stream("A", sub("x.>")), stream("B", sub("x.a")), stream("C", nil)}, nil),
			live:    liveOf(5), only: []string{"stream.C"},
			changes: []string{"1 create stream.C"}, leftOut: 2},
		{name: "a matched object without a change keeps its findings",
			desired: desiredModel([]server.StreamConfig{stream("A", nil)}, nil),
			live: liveOf(5, liveObj{cfg: stream("A", nil), meta: map[string]string{model.MetaProject: "other"}},
				liveObj{cfg: stream("Q", nil), meta: owned}),
			only: []string{"stream.A"}, findings: []string{"NP404 stream.A"}, leftOut: 1},
		{name: "a consumer group brings its lanes, its stream and its dead-letter stream",
			desired: orders, live: liveOf(5), only: []string{"consumer_group.fulfilment"},
			changes: []string{"1 create stream.ORDERS", "1 create stream.ORDERS_DLQ",
				"2 create consumer.ORDERS.fulfilment-0", "2 create consumer.ORDERS.fulfilment-1",
				"2 create consumer.ORDERS.fulfilment-2", "2 create consumer.ORDERS.fulfilment-3",
				"2 create consumer.ORDERS.fulfilment-4", "2 create consumer.ORDERS.fulfilment-5",
				"2 create consumer.ORDERS.fulfilment-6", "2 create consumer.ORDERS.fulfilment-7"},
			leftOut: 1},
		{name: "one lane brings the dead-letter stream of its group",
			desired: orders, live: liveOf(5), only: []string{"consumer.ORDERS.fulfilment-3"},
			changes: []string{"1 create stream.ORDERS", "1 create stream.ORDERS_DLQ", "2 create consumer.ORDERS.fulfilment-3"},
			leftOut: 8},
		{name: "a subject mapping is its stream's change",
			desired: orders, live: liveOf(5), only: []string{"subject_mapping.orders_by_customer"},
			changes: []string{"1 create stream.ORDERS"}, leftOut: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := mustCompute(t, tc.desired, tc.live)
			p := computeOnly(t, tc.desired, tc.live, tc.only...)
			if d := cmp.Diff(tc.changes, steps(p)); d != "" {
				t.Errorf("changes (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			if d := cmp.Diff(tc.findings, codes(p)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			if p.LeftOut != tc.leftOut {
				t.Errorf("left out %d, want %d (whole plan:\n%s)", p.LeftOut, tc.leftOut, testkit.Describe(full))
			}
			if !slices.Equal(p.Only, tc.only) {
				t.Errorf("only = %v, want %v", p.Only, tc.only)
			}
			var n int
			for _, c := range []int{p.Summary.Create, p.Summary.Update, p.Summary.Delete, p.Summary.Replace, p.Summary.Adopt, p.Summary.Blocked} {
				n += c
			}
			var all int
			s := full.Summary
			for _, c := range []int{s.Create, s.Update, s.Delete, s.Replace, s.Adopt, s.Blocked} {
				all += c
			}
			if n+p.LeftOut != all {
				t.Errorf("summary counts %d kept and %d left out of %d", n, p.LeftOut, all)
			}
			for _, ch := range p.Changes {
				for _, dep := range ch.DependsOn {
					if !slices.ContainsFunc(p.Changes, func(o *plan.Change) bool { return o.Address == dep }) {
						t.Errorf("%s depends on %s, which the partial plan does not have", ch.Address, dep)
					}
				}
			}
		})
	}
}

// TestOnlyPartitionFindings: a finding about a group's partitions stays when the
// stream whose mapping it reads is selected, and goes when neither is.
func TestOnlyPartitionFindings(t *testing.T) {
	desired := loadModel(t, ordersHead+ordersMapping+`
stream "OTHER" {
  subjects = ["other.>"]
}
consumer_group "vip" {
  stream          = "ORDERS"
  mapping         = "by_customer"
  filter_subjects = ["2.orders.*.*"]
}`)
	live := liveOf(5)
	if p := computeOnly(t, desired, live, "stream.ORDERS"); !slices.Contains(codes(p), "NP202 consumer_group.vip") {
		t.Errorf("selecting the stream dropped the coverage finding:\n%s", testkit.Describe(p))
	}
	lanes := computeOnly(t, desired, live, "consumer.ORDERS.vip-?")
	if !slices.Contains(codes(lanes), "NP202 consumer_group.vip") || len(lanes.Changes) < 2 {
		t.Errorf("selecting the group's lanes dropped the coverage finding:\n%s", testkit.Describe(lanes))
	}
	if p := computeOnly(t, desired, live, "stream.OTHER"); len(p.Findings) != 0 || p.HasErrors() {
		t.Errorf("selecting another stream kept findings:\n%s", testkit.Describe(p))
	}
}

// TestOnlyUsage: a pattern that matches no object of the project is refused, with
// the close addresses.
func TestOnlyUsage(t *testing.T) {
	desired := desiredModel([]server.StreamConfig{stream("ORDERS", nil)}, map[string][]server.ConsumerConfig{"ORDERS": {pull("audit", nil)}})
	live := liveOf(5, liveObj{cfg: stream("GONE", nil), meta: owned}, liveObj{cfg: stream("FOREIGN", nil)})
	for _, tc := range []struct {
		pattern string
		want    []string // in the message
	}{
		{"ORDERS", []string{"did you mean stream.ORDERS?"}},
		{"stream.ORDRES", []string{"did you mean stream.ORDERS?"}},
		{"consumer.ORDERS.adit", []string{"did you mean consumer.ORDERS.audit?"}},
		{"stream.FOREIGN", []string{"matches no object", "(* matches any run of characters"}},
		{"kv.*", []string{"matches no object", "addresses look like consumer.ORDERS.audit, stream.GONE"}},
		{"", []string{"give an address such as"}},
	} {
		_, err := plan.Compute(desired, live, plan.Options{Only: []string{"stream.*", tc.pattern}})
		var oe *plan.OnlyError
		if !errors.As(err, &oe) {
			t.Fatalf("%q: err = %v, want an OnlyError", tc.pattern, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %q does not say %q", tc.pattern, err, w)
			}
		}
	}
	// A live object of the project is a valid address: its delete.
	p := computeOnly(t, desired, live, "stream.GONE")
	if d := cmp.Diff([]string{"1 delete stream.GONE"}, steps(p)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestOnlyUnchanged: without patterns the plan is the whole plan, and matching every
// change leaves nothing out.
func TestOnlyUnchanged(t *testing.T) {
	desired := desiredModel([]server.StreamConfig{stream("A", nil), stream("B", nil)}, nil)
	live := liveOf(5)
	whole := mustCompute(t, desired, live)
	all := computeOnly(t, desired, live, "*")
	if d := cmp.Diff(steps(whole), steps(all)); d != "" {
		t.Errorf("(-whole +only *):\n%s", d)
	}
	if all.LeftOut != 0 || whole.Only != nil || whole.LeftOut != 0 {
		t.Errorf("left out %d, whole plan only %v left out %d", all.LeftOut, whole.Only, whole.LeftOut)
	}
	if err := plan.Only(whole, desired, live, nil); err != nil || len(whole.Changes) != 2 {
		t.Errorf("no patterns changed the plan: %v", err)
	}
}

// BenchmarkOnly measures cutting a plan of 100 streams and 6,600 consumers (every one a
// create) down to one consumer group with --only, apart from computing the plan.
func BenchmarkOnly(b *testing.B) {
	desired, live := benchModel(100, 50)
	whole, err := plan.Compute(desired, live, plan.Options{})
	if err != nil {
		b.Fatal(err)
	}
	patterns := []string{"consumer_group.gS7", "consumer.S9*.svc1?"}
	var kept int
	for b.Loop() {
		b.StopTimer()
		p := *whole
		p.Changes = make([]*plan.Change, len(whole.Changes))
		for i, ch := range whole.Changes {
			c := *ch
			p.Changes[i] = &c
		}
		p.Findings = slices.Clone(whole.Findings)
		b.StartTimer()
		if err := plan.Only(&p, desired, live, patterns); err != nil {
			b.Fatal(err)
		}
		kept = len(p.Changes)
	}
	// gS7's 16 lanes and S7; svc10..svc19 of S9 and S90..S99 with their streams.
	if want := 17 + 11*10 + 11; kept != want {
		b.Fatalf("kept %d changes, want %d", kept, want)
	}
}
