package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
)

// TextOptions tune the human-readable plan.
type TextOptions struct {
	// Color adds ANSI colours; set it only when writing to a terminal.
	Color bool
}

// Symbols of the actions in the text plan (docs/planning.md lists them).
var textSymbols = map[plan.Action]string{
	plan.ActCreate:  "+",
	plan.ActUpdate:  "~",
	plan.ActDelete:  "-",
	plan.ActReplace: "-/+",
	plan.ActAdopt:   "<=",
}

// ANSI colours per action.
var textColors = map[plan.Action]string{
	plan.ActCreate:  "\x1b[32m",
	plan.ActUpdate:  "\x1b[33m",
	plan.ActDelete:  "\x1b[31m",
	plan.ActReplace: "\x1b[35m",
	plan.ActAdopt:   "\x1b[36m",
}

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
	ansiYel   = "\x1b[33m"
)

// Text writes the plan in the style of terraform plan: one block per change with its
// symbol, the fields before -> after, the reason for every replace, delete and adopt,
// then the findings, the unmanaged objects and a summary line.
func Text(w io.Writer, p *plan.Plan, o TextOptions) error {
	t := &textWriter{color: o.Color}
	if banner := PartialBanner(p); banner != "" {
		t.line("%s", t.paint(ansiBold+ansiYel, banner))
		t.line("")
	}
	t.header(p)
	for _, ch := range p.Changes {
		t.change(ch)
	}
	t.findings(p.Findings)
	t.unmanaged(p.Unmanaged)
	t.summary(p)
	_, err := io.WriteString(w, t.b.String())
	return err
}

// PartialBanner is the warning a partial plan (--only) opens with: which patterns, and
// how many changes of the whole plan it leaves out. "" for a whole plan.
func PartialBanner(p *plan.Plan) string {
	if len(p.Only) == 0 {
		return ""
	}
	flags := make([]string, len(p.Only))
	for i, o := range p.Only {
		flags[i] = "--only " + o
	}
	noun := "changes are"
	if p.LeftOut == 1 {
		noun = "change is"
	}
	return fmt.Sprintf("PARTIAL PLAN: %s — %d other %s not shown and will not be applied",
		strings.Join(flags, " "), p.LeftOut, noun)
}

type textWriter struct {
	b     strings.Builder
	color bool
}

func (t *textWriter) paint(code, s string) string {
	if !t.color || code == "" {
		return s
	}
	return code + s + ansiReset
}

func (t *textWriter) line(format string, args ...any) {
	fmt.Fprintf(&t.b, format, args...)
	t.b.WriteByte('\n')
}

func (t *textWriter) header(p *plan.Plan) {
	tg := p.Target
	where := tg.URL
	var extra []string
	for _, kv := range [][2]string{{"server", tg.Server}, {"cluster", tg.Cluster}, {"domain", tg.Domain}, {"account", tg.Account}} {
		if kv[1] != "" {
			extra = append(extra, kv[0]+" "+kv[1])
		}
	}
	extra = append(extra, fmt.Sprintf("API level %d", tg.APILevel))
	if where == "" {
		where = "(unknown target)"
	}
	t.line("natsplan plan for %s (%s)", where, strings.Join(extra, ", "))
	if len(p.Changes) > 0 {
		t.line("")
		t.line("Actions: + create, ~ update, - delete, -/+ replace, <= adopt")
	}
}

func (t *textWriter) change(ch *plan.Change) {
	sym := textSymbols[ch.Action]
	col := textColors[ch.Action]
	t.line("")
	title := fmt.Sprintf("%s %s", sym, ch.Address)
	var notes []string
	notes = append(notes, fmt.Sprintf("step %d", ch.Step))
	if ch.Phase != "" {
		notes = append(notes, "part "+ch.Phase)
	}
	if ch.Destructive {
		notes = append(notes, "destructive")
	}
	if ch.Blocked != "" {
		notes = append(notes, "BLOCKED")
	}
	if ch.Decl != "" {
		notes = append(notes, ch.Decl)
	}
	if ch.Group != "" {
		notes = append(notes, ch.Group)
	}
	t.line("  %s  %s", t.paint(col+ansiBold, title), t.paint("", "# "+strings.Join(notes, ", ")))
	if ch.Reason != "" {
		t.line("      # %s", ch.Reason)
	}
	if ch.Blocked != "" {
		t.line("      # %s", t.paint(ansiRed, "blocked: "+ch.Blocked))
	}
	if len(ch.DependsOn) > 0 && ch.Action != plan.ActDelete { // deletes run last anyway
		t.line("      # after %s", strings.Join(ch.DependsOn, ", "))
	}
	switch ch.Action {
	case plan.ActCreate:
		t.configLines(ch.After, "+", col)
	case plan.ActDelete:
		// The reason says it all; the config is in the JSON plan.
	default:
		for _, f := range ch.Fields {
			t.fieldLine(f, ch.Action, col)
		}
	}
}

// configLines lists every field of a created object.
func (t *textWriter) configLines(raw json.RawMessage, sym, col string) {
	var cfg map[string]any
	if err := decodeNumbers(raw, &cfg); err != nil {
		return
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.line("      %s %s = %s", t.paint(col, sym), k, textValue(k, cfg[k]))
	}
}

func (t *textWriter) fieldLine(f *plan.FieldChange, a plan.Action, col string) {
	var note string
	switch {
	case a == plan.ActReplace && (f.Rule == plan.RuleImmutable || f.Rule == plan.RuleCreateOnly):
		note = "  # forces replacement"
	case f.Via != "":
		note = "  # through the " + strings.ToUpper(f.Via) + " API"
	case f.Rule != plan.RuleInPlace && f.Rule != "":
		note = "  # " + strings.ReplaceAll(string(f.Rule), "_", " ")
	}
	if f.Blocked {
		note += t.paint(ansiRed, "  # blocked: the server refuses this change")
	}
	t.line("      %s %s: %s -> %s%s", t.paint(col, "~"), f.Path, textValue(f.Path, f.Before), textValue(f.Path, f.After), note)
}

func (t *textWriter) findings(fs []*finding.Finding) {
	for _, sev := range []finding.Severity{finding.SevError, finding.SevWarning, finding.SevInfo} {
		var list []*finding.Finding
		for _, f := range fs {
			if f.Severity == sev {
				list = append(list, f)
			}
		}
		if len(list) == 0 {
			continue
		}
		title, col := "Errors", ansiRed
		switch sev {
		case finding.SevWarning:
			title, col = "Warnings", ansiYel
		case finding.SevInfo:
			title, col = "Notes", ansiBold
		}
		t.line("")
		t.line("%s:", t.paint(col+ansiBold, title))
		for _, f := range list {
			where := strings.TrimSpace(f.Address + " " + f.Range)
			t.line("  %s %s %s", t.paint(col, string(f.Code)), sev, where)
			t.line("      %s", f.Message)
			if f.Overridable != "" {
				t.line("      (apply --%s accepts it)", f.Overridable)
			}
		}
	}
}

func (t *textWriter) unmanaged(objs []*plan.Object) {
	if len(objs) == 0 {
		return
	}
	t.line("")
	t.line("Unmanaged (on the server, not in the files; never touched):")
	for _, o := range objs {
		reason := o.Reason
		if reason == "" && o.Owner != "" {
			reason = "owned by project " + o.Owner
		}
		if reason != "" {
			reason = "  # " + reason
		}
		t.line("  %s (%s)%s", o.Address, o.Kind, reason)
	}
}

func (t *textWriter) summary(p *plan.Plan) {
	t.line("")
	s := p.Summary
	var errAddrs []string
	seen := map[string]bool{}
	errs := 0
	for _, f := range p.Findings {
		if f.Severity != finding.SevError {
			continue
		}
		errs++
		if !seen[f.Address] {
			seen[f.Address] = true
			errAddrs = append(errAddrs, f.Address)
		}
	}
	switch {
	case !p.HasChanges() && errs > 0:
		// Not "the server matches": the errors stand between the files and apply.
		t.b.WriteString(t.paint(ansiBold, "No changes planned."))
		t.b.WriteString(t.paint(ansiRed, fmt.Sprintf(" %d error(s) in %s: apply refuses this plan until they are fixed.", errs, listShort(errAddrs, 5))))
	case !p.HasChanges() && len(p.Only) > 0:
		// A partial plan says nothing about what it left out.
		t.b.WriteString(t.paint(ansiBold, fmt.Sprintf("No changes in what --only selects; %d other change(s) left out.", p.LeftOut)))
	case !p.HasChanges():
		t.b.WriteString(t.paint(ansiBold, "No changes. The server matches the configuration."))
	default:
		t.b.WriteString(t.paint(ansiBold, fmt.Sprintf("Plan: %d to create, %d to update, %d to delete, %d to replace, %d to adopt.",
			s.Create, s.Update, s.Delete, s.Replace, s.Adopt)))
		if s.Blocked > 0 {
			t.b.WriteString(t.paint(ansiRed, fmt.Sprintf(" %d blocked: the server refuses them.", s.Blocked)))
		}
		if errs > 0 {
			t.b.WriteString(t.paint(ansiRed, fmt.Sprintf(" %d error(s): apply refuses this plan until they are fixed (or, where an error names its flag, accepted with it).", errs)))
		}
	}
	t.b.WriteByte('\n')
}

// listShort joins the first n items and counts the rest.
func listShort(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
