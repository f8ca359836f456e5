package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/plan"
)

// multiFixture is a plan of four environments: one with changes (destructive among
// them), one refused, one in sync and one that could not be reached.
func multiFixture() *plan.Multi {
	mixed := markdownMixedPlan()
	mixed.Environment = "prod"
	refused := markdownRefusedPlan()
	refused.Environment = "staging"
	empty := markdownEmptyPlan()
	empty.Environment = "dev"
	failed := &plan.Plan{FormatVersion: plan.FormatVersion, Environment: "dr", Error: "no server at nats://10.0.0.9:4222: start one"}
	return &plan.Multi{FormatVersion: plan.FormatVersion, NatsplanVersion: "test", Environments: []*plan.Plan{mixed, refused, empty, failed}}
}

func TestMultiText(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := MultiText(&buf, multiFixture(), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	heads := []string{
		"=== environment prod: nats://127.0.0.1:4222 (server n1, cluster east, domain hub, account SHOP, API level 5)\n",
		"=== environment staging: nats://127.0.0.1:4222 (server n1, cluster east, account SHOP, API level 5)\n",
		"=== environment dev: nats://127.0.0.1:4222 (server n1, cluster east, account SHOP, API level 5)\n",
		"=== environment dr: not reached\nError: no server at nats://10.0.0.9:4222: start one\n",
	}
	at := 0
	for _, h := range heads {
		i := strings.Index(out[at:], h)
		if i < 0 {
			t.Fatalf("section %q missing or out of order in:\n%s", h, out)
		}
		at += i + len(h)
	}
	if !strings.Contains(out, "No changes. The server matches the configuration.") {
		t.Errorf("dev's section is not its plan:\n%s", out)
	}
	last := out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:]
	want := "Environments (4): prod: 1 to create, 1 to update, 1 to delete, 1 to replace, 0 to adopt; staging: 1 to create"
	if !strings.HasPrefix(last, "Environments (4): prod: ") || !strings.Contains(last, "staging: ") || !strings.Contains(last, "2 error(s)") ||
		!strings.Contains(last, "dev: no changes") || !strings.Contains(last, "dr: failed") {
		t.Errorf("summary line %q, want one like %q naming every environment", last, want)
	}
}

func TestMultiJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := MultiJSON(&buf, multiFixture()); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	var doc struct {
		FormatVersion string                       `json:"format_version"`
		Environments  []map[string]json.RawMessage `json:"environments"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Fatal("more than one JSON document")
	}
	if doc.FormatVersion != plan.FormatVersion || len(doc.Environments) != 4 {
		t.Fatalf("document %+v", doc)
	}
	for i, want := range []string{"prod", "staging", "dev", "dr"} {
		e := doc.Environments[i]
		if string(e["environment"]) != `"`+want+`"` {
			t.Errorf("environment %d is %s, want %q", i, e["environment"], want)
		}
		if string(e["changes"]) == "null" || string(e["findings"]) == "null" {
			t.Errorf("%s: null lists in %v", want, e)
		}
	}
	if _, ok := doc.Environments[3]["error"]; !ok {
		t.Error("the failed environment has no error")
	}
	if _, ok := doc.Environments[0]["error"]; ok {
		t.Error("a planned environment has an error")
	}
}

func TestMultiMarkdown(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := MultiMarkdown(&buf, multiFixture()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"### natsplan plan: 4 environment(s), 2 refused, 1 failed\n",
		"| environment | creates | updates | deletes | destructive | errors |\n",
		"| `prod` | 1 | 6 | 2 | 3 | 1 |\n",
		"| `staging` | 0 | 0 | 0 | 0 | 2 |\n",
		"| `dev` | 0 | 0 | 0 | 0 | 0 |\n",
		"| `dr` | | | | | failed |\n",
		"<details open><summary><b>prod</b>: ",
		"<details open><summary><b>staging</b>: ",
		"<details><summary><b>dev</b>: ",
		"<details open><summary><b>dr</b>: not reached — failed</summary>",
		"**Not planned**: no server at nats://10.0.0.9:4222: start one",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "| `prod` |") > strings.Index(out, "<details") {
		t.Error("the summary table does not come first")
	}
}

// TestMultiMarkdownStaysPostable: however many environments and however large their
// plans, the comment stays under the limit, and every environment is either detailed
// or counted.
func TestMultiMarkdownStaysPostable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                      string
		envs                      int
		creates, updates, deletes int
	}{
		{"3 large plans", 3, 2000, 1000, 2000},
		{"12 large plans", 12, 2000, 1000, 2000},
		{"3000 small plans", 3000, 1, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &plan.Multi{FormatVersion: plan.FormatVersion}
			for i := range tc.envs {
				p := bigPlan(tc.creates, tc.updates, tc.deletes, 0, false, "owned by this project and no longer declared")
				if tc.envs > 100 {
					p.Findings, p.Unmanaged = nil, nil
				}
				p.Environment = fmt.Sprintf("env-%04d", i)
				m.Environments = append(m.Environments, p)
			}
			var buf bytes.Buffer
			if err := MultiMarkdown(&buf, m); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if len(out) > markdownLimit {
				t.Fatalf("markdown is %d characters, over the %d limit", len(out), markdownLimit)
			}
			if strings.Count(out, "<details") != strings.Count(out, "</details>") {
				t.Error("unbalanced <details>")
			}
			rows := strings.Count(out, "\n| `env-")
			if rows < tc.envs && !strings.Contains(out, fmt.Sprintf("%d more environment(s) not in the table", tc.envs-rows)) {
				t.Errorf("%d of %d environments in the table and no count of the rest", rows, tc.envs)
			}
			detailed := strings.Count(out, "<summary><b>env-")
			if detailed < tc.envs && !strings.Contains(out, fmt.Sprintf("%d environment(s) not detailed", tc.envs-detailed)) {
				t.Errorf("%d of %d environments detailed and no count of the rest", detailed, tc.envs)
			}
			if tc.envs <= 12 && detailed != tc.envs {
				t.Errorf("%d of %d environments detailed", detailed, tc.envs)
			}
		})
	}
}

func TestDriftMulti(t *testing.T) {
	t.Parallel()
	drifted := plan.Drifted(markdownMixedPlan(), false)
	inSync := plan.Drifted(markdownEmptyPlan(), false)
	ds := []*EnvDrift{
		{Environment: "prod", DriftReport: drifted},
		{Environment: "dev", DriftReport: inSync},
		{Environment: "dr", Error: "no server at nats://10.0.0.9:4222"},
	}
	var buf bytes.Buffer
	if err := DriftMultiJSON(&buf, ds); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Environments []map[string]json.RawMessage `json:"environments"`
	}
	dec := json.NewDecoder(&buf)
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("not one JSON document: %v", err)
	}
	if len(doc.Environments) != 3 || string(doc.Environments[0]["environment"]) != `"prod"` || doc.Environments[0]["drift"] == nil ||
		doc.Environments[2]["error"] == nil || doc.Environments[2]["drift"] != nil {
		t.Errorf("drift document %v", doc.Environments)
	}
	buf.Reset()
	if err := DriftMultiText(&buf, ds); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"=== environment prod: nats://127.0.0.1:4222 (server n1", "=== environment dev: ", "No drift: the server matches the files.",
		"=== environment dr: not reached\nError: no server at", "Environments (3): prod: ", "dev: in sync; dr: failed."} {
		if !strings.Contains(text, want) {
			t.Errorf("drift text lacks %q:\n%s", want, text)
		}
	}
	buf.Reset()
	if err := DriftMultiMarkdown(&buf, ds); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"### natsplan drift: 3 environment(s), 1 drifted, 1 failed", "| `dr` | | | | | failed |",
		"<details open><summary><b>prod</b>", "<details><summary><b>dev</b>", "<details open><summary><b>dr</b>"} {
		if !strings.Contains(md, want) {
			t.Errorf("drift markdown lacks %q:\n%s", want, md)
		}
	}
}
