package status

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan/render"
)

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
)

// Text writes r for people: a table with one line per consumer, each group's lanes
// folded under it, the dead-letter streams, then the findings compiler-style with
// the counters that prove them and what to change.
func Text(w io.Writer, r *Report, color bool) error {
	paint := func(code, s string) string {
		if !color || code == "" {
			return s
		}
		return code + s + ansiReset
	}
	var b bytes.Buffer
	target := ""
	if r.Target != nil {
		target = r.Target.URL + ", "
	}
	fmt.Fprintf(&b, "Status of %s%s\n\n", target, r.Time.UTC().Format(time.RFC3339))
	rated := r.Interval > 0
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := "CONSUMER\tPENDING\tIN FLIGHT\tREDELIVERED\tWAITING\tLAST DELIVERY\tLAST ACK\tDLQ"
	if rated {
		head += "\tDELIVERED/S\tACKED/S\tREDELIVERED/S\tPENDING/S\tDRAIN"
	}
	fmt.Fprintln(tw, paint(ansiBold, head))
	dlq := map[string]*DeadLetter{}
	for _, d := range r.DeadLetters {
		dlq[d.Stream] = d
	}
	grouped := map[string]bool{}
	for _, g := range r.Groups {
		members := map[string]bool{}
		for _, n := range g.Consumers {
			members[n] = true
		}
		if !g.Partitions && len(g.Consumers) == 1 {
			// A shared group is one consumer: one line, named by the group.
			for _, c := range r.Consumers {
				if c.Group == g.Address {
					grouped[c.Address] = true
					fmt.Fprintln(tw, consumerLine(c, g.Address+" ("+c.Stream+"/"+c.Name+")", r.Time, dlq, rated, paint)+groupDrain(g, rated))
				}
			}
			continue
		}
		cols := []string{
			fmt.Sprintf("%s (%s, %d consumers)", g.Address, g.Stream, len(g.Consumers)),
			fmt.Sprint(g.NumPending), fmt.Sprintf("%d/%d", g.NumAckPending, g.MaxAckPending),
			fmt.Sprint(g.NumRedelivered), fmt.Sprint(g.NumWaiting), "", "", dlqCell(g.DeadLetter, dlq),
		}
		if rated {
			cols = append(cols, rateCells(g.Rates)...)
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+groupDrain(g, rated))
		for _, c := range r.Consumers {
			if c.Group == g.Address {
				grouped[c.Address] = true
				fmt.Fprintln(tw, consumerLine(c, "  "+c.Stream+"/"+c.Name, r.Time, nil, rated, paint))
			}
		}
	}
	for _, c := range r.Consumers {
		if grouped[c.Address] {
			continue
		}
		label := c.Address
		if !c.Declared {
			label += " (not declared)"
		}
		fmt.Fprintln(tw, consumerLine(c, label, r.Time, dlq, rated, paint))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.DeadLetters) > 0 {
		b.WriteString("\nDead letters:\n")
		for _, d := range r.DeadLetters {
			switch {
			case d.Missing:
				fmt.Fprintf(&b, "  %s: %s (for %s)\n", d.Address, paint(ansiRed, "missing on the server"), strings.Join(d.For, ", "))
			case d.Newest != nil:
				fmt.Fprintf(&b, "  %s: %d message(s), the newest %s ago (for %s)\n", d.Address, d.Msgs, age(r.Time.Sub(*d.Newest)), strings.Join(d.For, ", "))
			default:
				fmt.Fprintf(&b, "  %s: %d message(s) (for %s)\n", d.Address, d.Msgs, strings.Join(d.For, ", "))
			}
		}
	}
	for _, o := range r.Offline {
		fmt.Fprintf(&b, "unreadable: %s\n", o)
	}
	if missing := r.Missing(); len(missing) > 0 {
		b.WriteString("\n")
		for _, c := range missing {
			where := c.Decl
			if where == "" {
				where = "natsplan"
			}
			fmt.Fprintf(&b, "%s: %s: %s is declared but not on the server (deleted outside natsplan, or never applied): run natsplan plan to see the change that restores it\n",
				where, paint(ansiRed, "missing"), c.Address)
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n")
		for _, f := range r.Findings {
			if err := render.Findings(&b, []*finding.Finding{&f.Finding}, color); err != nil {
				return err
			}
			fmt.Fprintf(&b, "    counters: %s\n", counterText(f.Counters))
			fmt.Fprintf(&b, "    fix: %s\n", f.Fix)
		}
	}
	b.WriteString("\n")
	n := len(r.Consumers) - len(r.Missing())
	if r.Healthy() {
		b.WriteString(paint(ansiBold, fmt.Sprintf("Healthy: no condition holds on %d consumer(s).", n)))
	} else {
		b.WriteString(paint(ansiBold, fmt.Sprintf("%d condition(s) hold, %d declared consumer(s) missing, on %d consumer(s) read.", len(r.Findings), len(r.Missing()), n)))
	}
	b.WriteString("\n")
	// The table pads every cell, the empty last ones too: drop what trails a line.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func consumerLine(c *Consumer, label string, now time.Time, dlq map[string]*DeadLetter, rated bool, paint func(string, string) string) string {
	if c.Missing {
		return label + "\t" + paint(ansiRed, "missing")
	}
	cols := []string{label, fmt.Sprint(c.NumPending), fmt.Sprintf("%d/%s", c.NumAckPending, limit(c.MaxAckPending)),
		fmt.Sprint(c.NumRedelivered), waiting(c), ago(c.LastDelivery, now), ago(c.LastAck, now), ""}
	if dlq != nil {
		cols[7] = dlqCell(c.DeadLetter, dlq)
	}
	if rated {
		cols = append(cols, rateCells(c.Rates)...)
	}
	return strings.Join(cols, "\t")
}

func waiting(c *Consumer) string {
	switch {
	case c.Paused:
		return "paused"
	case c.PushBound:
		return "push"
	}
	return fmt.Sprint(c.NumWaiting)
}

func limit(n int) string {
	if n <= 0 {
		return "∞"
	}
	return fmt.Sprint(n)
}

func ago(t *time.Time, now time.Time) string {
	if t == nil {
		return "never"
	}
	return age(now.Sub(*t))
}

func dlqCell(stream string, dlq map[string]*DeadLetter) string {
	d := dlq[stream]
	switch {
	case stream == "" || d == nil:
		return "-"
	case d.Missing:
		return stream + ": missing"
	}
	return fmt.Sprintf("%s: %d", stream, d.Msgs)
}

func rateCells(r *Rates) []string {
	if r == nil {
		return []string{"", "", "", "", ""}
	}
	return []string{fmt.Sprintf("%.1f", r.Delivered), fmt.Sprintf("%.1f", r.Acked), fmt.Sprintf("%.1f", r.Redelivered), fmt.Sprintf("%+.1f", r.PendingGrowth), ""}
}

// groupDrain fills the DRAIN cell of a group's line (the last column).
func groupDrain(g *Group, rated bool) string {
	if !rated || g.Rates == nil {
		return ""
	}
	switch {
	case g.DrainSeconds == nil:
		return "not draining"
	case *g.DrainSeconds == 0:
		return "drained"
	}
	return "~" + age(time.Duration(*g.DrainSeconds*float64(time.Second)))
}

// counterText renders counters as name=value pairs in name order.
func counterText(c map[string]any) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := c[k]
		switch x := v.(type) {
		case float64:
			v = fmt.Sprintf("%.1f", x)
		case []string:
			v = strings.Join(x, ",")
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(parts, " ")
}
