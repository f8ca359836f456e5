package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// onlyBase is on the server before the partial plans; onlyNext changes every object
// of it, creates NEW, deletes OLD, and declares BAD, which the server refuses to create
// (sealed): the whole plan is refused.
const onlyBase = savedBase + `
stream "OLD" {
  subjects = ["old.>"]
}
`

const onlyNext = savedNext + `
stream "BAD" {
  subjects = ["bad.>"]
  sealed   = true
}
`

// addresses lists a plan's changes as "action address", once per object.
func addresses(p *plan.Plan) []string {
	var out []string
	for _, c := range p.Changes {
		if s := string(c.Action) + " " + c.Address; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// TestOnlyPlanApply: plan and apply --only change just the selected objects and what
// they need, say so first, and leave the other changes pending; an error on an object
// left out does not block them.
func TestOnlyPlanApply(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	ctx := context.Background()
	mustCLI(t, url, "apply", "--auto-approve", writeConfig(t, map[string]string{"shop.hcl": onlyBase}))
	next := writeConfig(t, map[string]string{"shop.hcl": onlyNext})

	code, whole := planJSON(t, url, next)
	if code != exitError || !whole.HasErrors() {
		t.Fatalf("the whole plan: exit %d, want 1 for BAD's NP303", code)
	}
	wantAll := []string{"create stream.BAD", "create stream.NEW", "delete stream.OLD", "update consumer.ORDERS.audit",
		"update kv.sessions", "update object_store.assets", "update stream.ORDERS"}
	if d := slices.Compare(wantAll, addresses(whole)); d != 0 {
		t.Fatalf("whole plan %v, want %v", addresses(whole), wantAll)
	}

	// The consumer brings its stream's update; the text opens with the banner.
	code, out, errOut := cli(t, url, "plan", "--only", "consumer.ORDERS.audit", "--detailed-exitcode", next)
	banner := "PARTIAL PLAN: --only consumer.ORDERS.audit — 5 other changes are not shown and will not be applied"
	if first, _, _ := strings.Cut(out, "\n"); code != exitChanges || first != banner {
		t.Fatalf("plan --only: exit %d, first line %q, want %q\n%s\n%s", code, first, banner, out, errOut)
	}
	if !strings.Contains(out, "stream.ORDERS") || strings.Contains(out, "NP303") || strings.Contains(out, "stream.NEW") {
		t.Fatalf("plan --only consumer.ORDERS.audit shows other objects or BAD's error:\n%s", out)
	}
	_, md, _ := cli(t, url, "plan", "--only", "consumer.ORDERS.audit", "--format", "markdown", next)
	if !strings.HasPrefix(md, "> [!WARNING]\n> **PARTIAL PLAN**: `--only consumer.ORDERS.audit` — 5 other changes") {
		t.Fatalf("markdown does not open with the warning:\n%s", md)
	}

	// apply --only creates NEW and nothing else, even with --allow-delete.
	code, out, errOut = cli(t, url, "apply", "--auto-approve", "--allow-delete", "--only", "stream.NE?", next)
	if first, _, _ := strings.Cut(out, "\n"); code != 0 || !strings.HasPrefix(first, "PARTIAL PLAN: --only stream.NE? — 6 other changes") {
		t.Fatalf("apply --only: exit %d, first line %q\n%s\n%s", code, first, out, errOut)
	}
	if _, err := js.Stream(ctx, "NEW"); err != nil {
		t.Fatalf("apply --only stream.NE? did not create NEW: %v", err)
	}
	if _, err := js.Stream(ctx, "OLD"); err != nil {
		t.Fatalf("apply --only stream.NE? deleted OLD: %v", err)
	}
	st, err := js.Stream(ctx, "ORDERS")
	if err != nil || st.CachedInfo().Config.MaxAge != time.Hour {
		t.Fatalf("apply --only stream.NE? touched ORDERS: %v", err)
	}
	_, again := planJSON(t, url, next)
	if d := slices.Compare(slices.DeleteFunc(slices.Clone(wantAll), func(s string) bool { return s == "create stream.NEW" }), addresses(again)); d != 0 {
		t.Fatalf("after apply --only, the plan is %v: the other changes must still be pending", addresses(again))
	}

	// A saved partial plan keeps its banner through show and apply.
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustCLI(t, url, "plan", "--only", "consumer.ORDERS.audit", "--out", planFile, next)
	saved, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Only    []string `json:"only"`
		LeftOut int      `json:"left_out"`
	}
	if err := json.Unmarshal(saved, &doc); err != nil || len(doc.Only) != 1 || doc.Only[0] != "consumer.ORDERS.audit" || doc.LeftOut != 4 {
		t.Fatalf("saved partial plan: only %v left_out %d (%v)", doc.Only, doc.LeftOut, err)
	}
	savedBanner := "PARTIAL PLAN: --only consumer.ORDERS.audit — 4 other changes are not shown and will not be applied"
	_, shown, _ := cli(t, "nats://127.0.0.1:1", "show", planFile)
	if first, _, _ := strings.Cut(shown, "\n"); first != savedBanner {
		t.Fatalf("show of a saved partial plan starts with %q", first)
	}
	code, out, errOut = cli(t, url, "apply", planFile, "--auto-approve")
	if first, _, _ := strings.Cut(out, "\n"); code != 0 || first != savedBanner {
		t.Fatalf("apply of a saved partial plan: exit %d, first line %q\n%s\n%s", code, first, out, errOut)
	}
	_, again = planJSON(t, url, next)
	want := []string{"create stream.BAD", "delete stream.OLD", "update kv.sessions", "update object_store.assets"}
	if d := slices.Compare(want, addresses(again)); d != 0 {
		t.Fatalf("after the saved partial plan, the plan is %v, want %v", addresses(again), want)
	}
}

// TestOnlyUsage: a pattern that matches nothing, and --only with a saved plan, are
// usage errors that write nothing.
func TestOnlyUsage(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	mustCLI(t, url, "apply", "--auto-approve", writeConfig(t, map[string]string{"shop.hcl": onlyBase}))
	next := writeConfig(t, map[string]string{"shop.hcl": savedNext})
	writes := writeCounter(t, s)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--only", "ORDERS", next}, "--only ORDERS matches no object declared in the files or owned by this project on the server; did you mean stream.ORDERS?"},
		{[]string{"apply", "--auto-approve", "--only", "consumer.ORDERS.audi", next}, "did you mean consumer.ORDERS.audit?"},
		{[]string{"plan", "--only", "stream.NEW", "--only", "stream.NOPE*", next}, "--only stream.NOPE* matches no object"},
		{[]string{"plan", "--only", "", next}, "give an address such as stream.ORDERS"},
	} {
		code, out, errOut := cli(t, url, tc.args...)
		if code != exitError || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("natsplan %q: exit %d, stderr %q, want 1 and %q; stdout %q", tc.args, code, errOut, tc.want, out)
		}
	}
	// OLD is live and owned: it can be named (its delete).
	if code, out, errOut := cli(t, url, "plan", "--only", "stream.OLD", next); code != 0 || !strings.Contains(out, "- stream.OLD") {
		t.Errorf("plan --only stream.OLD: exit %d\n%s\n%s", code, out, errOut)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustCLI(t, url, "plan", "--out", planFile, next)
	code, _, errOut := cli(t, url, "apply", planFile, "--auto-approve", "--only", "stream.NEW")
	if code != exitError || !strings.Contains(errOut, "--only can not be used with a saved plan") {
		t.Errorf("apply FILE --only: exit %d\n%s", code, errOut)
	}
	writes.settle(t)
	if n := writes.Load(); n != 0 {
		t.Errorf("usage errors wrote %d requests", n)
	}
}

// TestOnlyUnderLock: with the apply lock, the plan computed again under the lock is cut
// the same way: only the selected stream is created.
func TestOnlyUnderLock(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	dir := writeConfig(t, map[string]string{"shop.hcl": `
natsplan {
  project = "shop"
  lock {}
}
stream "A" {
  subjects = ["a.>"]
}
stream "B" {
  subjects = ["b.>"]
}
`})
	code, out, errOut := cli(t, url, "apply", "--auto-approve", "--only", "stream.A", dir)
	if first, _, _ := strings.Cut(out, "\n"); code != 0 || first != "PARTIAL PLAN: --only stream.A — 1 other change is not shown and will not be applied" {
		t.Fatalf("apply --only under the lock: exit %d, first line %q\n%s\n%s", code, first, out, errOut)
	}
	ctx := context.Background()
	if _, err := js.Stream(ctx, "A"); err != nil {
		t.Fatalf("A was not created: %v", err)
	}
	if _, err := js.Stream(ctx, "B"); err == nil {
		t.Fatal("B was created: the plan computed under the lock was not cut")
	}
}
