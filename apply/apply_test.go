package apply

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// TestRunOrder applies creates, updates, an adopt, a replace and deletes of streams, a
// KV bucket and consumers, and checks the server's state and that no change started
// before what it depends on finished.
func TestRunOrder(t *testing.T) {
	c := testkit.Client(t)
	seedStream(t, c, "UPD", `{"subjects":["upd.>"],"max_msgs":10}`)
	seedConsumer(t, c, "UPD", "uc", `{"ack_policy":"explicit","ack_wait":30000000000}`)
	seedConsumer(t, c, "UPD", "rc", `{"ack_policy":"explicit","deliver_policy":"all"}`)
	seedStream(t, c, "OLD", `{"subjects":["old.>"]}`)
	seedConsumer(t, c, "OLD", "oc", `{"ack_policy":"explicit"}`)
	seedStream(t, c, "MINE", `{"subjects":["mine.>"]}`)

	kv := stream(plan.ActCreate, "KV_sessions", 1, `{"subjects":["$KV.sessions.>"],"max_msgs_per_subject":5,"allow_rollup_hdrs":true,"deny_delete":true,"allow_direct":true,"discard":"new"}`)
	kv.Kind, kv.Address = model.KindKV, "kv.sessions"
	p := &plan.Plan{Changes: []*plan.Change{
		kv,
		stream(plan.ActAdopt, "MINE", 1, `{"subjects":["mine.>"],"metadata":{"natsplan.project":"shop"}}`),
		stream(plan.ActCreate, "ORDERS", 1, `{"subjects":["orders.>"]}`),
		stream(plan.ActUpdate, "UPD", 1, `{"subjects":["upd.>"],"max_msgs":20}`),
		consumer(plan.ActCreate, "ORDERS", "audit", 2, `{"ack_policy":"explicit","max_ack_pending":7}`, "stream.ORDERS"),
		consumer(plan.ActReplace, "UPD", "rc", 2, `{"ack_policy":"explicit","deliver_policy":"new"}`, "stream.UPD"),
		consumer(plan.ActUpdate, "UPD", "uc", 2, `{"ack_policy":"explicit","ack_wait":60000000000}`, "stream.UPD"),
		consumer(plan.ActDelete, "OLD", "oc", 3, ""),
		stream(plan.ActDelete, "OLD", 4, "", "consumer.OLD.oc"),
	}}
	var out lines
	res := mustRun(t, c, p, Options{AllowDelete: true, Parallelism: 4, Progress: &out})
	if !res.OK() {
		for _, s := range res.Steps {
			t.Errorf("%s: %s %v", s.Address, s.Status, s.Err)
		}
		t.FailNow()
	}
	if got := res.Counts(); got != (Counts{Done: len(p.Changes)}) {
		t.Errorf("counts = %+v", got)
	}

	if si := streamInfo(t, c, "ORDERS"); si == nil {
		t.Error("stream ORDERS was not created")
	}
	if si := streamInfo(t, c, "KV_sessions"); si == nil || si.Config.MaxMsgsPer != 5 {
		t.Errorf("KV_sessions = %+v, want history 5", si)
	}
	if si := streamInfo(t, c, "MINE"); si.Config.Metadata["natsplan.project"] != "shop" {
		t.Errorf("MINE metadata = %v, want the ownership mark", si.Config.Metadata)
	}
	if si := streamInfo(t, c, "UPD"); si.Config.MaxMsgs != 20 {
		t.Errorf("UPD max_msgs = %d, want 20", si.Config.MaxMsgs)
	}
	if ci := consumerInfo(t, c, "ORDERS", "audit"); ci == nil || ci.Config.MaxAckPending != 7 {
		t.Errorf("ORDERS/audit = %+v, want max_ack_pending 7", ci)
	}
	if ci := consumerInfo(t, c, "UPD", "uc"); ci.Config.AckWait != time.Minute {
		t.Errorf("UPD/uc ack_wait = %s, want 1m", ci.Config.AckWait)
	}
	if ci := consumerInfo(t, c, "UPD", "rc"); ci.Config.DeliverPolicy.String() != "new" {
		t.Errorf("UPD/rc deliver_policy = %s, want new (replaced)", ci.Config.DeliverPolicy)
	}
	if si := streamInfo(t, c, "OLD"); si != nil {
		t.Error("stream OLD still exists")
	}

	// Every change starts after each change it depends on, and every step after the last.
	text := out.String()
	for _, ch := range p.Changes {
		doing, _ := verbs(ch.Action)
		start := lineIndex(text, ch.Address+": "+doing+"...")
		if start < 0 {
			t.Fatalf("no start line for %s in:\n%s", ch.Address, text)
		}
		for _, other := range p.Changes {
			_, did := verbs(other.Action)
			end := lineIndex(text, other.Address+": "+did+" (")
			if end < 0 {
				t.Fatalf("no done line for %s in:\n%s", other.Address, text)
			}
			before := other.Step < ch.Step
			for _, d := range ch.DependsOn {
				before = before || d == other.Address
			}
			if before && end > start {
				t.Errorf("%s started before %s finished:\n%s", ch.Address, other.Address, text)
			}
		}
	}
}

// TestRunFailure checks that a change the server refuses fails, that what depends on
// it (also transitively) is skipped and sent nothing, and that everything else is done.
func TestRunFailure(t *testing.T) {
	c := testkit.Client(t)
	p := &plan.Plan{Changes: []*plan.Change{
		// The server refuses a max_age under 100ms.
		stream(plan.ActCreate, "BAD", 1, `{"subjects":["bad.>"],"max_age":1000000}`),
		stream(plan.ActCreate, "GOOD", 1, `{"subjects":["good.>"]}`),
		consumer(plan.ActCreate, "BAD", "c1", 2, `{"ack_policy":"explicit"}`, "stream.BAD"),
		consumer(plan.ActCreate, "GOOD", "c1", 2, `{"ack_policy":"explicit"}`, "stream.GOOD"),
		// Depends on BAD only through BAD/c1.
		consumer(plan.ActCreate, "GOOD", "c2", 3, `{"ack_policy":"explicit"}`, "consumer.BAD.c1"),
		// A second independent failure in a later step: the stream does not exist.
		consumer(plan.ActUpdate, "NOPE", "c", 3, `{"ack_policy":"explicit"}`),
		stream(plan.ActCreate, "LATE", 4, `{"subjects":["late.>"]}`, "stream.GOOD"),
		// Dependencies inside one step: one that fails while the step runs, and one that
		// succeeds first.
		consumer(plan.ActCreate, "SAME", "c", 5, `{"ack_policy":"explicit"}`, "stream.SAME"),
		stream(plan.ActCreate, "SAME", 5, `{"subjects":["same.>"],"max_age":1000000}`),
		consumer(plan.ActCreate, "LATE", "c", 5, `{"ack_policy":"explicit"}`, "consumer.LATE.b"),
		consumer(plan.ActCreate, "LATE", "b", 5, `{"ack_policy":"explicit"}`),
	}}
	var out lines
	res := mustRun(t, c, p, Options{Parallelism: 2, Progress: &out})
	want := map[string]Status{
		"stream.BAD":       StatusFailed,
		"stream.GOOD":      StatusDone,
		"consumer.BAD.c1":  StatusSkipped,
		"consumer.GOOD.c1": StatusDone,
		"consumer.GOOD.c2": StatusSkipped,
		"consumer.NOPE.c":  StatusFailed,
		"stream.LATE":      StatusDone,
		"consumer.SAME.c":  StatusSkipped,
		"stream.SAME":      StatusFailed,
		"consumer.LATE.c":  StatusDone,
		"consumer.LATE.b":  StatusDone,
	}
	got := statuses(res)
	for addr, st := range want {
		if got[addr] != st {
			t.Errorf("%s: %s, want %s", addr, got[addr], st)
		}
	}
	if res.OK() {
		t.Error("OK() with failed changes")
	}
	if got := res.Counts(); got != (Counts{Done: 5, Failed: 3, Skipped: 3}) {
		t.Errorf("counts = %+v", got)
	}
	for _, s := range res.Steps {
		switch s.Status {
		case StatusFailed:
			var apiErr *jsapi.Error
			if !errors.As(s.Err, &apiErr) {
				t.Errorf("%s: error %v is not the server's", s.Address, s.Err)
			}
		case StatusSkipped:
			if s.Err == nil || !strings.Contains(s.Err.Error(), "BAD") && !strings.Contains(s.Err.Error(), "stream.SAME") {
				t.Errorf("%s: skip reason %v does not name the failed dependency", s.Address, s.Err)
			}
			if strings.Contains(out.String(), s.Address+": creating") {
				t.Errorf("%s was started although skipped", s.Address)
			}
		case StatusDone:
			if s.Err != nil {
				t.Errorf("%s: done with error %v", s.Address, s.Err)
			}
		}
	}
	if streamInfo(t, c, "BAD") != nil {
		t.Error("stream BAD exists")
	}
	if consumerInfo(t, c, "GOOD", "c1") == nil || streamInfo(t, c, "LATE") == nil {
		t.Error("independent changes were not applied")
	}
	if consumerInfo(t, c, "GOOD", "c2") != nil {
		t.Error("GOOD/c2 was created although its dependency was skipped")
	}
	if c, b := lineIndex(out.String(), "consumer.LATE.c: creating"), lineIndex(out.String(), "consumer.LATE.b: created"); c < b {
		t.Errorf("consumer.LATE.c started before consumer.LATE.b was created:\n%s", out.String())
	}
	for _, l := range []string{"stream.BAD: create failed (", "consumer.GOOD.c2: skipped: depends on consumer.BAD.c1, which was skipped", "consumer.BAD.c1: skipped: depends on stream.BAD, which failed"} {
		if !strings.Contains(out.String(), l) {
			t.Errorf("progress lacks %q:\n%s", l, out.String())
		}
	}
}

// TestRunRefuses checks the refusals: nothing is sent, every change is refused, and the
// error says which flag or fix is needed. The last cases are allowed by their flags.
func TestRunRefuses(t *testing.T) {
	c := testkit.Client(t)
	seedStream(t, c, "KEEP", `{"subjects":["keep.>"]}`)
	seedConsumer(t, c, "KEEP", "k", `{"ack_policy":"explicit"}`)
	if _, err := c.NC.Request("keep.a", []byte("x"), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	create := func() *plan.Change { return stream(plan.ActCreate, "NEW", 1, `{"subjects":["new.>"]}`) }
	// A stream's delete lists the consumers that go with it.
	del := func() []*plan.Change {
		return []*plan.Change{consumer(plan.ActDelete, "KEEP", "k", 2, ""), stream(plan.ActDelete, "KEEP", 2, "", "consumer.KEEP.k")}
	}
	with := func(chs ...any) []*plan.Change {
		var out []*plan.Change
		for _, c := range chs {
			switch c := c.(type) {
			case *plan.Change:
				out = append(out, c)
			case []*plan.Change:
				out = append(out, c...)
			}
		}
		return out
	}
	dataLoss := &finding.Finding{Code: "NP301", Severity: finding.SevError, Address: "stream.KEEP", Message: "stream KEEP holds 1 message"}
	cases := []struct {
		name     string
		changes  []*plan.Change
		findings []*finding.Finding
		opts     Options
		want     string // in the error; "" means the run is allowed
	}{
		{"delete without allow-delete",
			with(create(), del()), nil, Options{AllowDataLoss: true}, "--allow-delete"},
		{"replace without allow-delete",
			[]*plan.Change{create(), consumer(plan.ActReplace, "KEEP", "k", 2, `{"ack_policy":"explicit","deliver_policy":"new"}`)},
			nil, Options{}, "consumer.KEEP.k"},
		{"data loss without allow-data-loss",
			with(create(), del()), []*finding.Finding{dataLoss}, Options{AllowDelete: true}, "NP301 stream.KEEP: stream KEEP holds 1 message (run with --allow-data-loss"},
		{"data loss the plan did not show",
			with(create(), del()), nil, Options{AllowDelete: true}, "NP301 stream.KEEP: deleting stream.KEEP loses its 1 message (37 bytes): declare it again to keep it (found when apply read the server again: the plan did not show it) (run with --allow-data-loss"},
		{"a consumer the plan does not list",
			with(create(), stream(plan.ActDelete, "KEEP", 2, "")), nil, Options{AllowDelete: true, AllowDataLoss: true},
			"consumer.KEEP.k exists on the server but is not in the plan"},
		{"an error no flag overrides",
			[]*plan.Change{create()},
			[]*finding.Finding{{Code: "NP303", Severity: finding.SevError, Address: "stream.KEEP", Message: "storage can not change", Range: "shop.hcl:3:5"}},
			Options{AllowDelete: true, AllowDataLoss: true}, "NP303 stream.KEEP at shop.hcl:3:5: storage can not change (fix the configuration"},
		{"an error naming its flag",
			[]*plan.Change{create()},
			[]*finding.Finding{{Code: "NP399", Severity: finding.SevError, Address: "stream.KEEP", Message: "m", Overridable: "allow-data-loss"}},
			Options{AllowDelete: true}, "--allow-data-loss"},
		{"a blocked change, even without its finding",
			[]*plan.Change{create(), func() *plan.Change {
				ch := stream(plan.ActUpdate, "KEEP", 1, `{"subjects":["keep.>"],"storage":"memory"}`)
				ch.Blocked = "the server refuses to change storage (NP303)"
				return ch
			}()},
			nil, Options{AllowDelete: true, AllowDataLoss: true}, "stream.KEEP is blocked: the server refuses to change storage"},
		{"warnings never refuse",
			[]*plan.Change{create()},
			[]*finding.Finding{{Code: "NP302", Severity: finding.SevWarning, Address: "stream.KEEP", Message: "purges"}}, Options{}, ""},
		{"data loss with both flags",
			with(create(), del()), []*finding.Finding{dataLoss}, Options{AllowDelete: true, AllowDataLoss: true}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, c)
			p := &plan.Plan{Changes: tc.changes, Findings: tc.findings}
			res, err := Run(context.Background(), c, p, tc.opts)
			if tc.want == "" {
				if err != nil || !res.OK() {
					t.Fatalf("run: %v %+v", err, res.Counts())
				}
				if streamInfo(t, c, "NEW") == nil {
					t.Fatal("allowed run did not create NEW")
				}
				return
			}
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("error = %v, want a refusal", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if got := res.Counts(); got != (Counts{Refused: len(p.Changes)}) {
				t.Errorf("counts = %+v, want all refused", got)
			}
			if diff := cmp.Diff(before, snapshot(t, c)); diff != "" {
				t.Errorf("server changed by a refused run (-before +after):\n%s", diff)
			}
		})
	}
}
