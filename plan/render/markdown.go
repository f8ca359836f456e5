package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// markdownLimit is the most characters Markdown writes. GitHub refuses comments over
// 65,536 characters; the margin leaves room for a CI job's own header line.
const markdownLimit = 65000

// Markdown writes the plan for a pull-request comment: the counts and every
// destructive change first, then error findings, then the changes in collapsible
// sections per kind, warnings and unmanaged objects. It never writes more than
// markdownLimit characters: what does not fit is summarised at the end of its
// section, but destructive changes are always all listed, more compactly as the plan
// grows (see docs/ci.md).
func Markdown(w io.Writer, p *plan.Plan) error {
	_, err := io.WriteString(w, markdownDoc(p, markdownLimit))
	return err
}

// mdTailReserve is kept free for the closing notes of the sections after the
// destructive list, so that each can at least say what it left out.
const mdTailReserve = 1500

// markdownDoc renders p within limit characters.
func markdownDoc(p *plan.Plan, limit int) string {
	var b strings.Builder
	b.WriteString(mdHeader(p))
	destructive := destructiveChanges(p)
	b.WriteString(mdDestructive(destructive, limit-b.Len()-mdTailReserve))

	var errs, warns []*finding.Finding
	for _, f := range p.Findings {
		if f.Severity == finding.SevError {
			errs = append(errs, f)
		} else {
			warns = append(warns, f)
		}
	}
	// Errors may take half of what is left; the other sections share the rest
	// fairly, each passing on what it does not use, so one huge kind can not
	// crowd out the sections after it.
	var sections []mdSpec
	if len(errs) > 0 {
		sections = append(sections, mdSpec{fmt.Sprintf("**Errors (%d)**: apply refuses this plan until they are fixed (or, where an error names its flag, accepted with it).\n\n", len(errs)),
			"\n", mdFindingLines(errs), "errors"})
	}
	kinds, byKind := changesByKind(p.Changes)
	for _, k := range kinds {
		cs := byKind[k]
		sections = append(sections, mdSpec{fmt.Sprintf("<details><summary>%s: %s</summary>\n\n```diff\n", kindTitle(k), countActions(cs)),
			"```\n\n</details>\n\n", mdChangeBlocks(cs), "changes"})
	}
	if len(warns) > 0 {
		sections = append(sections, mdSpec{fmt.Sprintf("<details><summary>Warnings (%d)</summary>\n\n", len(warns)),
			"\n</details>\n\n", mdFindingLines(warns), "warnings"})
	}
	if len(p.Unmanaged) > 0 {
		var lines []string
		for _, o := range p.Unmanaged {
			lines = append(lines, "- "+mdCode(o.Address)+mdReason(o.Reason)+"\n")
		}
		sections = append(sections, mdSpec{
			fmt.Sprintf("<details><summary>Unmanaged (%d): on the server, not in the files, never touched</summary>\n\n", len(p.Unmanaged)),
			"\n</details>\n\n", lines, "objects"})
	}
	for i, sec := range sections {
		left := limit - b.Len()
		share := left / (len(sections) - i)
		if i == 0 && len(errs) > 0 && len(sections) > 1 {
			share = left / 2
		}
		b.WriteString(mdSection(sec, share))
	}
	return b.String()
}

// mdSpec is one section: its opening and closing text and its items.
type mdSpec struct {
	open, close string
	items       []string
	noun        string // what the items are, for the count of those left out
}

func mdHeader(p *plan.Plan) string {
	var b strings.Builder
	if len(p.Only) > 0 {
		flags := make([]string, len(p.Only))
		for i, o := range p.Only {
			flags[i] = mdCode("--only " + o)
		}
		noun := "changes are"
		if p.LeftOut == 1 {
			noun = "change is"
		}
		fmt.Fprintf(&b, "> [!WARNING]\n> **PARTIAL PLAN**: %s — %d other %s not shown and will not be applied.\n\n",
			strings.Join(flags, " "), p.LeftOut, noun)
	}
	s := p.Summary
	switch {
	case p.HasErrors():
		b.WriteString("### natsplan plan: refused\n\n")
	case !p.HasChanges() && len(p.Only) > 0:
		b.WriteString("### natsplan plan: no changes in what --only selects\n\n")
	case !p.HasChanges():
		b.WriteString("### natsplan plan: no changes\n\n")
	default:
		b.WriteString("### natsplan plan\n\n")
	}
	fmt.Fprintf(&b, "**%d to create, %d to update, %d to delete, %d to replace, %d to adopt.**",
		s.Create, s.Update, s.Delete, s.Replace, s.Adopt)
	if s.Blocked > 0 {
		fmt.Fprintf(&b, " **%d blocked**: the server refuses them; apply refuses the plan.", s.Blocked)
	}
	if n := len(destructiveChanges(p)); n > 0 {
		fmt.Fprintf(&b, " **%d destructive.**", n)
	}
	b.WriteString("\n\n")
	t := p.Target
	var target []string
	for _, kv := range [][2]string{{"server", t.Server}, {"cluster", t.Cluster}, {"domain", t.Domain}, {"account", t.Account}} {
		if kv[1] != "" {
			target = append(target, kv[0]+" "+mdCode(kv[1]))
		}
	}
	if len(target) > 0 {
		fmt.Fprintf(&b, "Target: %s.\n\n", strings.Join(target, ", "))
	}
	return b.String()
}

// destructiveChanges are the changes that lose data or ack state.
func destructiveChanges(p *plan.Plan) []*plan.Change {
	var out []*plan.Change
	for _, c := range p.Changes {
		if c.Destructive || c.Action == plan.ActDelete || c.Action == plan.ActReplace {
			out = append(out, c)
		}
	}
	return out
}

// mdDestructive lists every destructive change in the most readable form that fits
// in budget: a table with the reasons, one line each, or one line per action and
// stream naming all of them. Only when even that can not fit does it list what fits
// and count the rest, since the comment must stay postable.
func mdDestructive(cs []*plan.Change, budget int) string {
	if len(cs) == 0 {
		return ""
	}
	head := fmt.Sprintf("> [!CAUTION]\n> **%d destructive change(s)**: data or consumer ack state is lost.\n\n", len(cs))
	if s := head + mdDestructiveTable(cs); len(s) <= budget {
		return s
	}
	if s := head + mdDestructiveLines(cs); len(s) <= budget {
		return s
	}
	const noteRoom = 200
	list, shown := mdDestructiveGrouped(cs, budget-len(head)-noteRoom)
	s := head + list
	if shown < len(cs) {
		s += fmt.Sprintf("**%d more destructive change(s) not listed for lack of room**: run `natsplan show` on the plan file for all %d.\n\n",
			len(cs)-shown, len(cs))
	}
	return s
}

func mdDestructiveTable(cs []*plan.Change) string {
	var b strings.Builder
	b.WriteString("| action | object | why |\n|---|---|---|\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.Action, mdCode(c.Address), mdCell(c.Reason))
	}
	b.WriteString("\n")
	return b.String()
}

func mdDestructiveLines(cs []*plan.Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "- %s %s\n", c.Action, mdCode(c.Address))
	}
	b.WriteString("\n")
	return b.String()
}

// mdDestructiveGrouped writes one line per action and address prefix (a stream's
// consumers share "consumer.STREAM."), naming each object once, numbered runs as
// ranges (see compressRuns), and stops before budget; it returns the text and how
// many changes it named.
func mdDestructiveGrouped(cs []*plan.Change, budget int) (string, int) {
	type group struct{ action, prefix string }
	names := map[group][]string{}
	var order []group
	for _, c := range cs {
		prefix, name := addressPrefix(c.Address)
		g := group{string(c.Action), prefix}
		if _, ok := names[g]; !ok {
			order = append(order, g)
		}
		names[g] = append(names[g], name)
	}
	var b strings.Builder
	shown := 0
	for _, g := range order {
		line := fmt.Sprintf("- %s %d %s: ", g.action, len(names[g]), mdCode(g.prefix+"*"))
		if b.Len()+len(line)+2 > budget {
			break
		}
		b.WriteString(line)
		for i, n := range compressRuns(names[g]) {
			sep := ", "
			if i == 0 {
				sep = ""
			}
			if b.Len()+len(sep)+len(n.text)+2 > budget {
				b.WriteString(" ...\n\n")
				return b.String(), shown
			}
			b.WriteString(sep + n.text)
			shown += n.count
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String(), shown
}

// addressPrefix splits "consumer.ORDERS.audit" into "consumer.ORDERS." and "audit".
func addressPrefix(addr string) (string, string) {
	i := strings.LastIndex(addr, ".")
	if strings.HasPrefix(addr, "consumer.") {
		if j := strings.Index(addr[len("consumer."):], "."); j >= 0 {
			i = len("consumer.") + j
		}
	} else if j := strings.Index(addr, "."); j >= 0 {
		i = j
	}
	if i < 0 {
		return "", addr
	}
	return addr[:i+1], mdPlain(addr[i+1:])
}

// mdSection writes the section's opening, as many items as fit in budget, a line
// counting the items left out, and its closing. With no room at all it writes nothing.
func mdSection(sec mdSpec, budget int) string {
	const noteRoom = 160
	if budget < len(sec.open)+len(sec.close)+noteRoom {
		return ""
	}
	var b strings.Builder
	b.WriteString(sec.open)
	room := budget - len(sec.open) - len(sec.close) - noteRoom
	shown := 0
	for _, it := range sec.items {
		if b.Len()-len(sec.open)+len(it) > room {
			break
		}
		b.WriteString(it)
		shown++
	}
	if left := len(sec.items) - shown; left > 0 {
		fmt.Fprintf(&b, "... %d more %s not shown here: run `natsplan show` on the plan file for all of them.\n", left, sec.noun)
	}
	b.WriteString(sec.close)
	return b.String()
}

func mdFindingLines(fs []*finding.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		where := ""
		if f.Range != "" {
			where = " (" + mdPlain(f.Range) + ")"
		}
		override := ""
		if f.Overridable != "" {
			override = " (`apply --" + f.Overridable + "` accepts it)"
		}
		out = append(out, fmt.Sprintf("- **%s** %s%s: %s%s\n", f.Code, mdCode(f.Address), where, mdPlain(f.Message), override))
	}
	return out
}

// changesByKind groups the changes by kind in a fixed order, keeping plan order inside.
func changesByKind(cs []*plan.Change) ([]model.Kind, map[model.Kind][]*plan.Change) {
	by := map[model.Kind][]*plan.Change{}
	for _, c := range cs {
		by[c.Kind] = append(by[c.Kind], c)
	}
	rank := map[model.Kind]int{model.KindStream: 0, model.KindKV: 1, model.KindObjectStore: 2, model.KindConsumer: 3}
	kinds := make([]model.Kind, 0, len(by))
	for k := range by {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		ri, iok := rank[kinds[i]]
		rj, jok := rank[kinds[j]]
		if iok != jok {
			return iok
		}
		if ri != rj {
			return ri < rj
		}
		return kinds[i] < kinds[j]
	})
	return kinds, by
}

func kindTitle(k model.Kind) string {
	switch k {
	case model.KindStream:
		return "Streams"
	case model.KindConsumer:
		return "Consumers"
	case model.KindKV:
		return "KV buckets"
	case model.KindObjectStore:
		return "Object stores"
	}
	return string(k)
}

func countActions(cs []*plan.Change) string {
	counts := map[plan.Action]int{}
	blocked := 0
	for _, c := range cs {
		if c.Blocked != "" {
			blocked++
			continue
		}
		counts[c.Action]++
	}
	var parts []string
	for _, a := range []plan.Action{plan.ActCreate, plan.ActUpdate, plan.ActDelete, plan.ActReplace, plan.ActAdopt} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	if blocked > 0 {
		parts = append(parts, fmt.Sprintf("%d blocked", blocked))
	}
	return strings.Join(parts, ", ")
}

// mdChangeBlocks renders each change as lines of a diff code block.
func mdChangeBlocks(cs []*plan.Change) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s %s", mdSymbol(c.Action), c.Action, mdFence(c.Address))
		if c.Phase != "" {
			fmt.Fprintf(&b, " (step %s)", c.Phase)
		}
		if c.Group != "" {
			fmt.Fprintf(&b, " [%s]", mdFence(c.Group))
		}
		if c.Decl != "" {
			fmt.Fprintf(&b, "  # %s", mdFence(c.Decl))
		}
		b.WriteString("\n")
		if c.Reason != "" {
			fmt.Fprintf(&b, "    # %s\n", mdFence(oneLine(c.Reason)))
		}
		if c.Blocked != "" {
			fmt.Fprintf(&b, "    # BLOCKED: %s\n", mdFence(oneLine(c.Blocked)))
		}
		for _, f := range c.Fields {
			fmt.Fprintf(&b, "    %s: %s -> %s", mdFence(f.Path), mdFence(textValue(f.Path, f.Before)), mdFence(textValue(f.Path, f.After)))
			if f.Rule != "" && f.Rule != plan.RuleInPlace {
				fmt.Fprintf(&b, "  (%s)", f.Rule)
			}
			if f.Via != "" {
				fmt.Fprintf(&b, "  (via %s)", f.Via)
			}
			if f.Blocked {
				b.WriteString("  (blocked)")
			}
			b.WriteString("\n")
		}
		out = append(out, b.String())
	}
	return out
}

// mdSymbol starts each diff line so GitHub colours it: green adds, red removes.
func mdSymbol(a plan.Action) string {
	switch a {
	case plan.ActCreate:
		return "+"
	case plan.ActDelete:
		return "-"
	case plan.ActReplace:
		return "-/+"
	case plan.ActAdopt:
		return "<="
	}
	return "~"
}
