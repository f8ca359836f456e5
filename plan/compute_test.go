package plan_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// liveOf builds a live model the way the server would report the given configs.
type liveObj struct {
	cfg   server.StreamConfig
	meta  map[string]string
	msgs  uint64
	kind  model.Kind
	cons  []server.ConsumerConfig
	cmeta map[string]map[string]string
}

func liveOf(level int, objs ...liveObj) *model.Model {
	m := model.New()
	m.Target = &model.Target{URL: "nats://x", Server: "s", APILevel: level}
	for _, o := range objs {
		cfg := o.cfg
		cfg.Metadata = o.meta
		cfg = plan.NormalizeStream(cfg, nil)
		kind := o.kind
		if kind == "" {
			kind = model.KindStream
		}
		m.Streams[cfg.Name] = &model.Stream{Name: cfg.Name, Kind: kind, Bucket: strings.TrimPrefix(strings.TrimPrefix(cfg.Name, "KV_"), "OBJ_"),
			Config: cfg, State: &model.StreamState{Msgs: o.msgs, Bytes: o.msgs * 10}}
		for _, c := range o.cons {
			c = plan.NormalizeConsumer(c, &cfg, m.Target)
			c.Metadata = o.cmeta[c.Durable] // after normalising, which strips _nats.* keys
			m.Consumers[model.ConsumerKey{Stream: cfg.Name, Name: c.Durable}] = &model.Consumer{Stream: cfg.Name, Name: c.Durable, Config: c}
		}
	}
	return m
}

var owned = map[string]string{model.MetaProject: "shop"}

func summary(p *plan.Plan) []string {
	var out []string
	for _, ch := range p.Changes {
		s := strings.TrimSpace(strings.Join([]string{string(ch.Action), ch.Address, ch.Phase}, " "))
		if ch.Blocked != "" {
			s += " (blocked)"
		}
		out = append(out, s)
	}
	return out
}

func codes(p *plan.Plan) []string {
	var out []string
	for _, f := range p.Findings {
		out = append(out, string(f.Code)+" "+f.Address)
	}
	return out
}

// TestOwnership covers create, update, no-op, adopt, foreign owner, delete,
// prevent_destroy, data loss and unmanaged objects.
func TestOwnership(t *testing.T) {
	for _, tc := range []struct {
		name      string
		desired   *model.Model
		live      *model.Model
		changes   []string
		findings  []string
		unmanaged []string
	}{
		{name: "create",
			desired: desiredModel([]server.StreamConfig{stream("A", nil)}, nil), live: liveOf(5),
			changes: []string{"create stream.A"}},
		{name: "no change when equal",
			desired: desiredModel([]server.StreamConfig{stream("A", nil)}, nil),
			live:    liveOf(5, liveObj{cfg: stream("A", nil), meta: owned})},
		{name: "update owned",
			desired: desiredModel([]server.StreamConfig{stream("A", func(c *server.StreamConfig) { c.MaxMsgs = 5 })}, nil),
			live:    liveOf(5, liveObj{cfg: stream("A", nil), meta: owned}),
			changes: []string{"update stream.A"}},
		{name: "adopt unmarked",
			desired: desiredModel([]server.StreamConfig{stream("A", nil)}, map[string][]server.ConsumerConfig{"A": {pull("c", nil)}}),
			live:    liveOf(5, liveObj{cfg: stream("A", nil), cons: []server.ConsumerConfig{pull("c", nil)}}),
			changes: []string{"adopt stream.A", "adopt consumer.A.c"}},
		{name: "owned by another project",
			desired:  desiredModel([]server.StreamConfig{stream("A", nil)}, nil),
			live:     liveOf(5, liveObj{cfg: stream("A", nil), meta: map[string]string{model.MetaProject: "billing"}}),
			findings: []string{"NP404 stream.A"}},
		{name: "delete owned empty",
			desired: desiredModel(nil, nil),
			live: liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, cons: []server.ConsumerConfig{pull("c", nil)},
				cmeta: map[string]map[string]string{"c": owned}}),
			changes: []string{"delete consumer.A.c", "delete stream.A"}},
		{name: "delete with messages is NP301",
			desired:  desiredModel(nil, nil),
			live:     liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, msgs: 3}),
			changes:  []string{"delete stream.A"},
			findings: []string{"NP301 stream.A"}},
		{name: "prevent_destroy survives the block",
			desired:  desiredModel(nil, nil),
			live:     liveOf(5, liveObj{cfg: stream("A", nil), meta: map[string]string{model.MetaProject: "shop", model.MetaPreventDestroy: "true"}}),
			findings: []string{"NP405 stream.A"}},
		{name: "unmanaged streams, consumers and buckets",
			desired: desiredModel([]server.StreamConfig{stream("A", nil)}, nil),
			live: liveOf(5,
				liveObj{cfg: stream("A", nil), meta: owned, cons: []server.ConsumerConfig{pull("theirs", nil)}},
				liveObj{cfg: stream("B", nil)},
				liveObj{cfg: stream("C", nil), meta: map[string]string{model.MetaProject: "billing"}},
				liveObj{cfg: stream("KV_cfg", nil), kind: model.KindKV, cons: []server.ConsumerConfig{pull("watch", nil)}},
			),
			unmanaged: []string{"stream.B", "stream.C", "kv.cfg", "consumer.A.theirs"}},
		{name: "system consumers are ignored",
			desired: desiredModel([]server.StreamConfig{stream("A", nil)}, nil),
			live: liveOf(5, liveObj{cfg: stream("A", nil), meta: owned,
				cons:  []server.ConsumerConfig{pull("JS_SRC_1", func(c *server.ConsumerConfig) { c.Sourcing = true }), pull("m", nil)},
				cmeta: map[string]map[string]string{"m": {"_nats.mirror.stream": "X"}}})},
		{name: "consumer immutable change without replace is NP303",
			desired: desiredModel([]server.StreamConfig{stream("A", nil)}, map[string][]server.ConsumerConfig{"A": {
				pull("c", func(c *server.ConsumerConfig) { c.AckPolicy = server.AckAll })}}),
			live: liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, cons: []server.ConsumerConfig{pull("c", nil)},
				cmeta: map[string]map[string]string{"c": owned}}),
			changes:  []string{"update consumer.A.c (blocked)"},
			findings: []string{"NP303 consumer.A.c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, tc.desired, tc.live)
			if d := cmp.Diff(tc.changes, summary(p)); d != "" {
				t.Errorf("changes (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			if d := cmp.Diff(tc.findings, codes(p)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			var un []string
			for _, o := range p.Unmanaged {
				un = append(un, o.Address)
			}
			if d := cmp.Diff(tc.unmanaged, un); d != "" {
				t.Errorf("unmanaged (-want +got):\n%s", d)
			}
		})
	}
}

// TestAdoptWritesMark checks the adopt change's metadata field and reason.
func TestAdoptWritesMark(t *testing.T) {
	p := mustCompute(t, desiredModel([]server.StreamConfig{stream("A", nil)}, nil), liveOf(5, liveObj{cfg: stream("A", nil)}))
	if len(p.Changes) != 1 || p.Summary.Adopt != 1 {
		t.Fatalf("want one adopt:\n%s", testkit.Describe(p))
	}
	ch := p.Changes[0]
	if len(ch.Fields) != 1 || ch.Fields[0].Path != "metadata" || ch.Reason == "" || ch.LiveHash == "" {
		t.Fatalf("adopt must write the mark and say why: %+v", ch)
	}
	if !strings.Contains(string(ch.After), `"natsplan.project":"shop"`) {
		t.Fatalf("After lacks the mark: %s", ch.After)
	}
}

// TestDeleteDataLossOverridable checks NP301 says which flag overrides it.
func TestDeleteDataLossOverridable(t *testing.T) {
	p := mustCompute(t, desiredModel(nil, nil), liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, msgs: 3}))
	if len(p.Findings) != 1 || p.Findings[0].Overridable != finding.OverrideDataLoss || !p.Changes[0].Destructive {
		t.Fatalf("want an overridable NP301 and a destructive delete:\n%s", testkit.Describe(p))
	}
}

// TestOrdering checks steps and dependencies.
func TestOrdering(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired *model.Model
		live    *model.Model
		want    []string // "step action address"
	}{
		{name: "streams before consumers, sources before mirrors",
			desired: desiredModel([]server.StreamConfig{
				stream("A", nil),
				stream("M", func(c *server.StreamConfig) { c.Subjects = nil; c.Mirror = &server.StreamSource{Name: "A"} }),
			}, map[string][]server.ConsumerConfig{"M": {pull("c", nil)}}),
			live: liveOf(5),
			want: []string{"1 create stream.A", "2 create stream.M", "3 create consumer.M.c"}},
		{name: "subject hand-over: the giver goes first",
			desired: desiredModel([]server.StreamConfig{
				stream("A", func(c *server.StreamConfig) { c.Subjects = []string{"a.>"} }),
				stream("B", func(c *server.StreamConfig) { c.Subjects = []string{"b.>", "x.>"} }),
			}, nil),
			live: liveOf(5, liveObj{cfg: stream("A", func(c *server.StreamConfig) { c.Subjects = []string{"a.>", "x.>"} }), meta: owned},
				liveObj{cfg: stream("B", func(c *server.StreamConfig) { c.Subjects = []string{"b.>"} }), meta: owned}),
			want: []string{"1 update stream.A", "2 update stream.B"}},
		{name: "a delete that frees subjects goes first",
			desired: desiredModel([]server.StreamConfig{stream("B", func(c *server.StreamConfig) { c.Subjects = []string{"x.>"} })}, nil),
			live:    liveOf(5, liveObj{cfg: stream("A", func(c *server.StreamConfig) { c.Subjects = []string{"x.>"} }), meta: owned}),
			want:    []string{"1 delete stream.A", "2 create stream.B"}},
		{name: "deletes last, consumers before their stream",
			desired: desiredModel([]server.StreamConfig{stream("N", nil)}, nil),
			live: liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, cons: []server.ConsumerConfig{pull("c", nil)},
				cmeta: map[string]map[string]string{"c": owned}}),
			want: []string{"1 create stream.N", "2 delete consumer.A.c", "3 delete stream.A"}},
		{name: "interest stream: add before narrow and delete",
			desired: desiredModel([]server.StreamConfig{stream("I", func(c *server.StreamConfig) { c.Retention = server.InterestPolicy })},
				map[string][]server.ConsumerConfig{"I": {
					pull("new", nil),
					pull("narrow", func(c *server.ConsumerConfig) { c.FilterSubject = "i.a" }),
				}}),
			live: liveOf(5, liveObj{cfg: stream("I", func(c *server.StreamConfig) { c.Retention = server.InterestPolicy }), meta: owned,
				cons:  []server.ConsumerConfig{pull("narrow", nil), pull("old", nil)},
				cmeta: map[string]map[string]string{"narrow": owned, "old": owned}}),
			want: []string{"1 create consumer.I.new", "2 update consumer.I.narrow", "3 delete consumer.I.old"}},
		{name: "workqueue stream: narrow before an overlapping add",
			desired: desiredModel([]server.StreamConfig{stream("W", func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy })},
				map[string][]server.ConsumerConfig{"W": {
					pull("b", func(c *server.ConsumerConfig) { c.FilterSubject = "w.b" }),
					pull("a", func(c *server.ConsumerConfig) { c.FilterSubject = "w.a" }),
				}}),
			live: liveOf(5, liveObj{cfg: stream("W", func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy }), meta: owned,
				cons:  []server.ConsumerConfig{pull("a", nil)},
				cmeta: map[string]map[string]string{"a": owned}}),
			want: []string{"1 update consumer.W.a", "2 create consumer.W.b"}},
		{name: "workqueue stream: a delete that frees a filter goes first",
			desired: desiredModel([]server.StreamConfig{stream("W", func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy })},
				map[string][]server.ConsumerConfig{"W": {pull("b", nil)}}),
			live: liveOf(5, liveObj{cfg: stream("W", func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy }), meta: owned,
				cons:  []server.ConsumerConfig{pull("a", nil)},
				cmeta: map[string]map[string]string{"a": owned}}),
			want: []string{"1 delete consumer.W.a", "2 create consumer.W.b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, tc.desired, tc.live)
			var got []string
			for _, ch := range p.Changes {
				got = append(got, strings.Join([]string{itoa(ch.Step), string(ch.Action), ch.Address}, " "))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("order (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestChecks covers NP302, NP401 and NP402.
func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired *model.Model
		live    *model.Model
		want    []string
	}{
		{name: "NP401 fields above the target's API level",
			desired: desiredModel([]server.StreamConfig{stream("A", func(c *server.StreamConfig) { c.AllowMsgTTL = true; c.AllowBatchPublish = true })},
				map[string][]server.ConsumerConfig{"A": {pull("c", func(c *server.ConsumerConfig) {
					c.PriorityGroups = []string{"g"}
					c.PriorityPolicy = server.PriorityOverflow
				})}}),
			live: liveOf(0),
			want: []string{"NP401 stream.A", "NP401 stream.A", "NP401 consumer.A.c", "NP401 consumer.A.c"}},
		{name: "NP401 none at level 5",
			desired: desiredModel([]server.StreamConfig{stream("A", func(c *server.StreamConfig) { c.AllowMsgTTL = true; c.AllowBatchPublish = true })}, nil),
			live:    liveOf(5)},
		{name: "NP402 declared streams overlap",
			desired: desiredModel([]server.StreamConfig{
				stream("A", func(c *server.StreamConfig) { c.Subjects = []string{"x.*"} }),
				stream("B", func(c *server.StreamConfig) { c.Subjects = []string{"x.a"} })}, nil),
			live: liveOf(5),
			want: []string{"NP402 stream.A"}},
		{name: "NP402 overlap with an unmanaged live stream",
			desired: desiredModel([]server.StreamConfig{stream("A", func(c *server.StreamConfig) { c.Subjects = []string{"x.>"} })}, nil),
			live:    liveOf(5, liveObj{cfg: stream("U", func(c *server.StreamConfig) { c.Subjects = []string{"x.y"} })}),
			want:    []string{"NP402 stream.A"}},
		{name: "NP302 lowering max_msgs below what is stored",
			desired: desiredModel([]server.StreamConfig{stream("A", func(c *server.StreamConfig) { c.MaxMsgs = 2 })}, nil),
			live:    liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, msgs: 10}),
			want:    []string{"NP302 stream.A"}},
		{name: "NP302 limits to interest with no consumers",
			desired: desiredModel([]server.StreamConfig{stream("A", func(c *server.StreamConfig) { c.Retention = server.InterestPolicy })}, nil),
			live:    liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, msgs: 10}),
			want:    []string{"NP302 stream.A"}},
		{name: "NP302 deleting the last interest consumer",
			desired: desiredModel([]server.StreamConfig{stream("I", func(c *server.StreamConfig) { c.Retention = server.InterestPolicy })}, nil),
			live: liveOf(5, liveObj{cfg: stream("I", func(c *server.StreamConfig) { c.Retention = server.InterestPolicy }), meta: owned,
				msgs: 10, cons: []server.ConsumerConfig{pull("c", nil)}, cmeta: map[string]map[string]string{"c": owned}}),
			want: []string{"NP302 consumer.I.c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, tc.desired, tc.live)
			if d := cmp.Diff(tc.want, codes(p)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			for _, f := range p.Findings {
				if f.Message == "" || f.Severity != finding.SevError {
					t.Errorf("bad finding %+v", f)
				}
			}
		})
	}
}

// TestComputeRejectsNil checks the only error Compute returns.
func TestComputeRejectsNil(t *testing.T) {
	if _, err := plan.Compute(nil, model.New(), plan.Options{}); err == nil {
		t.Fatal("want an error for a nil model")
	}
}

// TestHashIgnoresServerMetadata checks that Hash strips _nats.* keys and sorts maps.
func TestHashIgnoresServerMetadata(t *testing.T) {
	a := server.StreamConfig{Name: "A", Storage: server.FileStorage, Metadata: map[string]string{"x": "1", "_nats.ver": "2.15.3"}}
	b := server.StreamConfig{Name: "A", Storage: server.FileStorage, Metadata: map[string]string{"x": "1"}}
	if plan.Hash(a) != plan.Hash(b) || !strings.HasPrefix(plan.Hash(a), "sha256:") {
		t.Fatalf("hashes differ: %s %s", plan.Hash(a), plan.Hash(b))
	}
	b.Metadata["x"] = "2"
	if plan.Hash(a) == plan.Hash(b) {
		t.Fatal("hash ignores user metadata")
	}
}

// BenchmarkCompute plans a large topology against a server holding half of it.
func BenchmarkCompute(b *testing.B) {
	var streams []server.StreamConfig
	consumers := map[string][]server.ConsumerConfig{}
	var live []liveObj
	for i := range 2000 {
		name := "S" + strconv.Itoa(i)
		streams = append(streams, stream(name, func(c *server.StreamConfig) { c.MaxAge = time.Hour }))
		consumers[name] = []server.ConsumerConfig{pull("a", nil), pull("b", nil)}
		if i%2 == 0 {
			live = append(live, liveObj{cfg: stream(name, nil), meta: owned, cons: []server.ConsumerConfig{pull("a", nil)},
				cmeta: map[string]map[string]string{"a": owned}})
		}
	}
	d := desiredModel(streams, consumers)
	l := liveOf(5, live...)
	b.ResetTimer()
	for b.Loop() {
		if _, err := plan.Compute(d, l, plan.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
