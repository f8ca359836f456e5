package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// isolateTemp points the temporary directory at a fresh one, so a test can prove the
// shadow's store is gone afterwards.
func isolateTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func requireEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("%s holds %d entries after the check, want none: the shadow's store must be removed", dir, len(entries))
	}
}

func desiredStream(name string, cfg server.StreamConfig, fields ...string) *model.Model {
	m := model.New()
	d := &model.Decl{Range: hcl.Range{Filename: "c.hcl", Start: hcl.Pos{Line: 1, Column: 1}}, Fields: map[string]hcl.Range{}}
	for i, f := range fields {
		d.Fields[f] = hcl.Range{Filename: "c.hcl", Start: hcl.Pos{Line: i + 2, Column: 3, Byte: i + 10}}
	}
	cfg.Name = name
	m.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream, Config: cfg, Decl: d}
	return m
}

func computePlan(t *testing.T, desired, live *model.Model) *plan.Plan {
	t.Helper()
	p, err := plan.Compute(desired, live, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNothingToCheckStartsNoServer: a plan with no create or update (empty, or only
// deletes) costs no server.
func TestNothingToCheckStartsNoServer(t *testing.T) {
	tmp := isolateTemp(t)
	for _, p := range []*plan.Plan{
		{},
		{Changes: []*plan.Change{{Address: "stream.GONE", Kind: "stream", Name: "GONE", Action: plan.ActDelete}}},
	} {
		res, err := Check(context.Background(), p, model.New(), model.New())
		if err != nil {
			t.Fatal(err)
		}
		if res.Startup != 0 || res.Checked != 0 {
			t.Fatalf("Check started a server (startup %s, %d checked) for a plan with nothing to check", res.Startup, res.Checked)
		}
	}
	requireEmpty(t, tmp)
}

// TestCheckFindsAndCleansUp: a refused create is an NP304 at its attribute, an accepted
// one is not, and the shadow's store is removed afterwards.
func TestCheckFindsAndCleansUp(t *testing.T) {
	tmp := isolateTemp(t)
	desired := desiredStream("BAD", server.StreamConfig{Subjects: []string{"bad.>"}, MaxAge: 50_000_000}, "subjects", "max_age")
	good := desiredStream("GOOD", server.StreamConfig{Subjects: []string{"good.>"}})
	desired.Streams["GOOD"] = good.Streams["GOOD"]
	p := computePlan(t, desired, model.New())
	res, err := Check(context.Background(), p, desired, model.New())
	if err != nil {
		t.Fatal(err)
	}
	if res.Checked != 2 || res.Startup <= 0 {
		t.Fatalf("checked %d changes with startup %s, want 2 and a started server", res.Checked, res.Startup)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("findings = %+v, want one", res.Findings)
	}
	f := res.Findings[0]
	if f.Code != finding.CodeServerRefuses || f.Address != "stream.BAD" || f.Range != "c.hcl:3:3" || !strings.Contains(f.Message, "JetStream error 10052") {
		t.Fatalf("finding = %+v, want NP304 at max_age (c.hcl:3:3) naming 10052", f)
	}
	requireEmpty(t, tmp)
}

// TestCheckSkipsErroredChanges: a change whose error finding already says what the server
// would answer (NP303, NP305, NP402) is not sent again, so it is not reported twice; one
// whose error says nothing about the config itself (data loss, the account's limits, an
// invariant) is sent, so that every refusal shows in one plan.
func TestCheckSkipsErroredChanges(t *testing.T) {
	isolateTemp(t)
	for _, tc := range []struct {
		code finding.Code
		want int
	}{
		{finding.CodeRefused, 0}, {finding.CodeRewrite, 0}, {finding.CodeOverlap, 0},
		{"NP302", 1}, {finding.CodeAccountLimits, 1}, {"NP101", 1},
	} {
		desired := desiredStream("BAD", server.StreamConfig{Subjects: []string{"bad.>"}, MaxAge: 50_000_000}, "max_age")
		p := computePlan(t, desired, model.New())
		p.Findings = append(p.Findings, &finding.Finding{Code: tc.code, Severity: finding.SevError, Address: "stream.BAD"})
		res, err := Check(context.Background(), p, desired, model.New())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != tc.want || res.Checked != tc.want {
			t.Fatalf("with %s: %d checked, findings %s; want %d", tc.code, res.Checked, jsonOf(res.Findings), tc.want)
		}
	}
}

// TestCheckCancelled: a cancelled context stops the check with its error, and the
// shadow is still removed.
func TestCheckCancelled(t *testing.T) {
	tmp := isolateTemp(t)
	desired := desiredStream("S", server.StreamConfig{Subjects: []string{"s.>"}})
	p := computePlan(t, desired, model.New())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Check(ctx, p, desired, model.New()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Check with a cancelled context = %v, want context.Canceled", err)
	}
	requireEmpty(t, tmp)
}

// TestUpdateCheckedAgainstLive: an update is checked against the live stream and its
// live consumers, recreated in the shadow: lowering consumer_limits below a live
// consumer is refused, though the update alone is a valid config.
func TestUpdateCheckedAgainstLive(t *testing.T) {
	isolateTemp(t)
	live := model.New()
	live.Target = &model.Target{APILevel: server.JSApiLevel}
	live.Streams["S"] = &model.Stream{Name: "S", Kind: model.KindStream, Config: server.StreamConfig{
		Name: "S", Subjects: []string{"s.>"}, Storage: server.FileStorage, Replicas: 3, MaxMsgs: -1, MaxBytes: -1,
		MaxMsgsPer: -1, MaxMsgSize: -1, MaxConsumers: -1, Duplicates: 120_000_000_000,
	}}
	live.Consumers[model.ConsumerKey{Stream: "S", Name: "c"}] = &model.Consumer{Stream: "S", Name: "c", Config: server.ConsumerConfig{
		Durable: "c", Name: "c", AckPolicy: server.AckExplicit, MaxAckPending: 500, AckWait: 30_000_000_000,
	}}
	desired := desiredStream("S", server.StreamConfig{Subjects: []string{"s.>"}, Replicas: 3,
		ConsumerLimits: server.StreamConsumerLimits{MaxAckPending: 100}}, "consumer_limits.max_ack_pending")
	p := computePlan(t, desired, live)
	res, err := Check(context.Background(), p, desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || !strings.Contains(res.Findings[0].Message, "violates consumers: c") || res.Findings[0].Range != "c.hcl:2:3" {
		t.Fatalf("findings = %s, want the server's refusal at consumer_limits.max_ack_pending", jsonOf(res.Findings))
	}
}

func jsonOf(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// BenchmarkShadowStart measures what a plan with creates or updates pays for the
// private server: start, connect, stop and remove its store.
func BenchmarkShadowStart(b *testing.B) {
	b.Setenv("TMPDIR", b.TempDir())
	for b.Loop() {
		sh, err := startShadow(context.Background(), server.JSLimitOpts{})
		if err != nil {
			b.Fatal(err)
		}
		sh.stop()
	}
}

// BenchmarkCheck measures a check of N stream creates with two consumers each, the
// shape of bench/'s plans.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{100, 1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.Setenv("TMPDIR", b.TempDir())
			desired := model.New()
			for i := range n {
				name := fmt.Sprintf("S%04d", i)
				desired.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream,
					Config: server.StreamConfig{Name: name, Subjects: []string{name + ".>"}, MaxAge: time.Hour}}
				for _, c := range []string{"a", "b"} {
					desired.Consumers[model.ConsumerKey{Stream: name, Name: c}] = &model.Consumer{Stream: name, Name: c,
						Config: server.ConsumerConfig{AckPolicy: server.AckExplicit, MaxAckPending: 100}}
				}
			}
			p, err := plan.Compute(desired, model.New(), plan.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := Check(context.Background(), p, desired, model.New())
				if err != nil || len(res.Findings) != 0 || res.Checked != 3*n {
					b.Fatal(err, res.Findings)
				}
			}
		})
	}
}

// TestUncheckedIsReported: a live stream the private server will not recreate (here a
// config no current server accepts) leaves the update of it unchecked, and says so,
// rather than passing it silently.
func TestUncheckedIsReported(t *testing.T) {
	isolateTemp(t)
	live := model.New()
	live.Target = &model.Target{APILevel: server.JSApiLevel}
	live.Streams["OLD"] = &model.Stream{Name: "OLD", Kind: model.KindStream, Config: server.StreamConfig{
		Name: "OLD", Subjects: []string{"old.>"}, Storage: server.FileStorage, MaxAge: 50_000_000, Duplicates: 50_000_000,
		MaxMsgs: -1, MaxBytes: -1, MaxMsgsPer: -1, MaxMsgSize: -1, MaxConsumers: -1, Replicas: 1,
	}}
	desired := desiredStream("OLD", server.StreamConfig{Subjects: []string{"old.>"}, MaxAge: time.Hour}, "max_age")
	p := computePlan(t, desired, live)
	res, err := Check(context.Background(), p, desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unchecked) != 1 || !strings.HasPrefix(res.Unchecked[0], "stream.OLD: ") || len(res.Findings) != 0 {
		t.Fatalf("unchecked %q, findings %s; want stream.OLD unchecked and no finding", res.Unchecked, jsonOf(res.Findings))
	}
}
