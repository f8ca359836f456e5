package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/natsplan/natsplan/plan"
)

// DriftText writes a drift report for people.
func DriftText(w io.Writer, r *plan.DriftReport) error {
	var b strings.Builder
	if r.InSync() {
		b.WriteString("No drift: the server matches the files.\n")
		for _, o := range r.Foreign {
			fmt.Fprintf(&b, "= %s (%s)\n", o.Address, foreignNote(o))
		}
		b.WriteString(foreignSummary(r))
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, d := range r.Drift {
		fmt.Fprintf(&b, "%s %s (%s)\n", driftSymbol(d.Status), d.Address, d.Status)
		if d.Blocked != "" {
			fmt.Fprintf(&b, "    # blocked: %s\n", d.Blocked)
		}
		for _, f := range d.Fields {
			note := ""
			if f.Blocked {
				note = "  # blocked"
			}
			fmt.Fprintf(&b, "    %s: files %s, server %s%s\n", f.Path, textValue(f.Path, f.After), textValue(f.Path, f.Before), note)
		}
	}
	for _, o := range r.Unmanaged {
		fmt.Fprintf(&b, "? %s (unmanaged)\n", o.Address)
	}
	for _, o := range r.Foreign {
		fmt.Fprintf(&b, "= %s (%s)\n", o.Address, foreignNote(o))
	}
	s := r.Summary
	fmt.Fprintf(&b, "\nDrift: %d changed, %d missing, %d orphaned, %d unmanaged.\n", s.Changed, s.Missing, s.Orphaned, s.Unmanaged)
	b.WriteString(foreignSummary(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// DriftJSON writes the drift report as one JSON document.
func DriftJSON(w io.Writer, r *plan.DriftReport) error {
	return WriteJSON(w, r)
}

// DriftMarkdown writes the drift report for an issue or a pull-request comment.
func DriftMarkdown(w io.Writer, r *plan.DriftReport) error {
	var b strings.Builder
	s := r.Summary
	if r.InSync() {
		b.WriteString("### natsplan drift: in sync\n")
	} else {
		fmt.Fprintf(&b, "### natsplan drift: %d changed, %d missing, %d orphaned, %d unmanaged\n\n", s.Changed, s.Missing, s.Orphaned, s.Unmanaged)
		b.WriteString("| object | status | fields |\n|---|---|---|\n")
		for _, d := range r.Drift {
			var fields []string
			for _, f := range d.Fields {
				field := "`" + f.Path + "`"
				if f.Blocked {
					field += " (blocked)"
				}
				fields = append(fields, field)
			}
			status := d.Status
			if d.Blocked != "" {
				status += ", blocked"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", d.Address, status, strings.Join(fields, ", "))
		}
		for _, o := range r.Unmanaged {
			fmt.Fprintf(&b, "| `%s` | unmanaged | |\n", o.Address)
		}
	}
	if len(r.Foreign) > 0 {
		b.WriteString("\n| object of another project | owner |\n|---|---|\n")
		for _, o := range r.Foreign {
			fmt.Fprintf(&b, "| `%s` | %s |\n", o.Address, o.Owner)
		}
	}
	if s := foreignSummary(r); s != "" {
		b.WriteString("\n" + s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func driftSymbol(status plan.DriftStatus) string {
	switch status {
	case plan.DriftMissing:
		return "-"
	case plan.DriftOrphaned:
		return "+"
	}
	return "~"
}

func foreignNote(o *plan.Object) string { return "project " + o.Owner + "'s" }

// foreignSummary counts the other projects' objects, which are not drift, and says
// how to list them when they are not listed.
func foreignSummary(r *plan.DriftReport) string {
	n := r.Summary.Foreign
	if n == 0 {
		return ""
	}
	how := ""
	if len(r.Foreign) == 0 {
		how = "; --show-foreign lists them"
	}
	return fmt.Sprintf("%d object(s) marked by other projects are theirs, not drift%s.\n", n, how)
}
