package plan_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

func hclRange(file string, line int) hcl.Range {
	return hcl.Range{Filename: file, Start: hcl.Pos{Line: line, Column: 1}, End: hcl.Pos{Line: line, Column: 10}}
}

// fidelityStreams together set every stream field to a non-default value; ALL is the
// all-defaults config.
func fidelityStreams() []server.StreamConfig {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	return []server.StreamConfig{
		{Name: "ALL", Placement: &server.Placement{}},
		{Name: "LIM", Description: "limits", Subjects: []string{"lim.b.*", "lim.a.>"}, Retention: server.LimitsPolicy,
			MaxConsumers: 10, MaxMsgs: 1000, MaxBytes: 1 << 20, MaxAge: time.Hour, MaxMsgsPer: 5, MaxMsgSize: 1024,
			Discard: server.DiscardNew, DiscardNewPer: true, Storage: server.MemoryStorage, Replicas: 1,
			Duplicates: 30 * time.Second, AllowDirect: true, AllowMsgTTL: true, AllowRollup: true, DenyDelete: true,
			ConsumerLimits:   server.StreamConsumerLimits{InactiveThreshold: time.Hour, MaxAckPending: 100},
			SubjectTransform: &server.SubjectTransformConfig{Source: "lim.a.>", Destination: "limt.a.>"},
			RePublish:        &server.RePublish{Destination: "rp.>", HeadersOnly: true},
			Metadata:         map[string]string{"team": "orders"}},
		{Name: "TTL", Subjects: []string{"ttl.>"}, Retention: server.InterestPolicy, Compression: server.S2Compression,
			FirstSeq: 100, MaxAge: 30 * time.Second, SubjectDeleteMarkerTTL: 5 * time.Second, NoAck: true},
		{Name: "WQ", Subjects: []string{"wq.>"}, Retention: server.WorkQueuePolicy, AllowMsgSchedules: true,
			PersistMode: server.AsyncPersistMode, AllowBatchPublish: true},
		{Name: "CNT", Subjects: []string{"cnt.>"}, AllowMsgCounter: true, AllowAtomicPublish: true, DenyPurge: true,
			MaxAge: time.Second},
		{Name: "MIR", Mirror: &server.StreamSource{Name: "LIM", OptStartSeq: 2, FilterSubject: "lim.a.>"}},
		{Name: "SRC", Sources: []*server.StreamSource{
			{Name: "LIM", SubjectTransforms: []server.SubjectTransformConfig{{Source: "lim.b.*", Destination: "src.b.{{wildcard(1)}}"}}},
			{Name: "TTL", OptStartTime: &start, FilterSubject: "ttl.a"},
		}},
	}
}

// fidelityConsumers together set every consumer field to a non-default value.
func fidelityConsumers() map[string][]server.ConsumerConfig {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	pause := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	return map[string][]server.ConsumerConfig{
		"ALL": {
			{Durable: "defaults"},
			{Durable: "explicit", AckPolicy: server.AckExplicit},
			{Durable: "pull", Description: "every pull field", DeliverPolicy: server.DeliverByStartSequence,
				OptStartSeq: 5, AckPolicy: server.AckExplicit, MaxDeliver: 5,
				BackOff: []time.Duration{10 * time.Second, 20 * time.Second}, FilterSubject: "ALL",
				ReplayPolicy: server.ReplayOriginal, SampleFrequency: "50%", MaxWaiting: 10, MaxAckPending: 20,
				HeadersOnly: true, MaxRequestBatch: 10, MaxRequestExpires: 5 * time.Second, MaxRequestMaxBytes: 1024,
				InactiveThreshold: time.Hour, Replicas: 1, MemoryStorage: true, Metadata: map[string]string{"a": "b"}},
			{Durable: "push", DeliverSubject: "push.p", DeliverPolicy: server.DeliverByStartTime, OptStartTime: &start,
				AckPolicy: server.AckNone, RateLimit: 1_000_000, Heartbeat: 5 * time.Second, FlowControl: true},
			{Durable: "group", DeliverSubject: "push.g", DeliverGroup: "g", DeliverPolicy: server.DeliverLast,
				AckPolicy: server.AckAll, AckWait: 45 * time.Second},
			{Durable: "pinned", DeliverPolicy: server.DeliverNew, AckPolicy: server.AckExplicit,
				PriorityGroups: []string{"PCG"}, PriorityPolicy: server.PriorityPinnedClient, PauseUntil: &pause},
			{Durable: "prio", DeliverPolicy: server.DeliverLastPerSubject, AckPolicy: server.AckExplicit, FilterSubject: "ALL",
				PriorityGroups: []string{"a"}, PriorityPolicy: server.PriorityPrioritized, PinnedTTL: time.Minute},
			{Durable: "flow", DeliverSubject: "push.f", AckPolicy: server.AckFlowControl},
		},
		"LIM": {
			{Durable: "limited", AckPolicy: server.AckExplicit, FilterSubjects: []string{"limt.a.x", "lim.b.*"}},
		},
		"WQ": {
			{Durable: "worker", AckPolicy: server.AckExplicit, Replicas: 1},
		},
	}
}

// TestNormaliseFidelity proves normalisation against the real server, both ways: a
// config created by someone else with the server's own defaults, and the plan's After
// applied in pedantic mode, both plan as no change.
func TestNormaliseFidelity(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(nc *nats.Conn, d *model.Model) error
	}{
		{"server defaults", func(nc *nats.Conn, d *model.Model) error {
			for _, n := range []string{"ALL", "LIM", "TTL", "WQ", "CNT", "MIR", "SRC"} {
				cfg := d.Streams[n].Config
				cfg.Metadata = withProject(cfg.Metadata)
				if err := createStreamRaw(nc, cfg, false); err != nil {
					return err
				}
			}
			for _, k := range d.ConsumerKeys() {
				cfg := d.Consumers[k].Config
				cfg.Metadata = withProject(cfg.Metadata)
				if err := consumerRaw(nc, k.Stream, mustJSON(cfg), "create", false); err != nil {
					return err
				}
			}
			return nil
		}},
		{"pedantic after", func(nc *nats.Conn, d *model.Model) error {
			p := mustCompute(t, d, observeModel(t, nc, model.AccountLimits{}))
			if n := len(p.Changes); n != len(d.Streams)+len(d.Consumers) {
				t.Fatalf("want a create for every object, got %d changes:\n%s", n, testkit.Describe(p))
			}
			return applyPlan(t, nc, p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			nc := testsrv.Connect(t, s)
			d := desiredModel(fidelityStreams(), fidelityConsumers())
			if err := tc.setup(nc, d); err != nil {
				t.Fatal(err)
			}
			live := observeModel(t, nc, model.AccountLimits{})
			// The durable consumers that sourcing streams make on their origins appear
			// when the server gets to them: count only the declared kind.
			consumers := 0
			for _, c := range live.Consumers {
				if !c.Config.Sourcing {
					consumers++
				}
			}
			if len(live.Streams) != len(d.Streams) || consumers != len(d.Consumers) {
				t.Fatalf("server holds %d streams, %d consumers; want %d, %d",
					len(live.Streams), consumers, len(d.Streams), len(d.Consumers))
			}
			p := mustCompute(t, d, live)
			if p.HasChanges() || len(finding.Errors(p.Findings)) > 0 {
				t.Fatalf("plan after create is not empty:\n%s", testkit.Describe(p))
			}
		})
	}
}

func withProject(md map[string]string) map[string]string {
	out := map[string]string{model.MetaProject: "shop"}
	for k, v := range md {
		out[k] = v
	}
	return out
}

// TestNormaliseServerLimits proves that max_ack_pending and max_batch defaults follow
// the server's limits.
func TestNormaliseServerLimits(t *testing.T) {
	s := testsrv.Start(t, func(o *embedded.Options) { o.MaxAckPending = 50; o.MaxRequestBatch = 25 })
	nc := testsrv.Connect(t, s)
	limits := model.AccountLimits{MaxAckPending: 50, MaxRequestBatch: 25}
	d := desiredModel([]server.StreamConfig{{Name: "S"}},
		map[string][]server.ConsumerConfig{"S": {{Durable: "c", AckPolicy: server.AckExplicit}, {Durable: "n"}}})
	for _, k := range d.ConsumerKeys() {
		cfg := d.Consumers[k].Config
		cfg.Metadata = withProject(nil)
		if k.Name == "c" {
			if err := createStreamRaw(nc, server.StreamConfig{Name: "S", Metadata: withProject(nil)}, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := consumerRaw(nc, "S", mustJSON(cfg), "create", false); err != nil {
			t.Fatal(err)
		}
	}
	live := observeModel(t, nc, limits)
	if got := live.Consumers[model.ConsumerKey{Stream: "S", Name: "c"}].Config; got.MaxAckPending != 50 || got.MaxRequestBatch != 25 {
		t.Fatalf("server defaults: max_ack_pending %d max_batch %d", got.MaxAckPending, got.MaxRequestBatch)
	}
	want := plan.NormalizeConsumer(d.Consumers[model.ConsumerKey{Stream: "S", Name: "c"}].Config,
		&live.Streams["S"].Config, live.Target)
	if want.MaxAckPending != 50 || want.MaxRequestBatch != 25 {
		t.Fatalf("normalised: max_ack_pending %d max_batch %d", want.MaxAckPending, want.MaxRequestBatch)
	}
	if p := mustCompute(t, d, live); p.HasChanges() {
		t.Fatalf("plan not empty:\n%s", testkit.Describe(p))
	}
}

// TestFidelityCoversEveryField fails when the server gains a config field the
// fidelity tables do not set, so a new field can not slip past normalisation.
func TestFidelityCoversEveryField(t *testing.T) {
	for _, tc := range []struct {
		typ    reflect.Type
		values []reflect.Value
		exempt map[string]string
	}{
		{reflect.TypeOf(server.StreamConfig{}), valuesOf(fidelityStreams()), map[string]string{
			"MirrorDirect": "inherited from the origin, never set by users (TestRulesStream covers it)",
			"Sealed":       "refused at creation (TestRulesStream covers it)",
		}},
		{reflect.TypeOf(server.ConsumerConfig{}), valuesOf(allConsumers()), map[string]string{
			"Name":     "set to durable_name by normalisation",
			"Direct":   "internal to the server's sourcing consumers",
			"Sourcing": "internal to the server's sourcing consumers",
		}},
	} {
		for i := range tc.typ.NumField() {
			f := tc.typ.Field(i)
			if _, ok := tc.exempt[f.Name]; ok || !f.IsExported() {
				continue
			}
			set := false
			for _, v := range tc.values {
				set = set || !v.Field(i).IsZero()
			}
			if !set {
				t.Errorf("%s.%s is not set by any fidelity config", tc.typ.Name(), f.Name)
			}
		}
	}
}

func valuesOf[T any](xs []T) []reflect.Value {
	out := make([]reflect.Value, len(xs))
	for i, x := range xs {
		out[i] = reflect.ValueOf(x)
	}
	return out
}

func allConsumers() []server.ConsumerConfig {
	var out []server.ConsumerConfig
	for _, cs := range fidelityConsumers() {
		out = append(out, cs...)
	}
	return out
}

// TestDeclaredServerLimits proves what natsplan { server_limits {} } changes in a plan
// against a server with max_ack_pending 50 and max_request_batch 25, which no account
// reads. The consumers were made out of band, so the server filled both defaults in.
// Undeclared, the live values stand for the unset fields; declared, max_ack_pending's
// default is the limit (no diff), and max_batch is no longer taken from the server: the
// file leaves it unset, which a pedantic request can not do under that limit (the
// preflight refuses the update, NP304).
func TestDeclaredServerLimits(t *testing.T) {
	s := testsrv.Start(t, func(o *embedded.Options) { o.MaxAckPending = 50; o.MaxRequestBatch = 25 })
	nc := testsrv.Connect(t, s)
	if err := createStreamRaw(nc, server.StreamConfig{Name: "S", Metadata: withProject(nil)}, false); err != nil {
		t.Fatal(err)
	}
	c := server.ConsumerConfig{Durable: "c", AckPolicy: server.AckExplicit, Metadata: withProject(nil)}
	if err := consumerRaw(nc, "S", mustJSON(c), "create", false); err != nil {
		t.Fatal(err)
	}
	live := observeModel(t, nc, model.AccountLimits{})
	for _, tc := range []struct {
		name    string
		limits  *model.ServerLimits
		batch   int // declared max_batch
		changed []string
	}{
		{name: "undeclared: the live values stand"},
		{name: "max_ack_pending declared", limits: &model.ServerLimits{MaxAckPending: 50}},
		{name: "max_ack_pending declared, max_batch set", limits: &model.ServerLimits{MaxAckPending: 50}, batch: 25},
		{name: "both declared, max_batch unset", limits: &model.ServerLimits{MaxAckPending: 50, MaxRequestBatch: 25},
			changed: []string{"max_batch"}},
		{name: "both declared, max_batch set", limits: &model.ServerLimits{MaxAckPending: 50, MaxRequestBatch: 25}, batch: 25},
		{name: "a different max_ack_pending declared", limits: &model.ServerLimits{MaxAckPending: 40},
			changed: []string{"max_ack_pending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := desiredModel([]server.StreamConfig{{Name: "S"}},
				map[string][]server.ConsumerConfig{"S": {{Durable: "c", AckPolicy: server.AckExplicit, MaxRequestBatch: tc.batch}}})
			d.ServerLimits = tc.limits
			p := mustCompute(t, d, live)
			var got []string
			for _, ch := range p.Changes {
				for _, f := range ch.Fields {
					got = append(got, f.Path)
				}
			}
			if !slices.Equal(got, tc.changed) {
				t.Fatalf("changed fields %v, want %v:\n%s", got, tc.changed, testkit.Describe(p))
			}
		})
	}
}
