package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
)

// update rewrites the golden files of the renderers: go test ./plan/render -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestMarkdownGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]*plan.Plan{
		"markdown_empty":   markdownEmptyPlan(),
		"markdown_mixed":   markdownMixedPlan(),
		"markdown_refused": markdownRefusedPlan(),
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, p); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".md")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./plan/render -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("markdown differs from %s (run with -update after checking):\n%s", golden, got)
			}
		})
	}
}

// TestMarkdownStaysPostable proves the size bound and that every destructive change is
// named whatever the plan's size, and that what is left out is counted.
func TestMarkdownStaysPostable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                      string
		creates, updates, deletes int
		replaces                  int
		// sequential names the deleted consumers worker-00000, worker-00001, ... as
		// generated consumers are; otherwise their names share no numbering.
		sequential bool
		reason     string
		wantForm   string // "table", "lines" or "grouped"
		wantAll    bool   // every destructive change is named
	}{
		{"small", 10, 10, 3, 1, false, "owned by this project and no longer declared", "table", true},
		{"5000 changes, 2000 deletes", 2000, 1000, 2000, 0, false,
			"owned by this project and no longer declared; its 12 messages are lost", "grouped", true},
		{"5000 changes, 1200 deletes and replaces", 2800, 1000, 1000, 200, false,
			"owned by this project and no longer declared; its 12 messages are lost", "lines", true},
		{"5000 changes, all destructive, generated names", 0, 0, 4000, 1000, true, "ack state is lost", "grouped", true},
		{"30000 deletes", 0, 0, 30000, 0, false, "gone", "grouped", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := bigPlan(tc.creates, tc.updates, tc.deletes, tc.replaces, tc.sequential, tc.reason)
			var buf bytes.Buffer
			if err := Markdown(&buf, p); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if len(out) > markdownLimit {
				t.Fatalf("markdown is %d characters, over the %d limit", len(out), markdownLimit)
			}
			head := fmt.Sprintf("**%d to create, %d to update, %d to delete, %d to replace, 0 to adopt.**",
				tc.creates, tc.updates, tc.deletes, tc.replaces)
			if !strings.Contains(out, head) {
				t.Errorf("counts missing: want %q", head)
			}
			listed, form, notListed := parseDestructive(t, out)
			if form != tc.wantForm {
				t.Errorf("destructive list in %s form, want %s", form, tc.wantForm)
			}
			destructive := 0
			for _, c := range p.Changes {
				if c.Action != plan.ActDelete && c.Action != plan.ActReplace {
					continue
				}
				destructive++
				if tc.wantAll && !listed[string(c.Action)+" "+c.Address] {
					t.Fatalf("destructive change %s %s is not listed", c.Action, c.Address)
				}
			}
			if tc.wantAll {
				if notListed != 0 || len(listed) != destructive {
					t.Errorf("listed %d of %d destructive changes, %d said missing", len(listed), destructive, notListed)
				}
			} else if notListed == 0 || len(listed)+notListed != destructive {
				t.Errorf("listed %d and counted %d missing, want %d in all", len(listed), notListed, destructive)
			}
			// The non-destructive tail is summarised, not dropped silently.
			if shown := strings.Count(out, "\n+ create "); shown < tc.creates && !strings.Contains(out, "more changes not shown") {
				t.Errorf("%d of %d creates shown and no summary of the rest", shown, tc.creates)
			}
		})
	}
}

// parseDestructive reads back the destructive section: the set of "action address"
// it names, the form it used, and how many it says it left out.
func parseDestructive(t *testing.T, out string) (map[string]bool, string, int) {
	t.Helper()
	start := strings.Index(out, "> [!CAUTION]")
	if start < 0 {
		t.Fatal("no destructive section")
	}
	section := out[start:]
	if end := strings.Index(section, "\n<details>"); end >= 0 {
		section = section[:end]
	}
	listed := map[string]bool{}
	form, notListed := "", 0
	for _, line := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(line, "| delete |"), strings.HasPrefix(line, "| replace |"):
			form = "table"
			cells := strings.Split(line, "|")
			listed[strings.TrimSpace(cells[1])+" "+strings.Trim(strings.TrimSpace(cells[2]), "`")] = true
		case strings.HasPrefix(line, "- ") && strings.Contains(line, "*`: "):
			form = "grouped"
			head, names, _ := strings.Cut(line[2:], ": ")
			fields := strings.Fields(head)
			action, prefix := fields[0], strings.TrimSuffix(strings.Trim(fields[2], "`"), "*")
			for _, entry := range strings.Split(strings.TrimSuffix(names, " ..."), ", ") {
				for _, n := range expandRun(entry) {
					listed[action+" "+prefix+strings.ReplaceAll(n, `\_`, "_")] = true
				}
			}
		case strings.HasPrefix(line, "- delete `"), strings.HasPrefix(line, "- replace `"):
			form = "lines"
			fields := strings.Fields(line)
			listed[fields[1]+" "+strings.Trim(fields[2], "`")] = true
		case strings.Contains(line, "more destructive change(s) not listed"):
			if _, err := fmt.Sscanf(line, "**%d more", &notListed); err != nil {
				t.Fatalf("bad note %q: %v", line, err)
			}
		}
	}
	return listed, form, notListed
}

// bigPlan builds a plan of realistic addresses: streams and their worker consumers.
func bigPlan(creates, updates, deletes, replaces int, sequential bool, reason string) *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Target: plan.Target{Server: "n1", Cluster: "prod"}}
	add := func(n int, a plan.Action, f func(i int) *plan.Change) {
		for i := range n {
			c := f(i)
			c.Action = a
			p.Changes = append(p.Changes, c)
		}
	}
	add(creates, plan.ActCreate, func(i int) *plan.Change {
		return &plan.Change{Kind: "stream", Name: fmt.Sprintf("EVENTS_%05d", i), Address: fmt.Sprintf("stream.EVENTS_%05d", i),
			Decl: fmt.Sprintf("streams.hcl:%d:1", i*12+1)}
	})
	add(updates, plan.ActUpdate, func(i int) *plan.Change {
		return &plan.Change{Kind: "consumer", Stream: "ORDERS", Name: fmt.Sprintf("audit-%05d", i),
			Address: fmt.Sprintf("consumer.ORDERS.audit-%05d", i), Fields: []*plan.FieldChange{
				{Path: "ack_wait", Before: json.Number("30000000000"), After: json.Number("60000000000"), Rule: plan.RuleInPlace}}}
	})
	add(deletes, plan.ActDelete, func(i int) *plan.Change {
		stream, name := fmt.Sprintf("ORDERS_%d", i%7), fmt.Sprintf("worker-%08x", uint32(i)*2654435761)
		if sequential {
			stream, name = fmt.Sprintf("ORDERS_%d", i/700), fmt.Sprintf("worker-%05d", i)
		}
		return &plan.Change{Kind: "consumer", Stream: stream, Name: name,
			Address: "consumer." + stream + "." + name, Destructive: true, Reason: reason}
	})
	add(replaces, plan.ActReplace, func(i int) *plan.Change {
		return &plan.Change{Kind: "consumer", Stream: "PAYMENTS", Name: fmt.Sprintf("lane-%05d", i),
			Address: fmt.Sprintf("consumer.PAYMENTS.lane-%05d", i), Destructive: true, Reason: reason,
			Fields: []*plan.FieldChange{{Path: "deliver_policy", Before: "all", After: "new", Rule: plan.RuleImmutable}}}
	})
	for _, c := range p.Changes {
		switch c.Action {
		case plan.ActCreate:
			p.Summary.Create++
		case plan.ActUpdate:
			p.Summary.Update++
		case plan.ActDelete:
			p.Summary.Delete++
		case plan.ActReplace:
			p.Summary.Replace++
		}
	}
	for i := range 300 {
		p.Findings = append(p.Findings, &finding.Finding{Code: "NP102", Severity: finding.SevWarning,
			Address: fmt.Sprintf("consumer_group.g%d", i), Message: "4 workers x fetch_batch 100 > max_ack_pending 100: workers idle"})
	}
	for i := range 300 {
		p.Unmanaged = append(p.Unmanaged, &plan.Object{Kind: "stream", Name: fmt.Sprintf("LEGACY_%d", i),
			Address: fmt.Sprintf("stream.LEGACY_%d", i), Reason: "not declared and not owned"})
	}
	return p
}

func markdownEmptyPlan() *plan.Plan {
	return &plan.Plan{FormatVersion: plan.FormatVersion,
		Target: plan.Target{URL: "nats://127.0.0.1:4222", Server: "n1", Cluster: "east", Account: "SHOP", APILevel: 5}}
}

func markdownRefusedPlan() *plan.Plan {
	p := markdownEmptyPlan()
	p.Findings = []*finding.Finding{
		{Code: "NP101", Severity: finding.SevError, Address: "consumer_group.fulfilment", Range: "shop.hcl:31:5",
			Message: "fetch_batch 100 > max_ack_pending 50: each fetch waits out its timeout; lower fetch_batch to 50"},
		{Code: "NP303", Severity: finding.SevError, Address: "stream.ORDERS", Range: "shop.hcl:3:3",
			Message: "storage can not change after creation:\ncreate a new stream and source the old one into it"},
	}
	// The refused change is listed, blocked, with every difference.
	p.Changes = []*plan.Change{{Address: "stream.ORDERS", Kind: "stream", Name: "ORDERS", Action: plan.ActUpdate,
		Decl: "shop.hcl:1:1", Blocked: "the server refuses to change storage (NP303)",
		Fields: []*plan.FieldChange{
			{Path: "max_msgs", Before: json.Number("-1"), After: json.Number("10"), Rule: plan.RuleInPlace},
			{Path: "storage", Before: "file", After: "memory", Rule: plan.RuleImmutable, Blocked: true}}}}
	p.Summary.Blocked = 1
	return p
}

func markdownMixedPlan() *plan.Plan {
	p := markdownEmptyPlan()
	p.Target.Domain = "hub"
	p.Changes = []*plan.Change{
		{Address: "stream.ORDERS", Kind: "stream", Name: "ORDERS", Action: plan.ActCreate, Decl: "shop.hcl:12:1"},
		{Address: "kv.sessions", Kind: "kv", Name: "KV_sessions", Action: plan.ActUpdate, Decl: "shop.hcl:40:1",
			Fields: []*plan.FieldChange{
				{Path: "max_age", Before: json.Number("3600000000000"), After: json.Number("7200000000000"), Rule: plan.RuleInPlace},
				{Path: "max_msgs_per_subject", Before: json.Number("5"), After: json.Number("10"), Rule: plan.RuleInPlace}}},
		{Address: "stream.EVENTS", Kind: "stream", Name: "EVENTS", Action: plan.ActUpdate, Phase: "1/2",
			Fields: []*plan.FieldChange{{Path: "num_replicas", Before: json.Number("1"), After: json.Number("3"), Rule: plan.RuleSeparateStep}}},
		{Address: "stream.EVENTS", Kind: "stream", Name: "EVENTS", Action: plan.ActUpdate, Phase: "2/2",
			Fields: []*plan.FieldChange{{Path: "placement.cluster", Before: nil, After: "east", Rule: plan.RuleSeparateStep}}},
		{Address: "object_store.assets", Kind: "object_store", Name: "OBJ_assets", Action: plan.ActAdopt,
			Reason: "exists on the server without a natsplan mark: adopting writes natsplan.project = \"shop\""},
		{Address: "consumer.ORDERS.audit", Kind: "consumer", Stream: "ORDERS", Name: "audit", Action: plan.ActUpdate,
			Fields: []*plan.FieldChange{
				{Path: "backoff", Before: nil, After: []any{json.Number("1000000000"), json.Number("5000000000")}, Rule: plan.RuleInPlace},
				{Path: "description", Before: "old ```", After: "new | <b>pipe</b>", Rule: plan.RuleInPlace},
				{Path: "pause_until", Before: nil, After: "2026-12-01T00:00:00Z", Rule: plan.RuleInPlace, Via: "pause"}}},
		{Address: "consumer.ORDERS.fulfilment-3", Kind: "consumer", Stream: "ORDERS", Name: "fulfilment-3",
			Action: plan.ActReplace, Destructive: true, Group: "consumer_group.fulfilment",
			Reason: "deliver_policy can not change on an existing consumer; lifecycle.replace_on_change deletes and re-creates it: its ack state is lost",
			Fields: []*plan.FieldChange{{Path: "deliver_policy", Before: "all", After: "new", Rule: plan.RuleImmutable}}},
		{Address: "stream.OLD_ORDERS", Kind: "stream", Name: "OLD_ORDERS", Action: plan.ActDelete, Destructive: true,
			Reason: "owned by this project and no longer declared; its 1200 messages are lost"},
		{Address: "consumer.OLD_ORDERS.report", Kind: "consumer", Stream: "OLD_ORDERS", Name: "report", Action: plan.ActDelete,
			Reason: "no longer declared; its stream is deleted too"},
	}
	p.Summary = plan.Summary{Create: 1, Update: 4, Delete: 2, Replace: 1, Adopt: 1}
	p.Findings = []*finding.Finding{
		{Code: "NP301", Severity: finding.SevError, Address: "stream.OLD_ORDERS", Overridable: "allow-data-loss",
			Message: "deleting stream OLD_ORDERS loses 1200 messages: apply with --allow-data-loss"},
		{Code: "NP108", Severity: finding.SevWarning, Address: "consumer.ORDERS.audit", Range: "shop.hcl:20:3",
			Message: "max_deliver is set with no dead_letter: messages vanish silently"},
	}
	p.Unmanaged = []*plan.Object{
		{Address: "stream.LEGACY_x", Kind: "stream", Name: "LEGACY_x", Reason: "not declared and not owned"},
		{Address: "kv.config", Kind: "kv", Name: "KV_config", Owner: "billing", Reason: "owned by project billing"},
	}
	return p
}

// expandRun is the inverse of one compressRuns entry.
func expandRun(text string) []string {
	open := strings.LastIndex(text, "{")
	if open < 0 || !strings.HasSuffix(text, "}") {
		return []string{text}
	}
	lo, hi, ok := strings.Cut(text[open+1:len(text)-1], "..")
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	if !ok || errA != nil || errB != nil {
		return []string{text}
	}
	width := 0
	if len(lo) > 1 && lo[0] == '0' {
		width = len(lo)
	}
	var out []string
	for v := a; v <= b; v++ {
		out = append(out, fmt.Sprintf("%s%0*d", text[:open], width, v))
	}
	return out
}

// Single items larger than the whole comment are counted, not written, and can not
// push the comment over the limit or hide a destructive change.
func TestMarkdownHugeItems(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x|`<", 50_000)
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Summary: plan.Summary{Update: 100, Delete: 1}}
	p.Changes = append(p.Changes, &plan.Change{Address: "stream.HUGE", Kind: "stream", Name: "HUGE",
		Action: plan.ActDelete, Destructive: true, Reason: huge})
	for i := range 100 {
		p.Changes = append(p.Changes, &plan.Change{Address: fmt.Sprintf("stream.S%d", i), Kind: "stream",
			Action: plan.ActUpdate, Fields: []*plan.FieldChange{{Path: "description", Before: "", After: huge[:10_000]}}})
	}
	p.Findings = []*finding.Finding{{Code: "NP303", Severity: finding.SevError, Address: "stream.S1", Message: huge}}
	var buf bytes.Buffer
	if err := Markdown(&buf, p); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if len(out) > markdownLimit {
		t.Fatalf("markdown is %d characters", len(out))
	}
	listed, _, notListed := parseDestructive(t, out)
	if !listed["delete stream.HUGE"] || notListed != 0 {
		t.Errorf("the destructive change is not listed: %v", listed)
	}
	for _, want := range []string{"1 more errors not shown", "more changes not shown"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}
