package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
)

// The renderers of a configuration with environments: one section per environment, in
// the order of the document, each headed with the environment's name and the server it
// reached, and a summary of every environment.

// targetIdentity names the server a plan was made against: its redacted URL, server
// name, cluster, domain, account and API level.
func targetIdentity(t plan.Target) string {
	if t.URL == "" && t.Server == "" {
		return "not reached"
	}
	var extra []string
	for _, kv := range [][2]string{{"server", t.Server}, {"cluster", t.Cluster}, {"domain", t.Domain}, {"account", t.Account}} {
		if kv[1] != "" {
			extra = append(extra, kv[0]+" "+kv[1])
		}
	}
	extra = append(extra, fmt.Sprintf("API level %d", t.APILevel))
	url := t.URL
	if url == "" {
		url = "(unknown URL)"
	}
	return fmt.Sprintf("%s (%s)", url, strings.Join(extra, ", "))
}

// envName is the environment a part is for, as headings write it.
func envName(p *plan.Plan) string {
	if p.Environment == "" {
		return "(default)"
	}
	return p.Environment
}

// planCounts is the one-line outcome of one environment's plan.
func planCounts(p *plan.Plan) string {
	if p.Error != "" {
		return "failed"
	}
	errs := len(finding.Errors(p.Findings))
	s := p.Summary
	var out string
	if !p.HasChanges() {
		out = "no changes"
	} else {
		out = fmt.Sprintf("%d to create, %d to update, %d to delete, %d to replace, %d to adopt", s.Create, s.Update, s.Delete, s.Replace, s.Adopt)
	}
	if errs > 0 {
		out += fmt.Sprintf(", %d error(s)", errs)
	}
	return out
}

// MultiText writes a plan of several environments for people: each environment's
// section, headed with its name and target, as Text writes a plan (or its error), then
// one line summarising every environment.
func MultiText(w io.Writer, m *plan.Multi, o TextOptions) error {
	var b strings.Builder
	var sums []string
	for i, p := range m.Environments {
		if i > 0 {
			b.WriteString("\n")
		}
		t := &textWriter{color: o.Color}
		fmt.Fprintf(&b, "%s\n", EnvHeading(p, o))
		if p.Error != "" {
			fmt.Fprintf(&b, "%s\n", t.paint(ansiRed, "Error: "+p.Error))
		} else if err := Text(&b, p, o); err != nil {
			return err
		}
		sums = append(sums, envName(p)+": "+planCounts(p))
	}
	fmt.Fprintf(&b, "\nEnvironments (%d): %s.\n", len(m.Environments), strings.Join(sums, "; "))
	_, err := io.WriteString(w, b.String())
	return err
}

// MultiJSON writes a plan of several environments as exactly one JSON document,
// each environment's plan as JSON writes it, with "environment" (and "error" for an
// environment that could not be planned).
func MultiJSON(w io.Writer, m *plan.Multi) error {
	doc := *m
	if doc.FormatVersion == "" {
		doc.FormatVersion = plan.FormatVersion
	}
	doc.Environments = make([]*plan.Plan, len(m.Environments))
	for i, p := range m.Environments {
		doc.Environments[i] = jsonPlan(p)
	}
	if err := WriteJSON(w, &doc); err != nil {
		return fmt.Errorf("write json plan: %w", err)
	}
	return nil
}

// MultiMarkdown writes a plan of several environments as one pull-request comment: a
// table with every environment's counts first, then one collapsible section per
// environment (open when it failed, has errors or destructive changes), each as
// Markdown writes a plan within its share of the room. The whole stays under
// markdownLimit characters.
func MultiMarkdown(w io.Writer, m *plan.Multi) error {
	_, err := io.WriteString(w, multiMarkdownDoc(m, markdownLimit))
	return err
}

// mdEnvReserve is kept for the line counting environments left out of the details.
const mdEnvReserve = 300

func multiMarkdownDoc(m *plan.Multi, limit int) string {
	var b strings.Builder
	failed, refused, changed := 0, 0, 0
	for _, p := range m.Environments {
		switch {
		case p.Error != "":
			failed++
		case p.HasErrors():
			refused++
		case p.HasChanges():
			changed++
		}
	}
	fmt.Fprintf(&b, "### natsplan plan: %d environment(s)", len(m.Environments))
	var state []string
	for _, kv := range []struct {
		n    int
		what string
	}{{changed, "with changes"}, {refused, "refused"}, {failed, "failed"}} {
		if kv.n > 0 {
			state = append(state, fmt.Sprintf("%d %s", kv.n, kv.what))
		}
	}
	if len(state) > 0 {
		b.WriteString(", " + strings.Join(state, ", "))
	}
	b.WriteString("\n\n| environment | creates | updates | deletes | destructive | errors |\n|---|---|---|---|---|---|\n")
	rows := make([]string, len(m.Environments))
	for i, p := range m.Environments {
		if p.Error != "" {
			rows[i] = fmt.Sprintf("| %s | | | | | failed |\n", mdCode(envName(p)))
			continue
		}
		s := p.Summary
		rows[i] = fmt.Sprintf("| %s | %d | %d | %d | %d | %d |\n", mdCode(envName(p)), s.Create, s.Update+s.Replace+s.Adopt, s.Delete,
			len(destructiveChanges(p)), len(finding.Errors(p.Findings)))
	}
	// The table gets at most half the room; environments beyond it are counted.
	for i, r := range rows {
		if b.Len()+len(r) > limit/2 {
			fmt.Fprintf(&b, "\n%d more environment(s) not in the table for lack of room: run `natsplan show` on the plan file.\n", len(rows)-i)
			break
		}
		b.WriteString(r)
	}
	b.WriteString("\n")
	for i, p := range m.Environments {
		left := limit - b.Len() - mdEnvReserve
		share := left / (len(m.Environments) - i)
		sec, ok := mdEnvSection(p, share)
		if !ok {
			fmt.Fprintf(&b, "%d environment(s) not detailed for lack of room, from %s on: run `natsplan show` on the plan file, or plan with --env.\n",
				len(m.Environments)-i, mdCode(envName(p)))
			break
		}
		b.WriteString(sec)
	}
	return b.String()
}

// mdEnvSection is one environment's collapsible section within budget characters;
// false when not even its summary line fits.
func mdEnvSection(p *plan.Plan, budget int) (string, bool) {
	open := ""
	if p.Error != "" || p.HasErrors() || len(destructiveChanges(p)) > 0 {
		open = " open"
	}
	head := fmt.Sprintf("<details%s><summary><b>%s</b>: %s — %s</summary>\n\n", open, mdPlain(envName(p)), mdPlain(targetIdentity(p.Target)), mdPlain(planCounts(p)))
	const tail = "\n</details>\n\n"
	room := budget - len(head) - len(tail)
	if room < 0 {
		return "", false
	}
	var body string
	if p.Error != "" {
		body = "> [!CAUTION]\n> **Not planned**: " + mdPlain(p.Error) + "\n"
		if len(body) > room {
			body = "> [!CAUTION]\n> **Not planned**: the error is too long for the room left; run the plan of this environment for it.\n"
		}
	} else {
		body = markdownDoc(p, room)
		if len(body) > room {
			// Destructive changes are always listed whole; when even that does not
			// fit this environment's share, say where to read them.
			body = fmt.Sprintf("**%s**\n\nThe plan of this environment does not fit in this comment: run `natsplan show` on the plan file, or plan with `--env %s`.\n",
				mdPlain(planCounts(p)), mdPlain(envName(p)))
		}
	}
	if len(body) > room {
		return "", false
	}
	return head + body + tail, true
}

// EnvDrift is the drift report of one environment: "environment", then the report's
// fields, or "error" when the environment could not be compared.
type EnvDrift struct {
	Environment string `json:"environment"`
	Error       string `json:"error,omitempty"`
	*plan.DriftReport
}

// driftCounts is the one-line outcome of one environment's drift.
func driftCounts(d *EnvDrift) string {
	if d.DriftReport == nil {
		return "failed"
	}
	if d.InSync() {
		return "in sync"
	}
	s := d.Summary
	return fmt.Sprintf("%d changed, %d missing, %d orphaned, %d unmanaged", s.Changed, s.Missing, s.Orphaned, s.Unmanaged)
}

func driftTarget(d *EnvDrift) plan.Target {
	if d.DriftReport == nil {
		return plan.Target{}
	}
	return d.Target
}

// DriftMultiText writes the drift of several environments: each one's section, headed
// with its name and target, then one line summarising every environment.
func DriftMultiText(w io.Writer, ds []*EnvDrift) error {
	var b strings.Builder
	var sums []string
	for i, d := range ds {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "=== environment %s: %s\n", d.Environment, targetIdentity(driftTarget(d)))
		if d.Error != "" {
			fmt.Fprintf(&b, "Error: %s\n", d.Error)
		}
		if d.DriftReport != nil {
			if err := DriftText(&b, d.DriftReport); err != nil {
				return err
			}
		}
		sums = append(sums, d.Environment+": "+driftCounts(d))
	}
	fmt.Fprintf(&b, "\nEnvironments (%d): %s.\n", len(ds), strings.Join(sums, "; "))
	_, err := io.WriteString(w, b.String())
	return err
}

// DriftMultiJSON writes the drift of several environments as one JSON document:
// {"environments": [...]}, "environment" in each.
func DriftMultiJSON(w io.Writer, ds []*EnvDrift) error {
	if ds == nil {
		ds = []*EnvDrift{}
	}
	return WriteJSON(w, struct {
		Environments []*EnvDrift `json:"environments"`
	}{ds})
}

// DriftMultiMarkdown writes the drift of several environments as one comment: a table
// of every environment's counts, then one collapsible section per environment (open
// when it drifted or failed), within markdownLimit characters.
func DriftMultiMarkdown(w io.Writer, ds []*EnvDrift) error {
	_, err := io.WriteString(w, driftMultiMarkdownDoc(ds, markdownLimit))
	return err
}

func driftMultiMarkdownDoc(ds []*EnvDrift, limit int) string {
	var b strings.Builder
	drifted, failed := 0, 0
	for _, d := range ds {
		switch {
		case d.Error != "":
			failed++
		case !d.InSync():
			drifted++
		}
	}
	fmt.Fprintf(&b, "### natsplan drift: %d environment(s), %d drifted", len(ds), drifted)
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	b.WriteString("\n\n| environment | changed | missing | orphaned | unmanaged | errors |\n|---|---|---|---|---|---|\n")
	for i, d := range ds {
		var r string
		if d.DriftReport == nil {
			r = fmt.Sprintf("| %s | | | | | failed |\n", mdCode(d.Environment))
		} else {
			s := d.Summary
			bad := "0"
			if d.Error != "" {
				bad = "incomplete"
			}
			r = fmt.Sprintf("| %s | %d | %d | %d | %d | %s |\n", mdCode(d.Environment), s.Changed, s.Missing, s.Orphaned, s.Unmanaged, bad)
		}
		if b.Len()+len(r) > limit/2 {
			fmt.Fprintf(&b, "\n%d more environment(s) not in the table for lack of room: run drift with --env.\n", len(ds)-i)
			break
		}
		b.WriteString(r)
	}
	b.WriteString("\n")
	for i, d := range ds {
		left := limit - b.Len() - mdEnvReserve
		share := left / (len(ds) - i)
		open := ""
		if d.Error != "" || !d.InSync() {
			open = " open"
		}
		head := fmt.Sprintf("<details%s><summary><b>%s</b>: %s — %s</summary>\n\n", open, mdPlain(d.Environment), mdPlain(targetIdentity(driftTarget(d))), mdPlain(driftCounts(d)))
		const tail = "\n</details>\n\n"
		var body strings.Builder
		if d.Error != "" {
			body.WriteString("> [!CAUTION]\n> " + mdPlain(d.Error) + "\n\n")
		}
		if d.DriftReport != nil {
			if err := DriftMarkdown(&body, d.DriftReport); err != nil {
				body.WriteString(mdPlain(err.Error()))
			}
		}
		sec := head + body.String() + tail
		if len(sec) > share {
			sec = head + fmt.Sprintf("The drift of this environment does not fit in this comment: run `natsplan drift --env %s`.\n", mdPlain(d.Environment)) + tail
		}
		if len(sec) > share {
			fmt.Fprintf(&b, "%d environment(s) not detailed for lack of room, from %s on: run drift with --env.\n", len(ds)-i, mdCode(d.Environment))
			break
		}
		b.WriteString(sec)
	}
	return b.String()
}
