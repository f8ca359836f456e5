package plan_test

import (
	"encoding/json"
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

// lossState sets the state of live stream name: messages, subjects, and how old the
// oldest message is (0: the server gave no times).
func lossState(m *model.Model, name string, msgs uint64, subjects int, oldest time.Duration) *model.Model {
	st := m.Streams[name].State
	st.Msgs, st.Bytes, st.NumSubjects = msgs, msgs*100, subjects
	if oldest > 0 {
		st.ReadAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		st.FirstTime = st.ReadAt.Add(-oldest)
	}
	return m
}

// pending sets what a live consumer has not yet delivered and not yet had acknowledged.
func pending(m *model.Model, stream, name string, notDelivered uint64, unacked int) *model.Model {
	m.Consumers[model.ConsumerKey{Stream: stream, Name: name}].State = &model.ConsumerState{
		NumPending: notDelivered, NumAckPending: unacked}
	return m
}

func interest(c *server.StreamConfig)  { c.Retention = server.InterestPolicy }
func workqueue(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy }

func with(mods ...func(*server.StreamConfig)) func(*server.StreamConfig) {
	return func(c *server.StreamConfig) {
		for _, m := range mods {
			m(c)
		}
	}
}

// TestDataLossStreamLimits covers every stream limit that deletes stored messages when
// the server takes the update, each judged against the stored state: a loss is an NP302
// error --allow-data-loss accepts, and a change the state proves harmless is no finding.
func TestDataLossStreamLimits(t *testing.T) {
	a := func(mod func(*server.StreamConfig)) *model.Model {
		return desiredModel([]server.StreamConfig{stream("A", mod)}, nil)
	}
	live := func(mod func(*server.StreamConfig), msgs uint64, subjects int, oldest time.Duration) *model.Model {
		return lossState(liveOf(5, liveObj{cfg: stream("A", mod), meta: owned}), "A", msgs, subjects, oldest)
	}
	maxMsgs := func(n int64) func(*server.StreamConfig) { return func(c *server.StreamConfig) { c.MaxMsgs = n } }
	maxBytes := func(n int64) func(*server.StreamConfig) { return func(c *server.StreamConfig) { c.MaxBytes = n } }
	perSubject := func(n int64) func(*server.StreamConfig) { return func(c *server.StreamConfig) { c.MaxMsgsPer = n } }
	maxAge := func(d time.Duration) func(*server.StreamConfig) { return func(c *server.StreamConfig) { c.MaxAge = d } }
	discardNew := func(c *server.StreamConfig) { c.Discard = server.DiscardNew }
	for _, tc := range []struct {
		name    string
		desired *model.Model
		live    *model.Model
		path    string // the attribute of the NP302 finding; "" means no finding
		says    string
	}{
		{"max_msgs below what is stored", a(maxMsgs(4)), live(nil, 10, 10, time.Second), "max_msgs", "deletes the oldest 6"},
		{"max_msgs lowered, still above what is stored", a(maxMsgs(20)), live(maxMsgs(100), 10, 10, time.Second), "", ""},
		{"max_msgs below what is stored with discard new", a(with(maxMsgs(4), discardNew)), live(discardNew, 10, 10, time.Second), "", ""},
		{"discard new -> old over max_msgs", a(maxMsgs(4)), live(with(maxMsgs(4), discardNew), 10, 10, time.Second), "discard", "deletes the oldest 6"},
		{"max_bytes below what is stored", a(maxBytes(500)), live(nil, 10, 10, time.Second), "max_bytes", "until 500 bytes remain"},
		{"max_bytes above what is stored", a(maxBytes(5000)), live(nil, 10, 10, time.Second), "", ""},
		{"first max_msgs_per_subject, one message a subject", a(perSubject(1)), live(nil, 10, 10, time.Second), "", ""},
		{"first max_msgs_per_subject above every count", a(perSubject(10)), live(nil, 10, 2, time.Second), "", ""},
		{"max_msgs_per_subject certainly over", a(perSubject(1)), live(nil, 10, 2, time.Second), "max_msgs_per_subject", "at least 8"},
		{"max_msgs_per_subject possibly over", a(perSubject(3)), live(perSubject(5), 10, 4, time.Second), "max_msgs_per_subject", "may delete up to 6"},
		{"max_msgs_per_subject raised", a(perSubject(5)), live(perSubject(3), 10, 2, time.Second), "", ""},
		{"first max_age younger than the oldest", a(maxAge(time.Second)), live(nil, 50, 1, 10*time.Minute), "max_age", "older than 1s: it holds 50 and the oldest is 10m old"},
		{"first max_age within the margin", a(maxAge(time.Hour)), live(nil, 50, 1, 59*time.Minute+30*time.Second), "max_age", "within 30s"},
		{"first max_age well above the oldest", a(maxAge(time.Hour)), live(nil, 50, 1, 10*time.Second), "", ""},
		{"first max_age with no times", a(maxAge(time.Hour)), live(nil, 50, 1, 0), "max_age", "did not say how old"},
		{"max_age lowered below the oldest", a(maxAge(time.Hour)), live(maxAge(48*time.Hour), 5, 1, 2*time.Hour), "max_age", "at once its messages older than 1h"},
		{"max_age raised", a(maxAge(48 * time.Hour)), live(maxAge(time.Hour), 5, 1, 50*time.Minute), "", ""},
		{"max_msg_size never deletes what is stored", a(func(c *server.StreamConfig) { c.MaxMsgSize = 1 }), live(nil, 5, 1, time.Second), "", ""},
		{"limits -> interest without consumers", a(interest), live(nil, 5, 1, time.Second), "retention", "all 5 stored messages"},
		{"every limit on an empty stream", a(with(maxMsgs(1), maxBytes(1), perSubject(1), maxAge(time.Second), interest)), live(nil, 0, 0, 0), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, tc.desired, tc.live)
			var got []*finding.Finding
			for _, f := range p.Findings {
				if f.Code == finding.CodePurge {
					got = append(got, f)
				}
			}
			if tc.path == "" {
				if len(got) > 0 || len(p.Findings) > 0 {
					t.Fatalf("want no finding:\n%s", testkit.Describe(p))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one NP302:\n%s", testkit.Describe(p))
			}
			f := got[0]
			if f.Severity != finding.SevError || f.Overridable != finding.OverrideDataLoss || f.Address != "stream.A" ||
				!strings.Contains(f.Message, tc.says) {
				t.Errorf("finding %+v: want an error --allow-data-loss accepts, saying %q", f, tc.says)
			}
			if tc.path != "discard" && tc.path != "" && len(p.Changes) > 0 && !p.Changes[0].Destructive {
				t.Errorf("the change is not marked destructive")
			}
		})
	}
}

// TestDataLossKVHistory: a KV bucket's history is max_msgs_per_subject, and the finding
// says history.
func TestDataLossKVHistory(t *testing.T) {
	kv := func(history int64) server.StreamConfig {
		return stream("KV_cfg", func(c *server.StreamConfig) { c.Subjects = []string{"$KV.cfg.>"}; c.MaxMsgsPer = history })
	}
	desired := desiredModel([]server.StreamConfig{kv(1)}, nil)
	desired.Streams["KV_cfg"].Kind, desired.Streams["KV_cfg"].Bucket = model.KindKV, "cfg"
	l := lossState(liveOf(5, liveObj{cfg: kv(5), meta: owned, kind: model.KindKV}), "KV_cfg", 9, 3, time.Second)
	p := mustCompute(t, desired, l)
	if d := cmp.Diff([]string{"NP302 kv.cfg"}, codes(p)); d != "" {
		t.Fatalf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
	}
	if !strings.Contains(p.Findings[0].Message, "history 1") {
		t.Errorf("message %q does not say history", p.Findings[0].Message)
	}
}

// replaceable lets every declared consumer be replaced.
func replaceable(m *model.Model) *model.Model {
	for _, c := range m.Consumers {
		c.Lifecycle.ReplaceOnChange = true
	}
	return m
}

// TestDataLossConsumers: on an interest stream the server deletes what nobody wants any
// more when a consumer goes or narrows its filter; workqueue and limits streams keep it.
func TestDataLossConsumers(t *testing.T) {
	both := map[string]map[string]string{"c": owned, "d": owned}
	liveI := func(mod func(*server.StreamConfig), msgs uint64, cons ...server.ConsumerConfig) *model.Model {
		return lossState(liveOf(5, liveObj{cfg: stream("I", mod), meta: owned, cons: cons, cmeta: both}), "I", msgs, 1, time.Second)
	}
	declare := func(mod func(*server.StreamConfig), cons ...server.ConsumerConfig) *model.Model {
		return desiredModel([]server.StreamConfig{stream("I", mod)}, map[string][]server.ConsumerConfig{"I": cons})
	}
	filter := func(f string) func(*server.ConsumerConfig) {
		return func(c *server.ConsumerConfig) { c.FilterSubject = f }
	}
	for _, tc := range []struct {
		name     string
		desired  *model.Model
		live     *model.Model
		findings []string
		says     string
	}{
		{"deleting the last consumer", declare(interest), pending(liveI(interest, 10, pull("c", nil)), "I", "c", 0, 0),
			[]string{"NP302 consumer.I.c"}, "all its 10 messages"},
		{"deleting a consumer with messages only it may want", declare(interest, pull("d", nil)),
			pending(pending(liveI(interest, 10, pull("c", nil), pull("d", nil)), "I", "c", 3, 1), "I", "d", 0, 0),
			[]string{"NP302 consumer.I.c"}, "3 not yet delivered, 1 unacknowledged"},
		{"deleting a consumer that has acknowledged everything", declare(interest, pull("d", nil)),
			pending(pending(liveI(interest, 10, pull("c", nil), pull("d", nil)), "I", "c", 0, 0), "I", "d", 4, 0), nil, ""},
		{"deleting the last consumer of an empty stream", declare(interest), liveI(interest, 0, pull("c", nil)), nil, ""},
		{"deleting a workqueue consumer keeps the messages", declare(workqueue),
			pending(liveI(workqueue, 10, pull("c", nil)), "I", "c", 10, 0), nil, ""},
		{"deleting a limits consumer keeps the messages", declare(nil), pending(liveI(nil, 10, pull("c", nil)), "I", "c", 10, 0), nil, ""},
		{"narrowing a filter with messages pending", declare(interest, pull("c", filter("i.a"))),
			pending(liveI(interest, 10, pull("c", filter("i.>"))), "I", "c", 5, 0),
			[]string{"NP302 consumer.I.c"}, "narrowing the filter"},
		{"narrowing a filter with nothing pending", declare(interest, pull("c", filter("i.a")), pull("d", nil)),
			pending(pending(liveI(interest, 10, pull("c", filter("i.>")), pull("d", nil)), "I", "c", 0, 0), "I", "d", 10, 0), nil, ""},
		{"widening a filter", declare(interest, pull("c", filter("i.>"))),
			pending(liveI(interest, 10, pull("c", filter("i.a"))), "I", "c", 5, 0), nil, ""},
		{"replacing a consumer with messages only it may want", replaceable(declare(interest,
			pull("c", func(c *server.ConsumerConfig) { c.DeliverPolicy = server.DeliverNew }), pull("d", nil))),
			pending(pending(liveI(interest, 10, pull("c", nil), pull("d", nil)), "I", "c", 2, 0), "I", "d", 0, 0),
			[]string{"NP302 consumer.I.c"}, "replacing (delete, then create) consumer.I.c"},
		{"deleting the last consumer of a stream this plan moves to interest", declare(interest),
			pending(liveI(nil, 10, pull("c", nil)), "I", "c", 0, 0),
			[]string{"NP302 stream.I", "NP302 consumer.I.c"}, "deletes"},
		{"narrowing a workqueue filter", declare(workqueue, pull("c", filter("i.a"))),
			pending(liveI(workqueue, 10, pull("c", filter("i.>"))), "I", "c", 5, 0), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, tc.desired, tc.live)
			if d := cmp.Diff(tc.findings, codes(p)); d != "" {
				t.Fatalf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			for _, f := range p.Findings {
				if f.Severity != finding.SevError || f.Overridable != finding.OverrideDataLoss || !strings.Contains(f.Message, tc.says) {
					t.Errorf("finding %+v: want an error --allow-data-loss accepts, saying %q", f, tc.says)
				}
			}
		})
	}
}

// TestDataLossStreamDelete: a stream's delete lists every consumer that goes with it;
// those the project does not own are NP302, and protected ones keep the stream.
func TestDataLossStreamDelete(t *testing.T) {
	live := func(msgs uint64, cons []server.ConsumerConfig, cmeta map[string]map[string]string) *model.Model {
		return lossState(liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, cons: cons, cmeta: cmeta}), "A", msgs, 1, time.Second)
	}
	// The server reports an ephemeral consumer by name, without a durable name.
	withEphemeral := func(m *model.Model) *model.Model {
		m.Consumers[model.ConsumerKey{Stream: "A", Name: "eph"}] = &model.Consumer{Stream: "A", Name: "eph",
			Config: server.ConsumerConfig{Name: "eph", AckPolicy: server.AckExplicit}}
		return m
	}
	billing := map[string]string{model.MetaProject: "billing"}
	for _, tc := range []struct {
		name     string
		live     *model.Model
		changes  []string
		findings []string
		reason   map[string]string // address -> in the change's reason
	}{
		{"a foreign and an unmarked consumer go with the stream",
			live(0, []server.ConsumerConfig{pull("mine", nil), pull("theirs", nil), pull("loose", nil)},
				map[string]map[string]string{"mine": owned, "theirs": billing}),
			[]string{"delete consumer.A.loose", "delete consumer.A.mine", "delete consumer.A.theirs", "delete stream.A"},
			[]string{"NP302 consumer.A.loose", "NP302 consumer.A.theirs"},
			map[string]string{"consumer.A.theirs": `not owned by this project (owned by project "billing")`,
				"consumer.A.loose": "not owned by this project (not declared and not marked"}},
		{"messages and a foreign consumer",
			live(7, []server.ConsumerConfig{pull("theirs", nil)}, map[string]map[string]string{"theirs": billing}),
			[]string{"delete consumer.A.theirs", "delete stream.A"},
			[]string{"NP301 stream.A", "NP302 consumer.A.theirs"}, nil},
		{"ephemeral and server-made consumers are named in the stream's delete",
			withEphemeral(live(0, []server.ConsumerConfig{pull("JS_SRC_1", func(c *server.ConsumerConfig) { c.Sourcing = true })}, nil)),
			[]string{"delete stream.A"}, nil,
			map[string]string{"stream.A": "2 ephemeral or server-made consumer(s) go with it"}},
		{"a protected consumer keeps its stream",
			live(0, []server.ConsumerConfig{pull("keep", nil)},
				map[string]map[string]string{"keep": {model.MetaProject: "billing", model.MetaPreventDestroy: "true"}}),
			nil, []string{"NP405 stream.A"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, desiredModel(nil, nil), tc.live)
			if d := cmp.Diff(tc.changes, summary(p)); d != "" {
				t.Errorf("changes (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			if d := cmp.Diff(tc.findings, codes(p)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			for addr, want := range tc.reason {
				if ch := changeAt(p, addr); ch == nil || !strings.Contains(ch.Reason, want) {
					t.Errorf("%s: reason %+v lacks %q", addr, ch, want)
				}
			}
			for _, f := range p.Findings {
				if (f.Code == finding.CodeDataLoss || f.Code == finding.CodePurge) && f.Overridable != finding.OverrideDataLoss {
					t.Errorf("%s %s is not accepted by --allow-data-loss", f.Code, f.Address)
				}
			}
		})
	}
}

func changeAt(p *plan.Plan, addr string) *plan.Change {
	for _, ch := range p.Changes {
		if ch.Address == addr {
			return ch
		}
	}
	return nil
}

// TestDataLossAgainstNewState: the judgement of a plan against a later state (what
// apply does) finds what arrived since, says the plan did not show it, and refuses a
// consumer that would go with its stream but is not in the plan.
func TestDataLossAgainstNewState(t *testing.T) {
	atPlan := liveOf(5, liveObj{cfg: stream("A", nil), meta: owned})
	p := mustCompute(t, desiredModel(nil, nil), atPlan)
	if len(p.Findings) != 0 {
		t.Fatalf("an empty stream's delete has findings:\n%s", testkit.Describe(p))
	}
	now := lossState(liveOf(5, liveObj{cfg: stream("A", nil), meta: owned, cons: []server.ConsumerConfig{pull("late", nil)}}), "A", 10, 1, time.Second)
	got := plan.DataLoss(p, now)
	if d := cmp.Diff([]string{"NP301 stream.A", "NP302 consumer.A.late"}, codes(&plan.Plan{Findings: got})); d != "" {
		t.Fatalf("findings (-want +got):\n%s", d)
	}
	if f := got[0]; f.Overridable != finding.OverrideDataLoss || !strings.Contains(f.Message, "10 messages") ||
		!strings.Contains(f.Message, "the plan did not show it") {
		t.Errorf("NP301 %+v: want the count, that the plan did not show it, and the override", f)
	}
	if f := got[1]; f.Overridable != "" || !strings.Contains(f.Message, "not in the plan") {
		t.Errorf("NP302 %+v: want a refusal no flag overrides, saying the consumer is not in the plan", f)
	}
}

// TestMetadataValidated: natsplan.* metadata with a value natsplan does not accept, or a
// key it does not know, is an NP407 error naming the object, the key and the value, and
// the object is not deleted.
func TestMetadataValidated(t *testing.T) {
	meta := func(kv ...string) map[string]string {
		m := map[string]string{model.MetaProject: "shop"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		declared bool
		meta     map[string]string
		cmeta    map[string]string // of consumer c, when set
		changes  []string
		findings []string
		says     string
	}{
		{name: "prevent_destroy true", meta: meta(model.MetaPreventDestroy, "true"), findings: []string{"NP405 stream.A"}},
		{name: "prevent_destroy TRUE", meta: meta(model.MetaPreventDestroy, "TRUE"), findings: []string{"NP407 stream.A"},
			says: `natsplan.prevent_destroy = "TRUE" is not a value natsplan accepts`},
		{name: "prevent_destroy True", meta: meta(model.MetaPreventDestroy, "True"), findings: []string{"NP407 stream.A"}},
		{name: "prevent_destroy yes", meta: meta(model.MetaPreventDestroy, "yes"), findings: []string{"NP407 stream.A"}},
		{name: "prevent_destroy empty", meta: meta(model.MetaPreventDestroy, ""), findings: []string{"NP407 stream.A"}},
		{name: "prevent_destroy false", meta: meta(model.MetaPreventDestroy, "false"), changes: []string{"delete stream.A"}},
		{name: "a misspelt key", meta: meta("natsplan.prevent-destroy", "true"), findings: []string{"NP407 stream.A"},
			says: `natsplan.prevent-destroy = "true" is not a key natsplan knows`},
		{name: "a key in another case", meta: meta("natsplan.Prevent_Destroy", "true"), findings: []string{"NP407 stream.A"}},
		{name: "a role that is not the lock's", meta: meta(model.MetaRole, "Lock"), findings: []string{"NP407 stream.A"}},
		{name: "a consumer's TRUE keeps its stream", meta: meta(), cmeta: meta(model.MetaPreventDestroy, "TRUE"),
			findings: []string{"NP407 consumer.A.c"}, says: "nor its stream stream.A"},
		{name: "a bad group", meta: meta(), cmeta: meta(model.MetaGroup, "fulfilment"), findings: []string{"NP407 consumer.A.c"}},
		{name: "workers settings are natsplan's to write", meta: meta(), cmeta: meta("natsplan.workers.count", "4"),
			changes: []string{"delete consumer.A.c", "delete stream.A"}},
		{name: "declared with TRUE", declared: true, meta: meta(model.MetaPreventDestroy, "TRUE"),
			changes: []string{"update stream.A"}, findings: []string{"NP407 stream.A"}, says: "apply refuses to run until it is corrected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := liveObj{cfg: stream("A", nil), meta: tc.meta}
			if tc.cmeta != nil {
				obj.cons, obj.cmeta = []server.ConsumerConfig{pull("c", nil)}, map[string]map[string]string{"c": tc.cmeta}
			}
			desired := desiredModel(nil, nil)
			if tc.declared {
				desired = desiredModel([]server.StreamConfig{stream("A", nil)}, nil)
			}
			p := mustCompute(t, desired, liveOf(5, obj))
			if d := cmp.Diff(tc.changes, summary(p)); d != "" {
				t.Errorf("changes (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			if d := cmp.Diff(tc.findings, codes(p)); d != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
			}
			for _, f := range p.Findings {
				if f.Severity != finding.SevError || f.Overridable != "" || !strings.Contains(f.Message, tc.says) {
					t.Errorf("finding %+v: want an error no flag overrides, saying %q", f, tc.says)
				}
			}
		})
	}
}

// TestConsumersNeeded: apply lists the consumers of exactly the streams whose judgement
// depends on them.
func TestConsumersNeeded(t *testing.T) {
	limits := &model.Stream{Name: "L", Config: stream("L", nil)}
	interested := &model.Stream{Name: "I", Config: stream("I", interest)}
	toInterest, _ := json.Marshal(plan.NormalizeStream(stream("L", interest), nil))
	same, _ := json.Marshal(plan.NormalizeStream(stream("L", func(c *server.StreamConfig) { c.MaxMsgs = 5 }), nil))
	for _, tc := range []struct {
		name string
		ch   *plan.Change
		ls   *model.Stream
		want bool
	}{
		{"a deleted stream", &plan.Change{Kind: "stream", Name: "L", Action: plan.ActDelete}, limits, true},
		{"limits -> interest", &plan.Change{Kind: "stream", Name: "L", Action: plan.ActUpdate, After: toInterest,
			Fields: []*plan.FieldChange{{Path: "retention"}}}, limits, true},
		{"another update", &plan.Change{Kind: "stream", Name: "L", Action: plan.ActUpdate, After: same,
			Fields: []*plan.FieldChange{{Path: "max_msgs"}}}, limits, false},
		{"a consumer deleted on an interest stream", &plan.Change{Kind: "consumer", Name: "c", Stream: "I", Action: plan.ActDelete}, interested, true},
		{"a consumer deleted on a limits stream", &plan.Change{Kind: "consumer", Name: "c", Stream: "L", Action: plan.ActDelete}, limits, false},
		{"a consumer created on an interest stream", &plan.Change{Kind: "consumer", Name: "c", Stream: "I", Action: plan.ActCreate}, interested, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plan.ConsumersNeeded(&plan.Plan{Changes: []*plan.Change{tc.ch}})(tc.ls); got != tc.want {
				t.Errorf("ConsumersNeeded = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOfflineConsumerKeepsItsStream: a consumer the server lists but can not report may
// be anyone's; a stream is not deleted with it, at plan time or at apply time.
func TestOfflineConsumerKeepsItsStream(t *testing.T) {
	live := liveOf(5, liveObj{cfg: stream("A", nil), meta: owned})
	live.Offline = []model.Offline{{Address: "consumer.A.gone", Reason: "peer offline"}}
	p := mustCompute(t, desiredModel(nil, nil), live)
	if d := cmp.Diff([]string{"NP406 stream.A"}, codes(p)); d != "" || len(p.Changes) != 0 {
		t.Fatalf("findings (-want +got):\n%s\n%s", d, testkit.Describe(p))
	}

	p = mustCompute(t, desiredModel(nil, nil), liveOf(5, liveObj{cfg: stream("A", nil), meta: owned}))
	got := plan.DataLoss(p, live)
	if len(got) != 1 || got[0].Address != "consumer.A.gone" || got[0].Overridable != "" || !strings.Contains(got[0].Message, "offline") {
		t.Fatalf("at apply time: %+v, want one refusal no flag overrides naming the offline consumer", got)
	}
}
