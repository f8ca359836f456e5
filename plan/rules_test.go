package plan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// converge plans d against the server, applies it and checks that the next plan is
// empty: the core property, used by every rule test to reach its starting point.
func converge(t *testing.T, nc *nats.Conn, d *model.Model) *plan.Plan {
	t.Helper()
	p := mustCompute(t, d, observeModel(t, nc, model.AccountLimits{}))
	if errs := finding.Errors(p.Findings); len(errs) > 0 {
		t.Fatalf("plan has errors:\n%s", testkit.Describe(p))
	}
	if err := applyPlan(t, nc, p); err != nil {
		t.Fatalf("apply: %v\n%s", err, testkit.Describe(p))
	}
	if again := mustCompute(t, d, observeSettled(t, nc)); again.HasChanges() || len(finding.Errors(again.Findings)) > 0 {
		t.Fatalf("plan after apply is not empty:\n%s", testkit.Describe(again))
	}
	return p
}

// refusal returns the NP303 finding for addr that names field.
func refusal(p *plan.Plan, addr, field string) *finding.Finding {
	for _, f := range p.Findings {
		if f.Code == finding.CodeRefused && f.Address == addr && strings.HasPrefix(f.Message, field) {
			return f
		}
	}
	return nil
}

func changesOf(p *plan.Plan, addr string) []*plan.Change {
	var out []*plan.Change
	for _, ch := range p.Changes {
		if ch.Address == addr {
			out = append(out, ch)
		}
	}
	return out
}

func stream(name string, mod func(*server.StreamConfig)) server.StreamConfig {
	c := server.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}}
	if mod != nil {
		mod(&c)
	}
	return c
}

// TestRulesStreamRefused proves every immutable, one-way and create-only stream field:
// the server really refuses the change (first_seq: accepts it, dangerously), and the
// plan has an NP303 error with a recipe instead of an update.
func TestRulesStreamRefused(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	if err := createStreamRaw(nc, stream("ORIGIN", nil), false); err != nil {
		t.Fatal(err)
	}
	if err := createStreamRaw(nc, stream("OTHER", nil), false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field          string
		from, forward  func(*server.StreamConfig)
		to             func(*server.StreamConfig)
		serverAccepts  bool
		wantRuleOnPlan plan.Rule
	}{
		{field: "storage", to: func(c *server.StreamConfig) { c.Storage = server.MemoryStorage }},
		{field: "retention", to: func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy }},
		{field: "retention", from: func(c *server.StreamConfig) { c.Retention = server.WorkQueuePolicy },
			to: func(c *server.StreamConfig) { c.Retention = server.InterestPolicy }},
		{field: "allow_msg_counter", to: func(c *server.StreamConfig) { c.AllowMsgCounter = true }},
		{field: "persist_mode", to: func(c *server.StreamConfig) { c.PersistMode = server.AsyncPersistMode }},
		{field: "mirror", from: func(c *server.StreamConfig) {
			c.Subjects = nil
			c.Mirror = &server.StreamSource{Name: "ORIGIN"}
		}, to: func(c *server.StreamConfig) { c.Mirror = &server.StreamSource{Name: "OTHER"} }},
		{field: "mirror", to: func(c *server.StreamConfig) {
			c.Subjects = nil
			c.Mirror = &server.StreamSource{Name: "ORIGIN"}
		}},
		{field: "sealed", forward: func(c *server.StreamConfig) { c.Sealed = true }, to: func(c *server.StreamConfig) {}},
		{field: "deny_delete", forward: func(c *server.StreamConfig) { c.DenyDelete = true }, to: func(c *server.StreamConfig) {}},
		{field: "deny_purge", forward: func(c *server.StreamConfig) { c.DenyPurge = true }, to: func(c *server.StreamConfig) {}},
		{field: "allow_msg_ttl", forward: func(c *server.StreamConfig) { c.AllowMsgTTL = true }, to: func(c *server.StreamConfig) {}},
		{field: "allow_msg_schedules", forward: func(c *server.StreamConfig) { c.AllowMsgSchedules = true; c.AllowRollup = true },
			to: func(c *server.StreamConfig) { c.AllowRollup = true }},
		{field: "first_seq", to: func(c *server.StreamConfig) { c.FirstSeq = 100 }, serverAccepts: true},
	} {
		t.Run(tc.field, func(t *testing.T) {
			name := strings.ToUpper(strings.ReplaceAll(t.Name()[len("TestRulesStreamRefused/"):], "#", "_"))
			from := stream(name, tc.from)
			converge(t, nc, desiredModel([]server.StreamConfig{from}, nil))
			if tc.forward != nil {
				fwd := stream(name, tc.from)
				tc.forward(&fwd)
				p := converge(t, nc, desiredModel([]server.StreamConfig{fwd}, nil))
				chs := changesOf(p, "stream."+name)
				if len(chs) != 1 || chs[0].Action != plan.ActUpdate || !hasField(chs[0], tc.field, plan.RuleOneWay) {
					t.Fatalf("forward change is not a one_way update:\n%s", testkit.Describe(p))
				}
			}
			to := stream(name, tc.from)
			tc.to(&to)
			d := desiredModel([]server.StreamConfig{to}, nil)
			p := mustCompute(t, d, observeModel(t, nc, model.AccountLimits{}))
			if f := refusal(p, "stream."+name, tc.field); f == nil || f.Severity != finding.SevError || !strings.Contains(f.Message, ":") {
				t.Fatalf("want an NP303 error naming %s:\n%s", tc.field, testkit.Describe(p))
			}
			if !blockedChange(p, "stream."+name, tc.field) {
				t.Fatalf("want the refused change in the plan once, blocked, with %s marked:\n%s", tc.field, testkit.Describe(p))
			}
			// What the server does with the change natsplan refused to plan.
			to.Metadata = withProject(nil)
			norm := plan.NormalizeStream(to, nil)
			err := updateStreamRaw(nc, mustJSON(norm), false)
			if tc.serverAccepts && err != nil {
				t.Fatalf("server refused %s: %v", tc.field, err)
			}
			if !tc.serverAccepts && err == nil {
				t.Fatalf("server accepted a change of %s that the plan refuses", tc.field)
			}
		})
	}
}

// TestRulesStreamSealedAtCreate proves a stream can not be created sealed.
func TestRulesStreamSealedAtCreate(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	cfg := stream("SEALED", func(c *server.StreamConfig) { c.Sealed = true })
	p := mustCompute(t, desiredModel([]server.StreamConfig{cfg}, nil), observeModel(t, nc, model.AccountLimits{}))
	chs := changesOf(p, "stream.SEALED")
	if refusal(p, "stream.SEALED", "sealed") == nil || len(chs) != 1 || chs[0].Action != plan.ActCreate || chs[0].Blocked == "" {
		t.Fatalf("want NP303 and a blocked create:\n%s", testkit.Describe(p))
	}
	if err := createStreamRaw(nc, plan.NormalizeStream(cfg, nil), false); err == nil {
		t.Fatal("server created a sealed stream")
	}
}

// blockedChange reports whether the plan changes addr exactly once, blocked, with the
// field at path (or one inside it) marked blocked.
func blockedChange(p *plan.Plan, addr, path string) bool {
	chs := changesOf(p, addr)
	if len(chs) != 1 || chs[0].Blocked == "" {
		return false
	}
	for _, f := range chs[0].Fields {
		if (f.Path == path || strings.HasPrefix(f.Path, path+".")) && f.Blocked {
			return true
		}
	}
	return false
}

func hasField(ch *plan.Change, path string, rule plan.Rule) bool {
	for _, f := range ch.Fields {
		if f.Path == path && f.Rule == rule {
			return true
		}
	}
	return false
}

// TestRulesStreamInPlace proves every in-place stream field: the plan is an update
// whose fields are all in_place, the server accepts it in pedantic mode, and the next
// plan is empty.
func TestRulesStreamInPlace(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	if err := createStreamRaw(nc, stream("ORIGIN", nil), false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		from, to func(*server.StreamConfig)
	}{
		{"description", nil, func(c *server.StreamConfig) { c.Description = "new" }},
		{"subjects", nil, func(c *server.StreamConfig) { c.Subjects = append(c.Subjects, "more.>") }},
		{"max_consumers", nil, func(c *server.StreamConfig) { c.MaxConsumers = 5 }},
		{"max_msgs", nil, func(c *server.StreamConfig) { c.MaxMsgs = 5 }},
		{"max_bytes", nil, func(c *server.StreamConfig) { c.MaxBytes = 1 << 20 }},
		{"max_age", nil, func(c *server.StreamConfig) { c.MaxAge = time.Hour }},
		{"max_msgs_per_subject", nil, func(c *server.StreamConfig) { c.MaxMsgsPer = 3 }},
		{"max_msg_size", nil, func(c *server.StreamConfig) { c.MaxMsgSize = 100 }},
		{"discard", nil, func(c *server.StreamConfig) { c.Discard = server.DiscardNew }},
		{"discard_new_per_subject", func(c *server.StreamConfig) { c.Discard = server.DiscardNew; c.MaxMsgsPer = 2 },
			func(c *server.StreamConfig) { c.DiscardNewPer = true }},
		{"duplicate_window", nil, func(c *server.StreamConfig) { c.Duplicates = time.Second }},
		{"compression", nil, func(c *server.StreamConfig) { c.Compression = server.S2Compression }},
		{"subject_transform", nil, func(c *server.StreamConfig) {
			c.SubjectTransform = &server.SubjectTransformConfig{Source: c.Subjects[0], Destination: "tr.>"}
		}},
		{"republish", nil, func(c *server.StreamConfig) { c.RePublish = &server.RePublish{Destination: "rp2.>"} }},
		{"allow_direct", nil, func(c *server.StreamConfig) { c.AllowDirect = true }},
		{"allow_rollup_hdrs", nil, func(c *server.StreamConfig) { c.AllowRollup = true }},
		{"allow_rollup_hdrs off", func(c *server.StreamConfig) { c.AllowRollup = true }, func(c *server.StreamConfig) { c.AllowRollup = false }},
		{"consumer_limits", nil, func(c *server.StreamConfig) {
			c.ConsumerLimits = server.StreamConsumerLimits{InactiveThreshold: time.Hour, MaxAckPending: 10}
		}},
		{"metadata", nil, func(c *server.StreamConfig) { c.Metadata = map[string]string{"k": "v"} }},
		{"allow_atomic", nil, func(c *server.StreamConfig) { c.AllowAtomicPublish = true }},
		{"allow_batched", nil, func(c *server.StreamConfig) { c.AllowBatchPublish = true }},
		{"subject_delete_marker_ttl", nil, func(c *server.StreamConfig) { c.SubjectDeleteMarkerTTL = time.Minute }},
		{"retention limits to interest", nil, func(c *server.StreamConfig) { c.Retention = server.InterestPolicy }},
		{"retention interest to limits", func(c *server.StreamConfig) { c.Retention = server.InterestPolicy },
			func(c *server.StreamConfig) { c.Retention = server.LimitsPolicy }},
		{"mirror removed", func(c *server.StreamConfig) { c.Subjects = nil; c.Mirror = &server.StreamSource{Name: "ORIGIN"} },
			func(c *server.StreamConfig) { c.Mirror = nil; c.Subjects = []string{"promoted.>"} }},
		{"sources", nil, func(c *server.StreamConfig) { c.Sources = []*server.StreamSource{{Name: "ORIGIN"}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ToUpper(strings.NewReplacer(" ", "_").Replace(tc.name))
			converge(t, nc, desiredModel([]server.StreamConfig{stream(name, tc.from)}, nil))
			to := stream(name, tc.from)
			tc.to(&to)
			p := converge(t, nc, desiredModel([]server.StreamConfig{to}, nil))
			chs := changesOf(p, "stream."+name)
			if len(chs) != 1 || chs[0].Action != plan.ActUpdate || len(chs[0].Fields) == 0 {
				t.Fatalf("want one update:\n%s", testkit.Describe(p))
			}
			for _, f := range chs[0].Fields {
				forward := f.Rule == plan.RuleOneWay && f.After == true
				if f.Rule != plan.RuleInPlace && !forward {
					t.Fatalf("field %s has rule %s:\n%s", f.Path, f.Rule, testkit.Describe(p))
				}
			}
		})
	}
}
