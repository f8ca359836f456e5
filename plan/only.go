package plan

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// A partial plan (--only, docs/planning.md "Partial plans (--only)") keeps the changes
// whose address matches one of the patterns, and what they need: the changes the
// ordering puts before them (a consumer's stream, a mirror's or a source's origin, the
// lanes a repartitioned stream routes to), the generated consumers and the stream of a
// matched consumer_group, the stream of a matched subject_mapping, and the dead-letter
// streams of the consumers kept. A delete is kept only when the deleted object matches
// itself; deleting a stream takes its consumers along, so their deletes stay with it.
// Findings are kept when they concern an object the partial plan touches or a matched
// one, or no object at all; the rest can not block a partial apply.

// OnlyError is a --only pattern that matches no object of the project: the plan is not
// computed. The command layer reports it as a usage error.
type OnlyError struct {
	Pattern string
	// Suggestions are the project's addresses closest to the pattern.
	Suggestions []string
	// Examples are a few of the project's addresses, when none is close.
	Examples []string
}

func (e *OnlyError) Error() string {
	if e.Pattern == "" {
		return "--only \"\": give an address such as stream.ORDERS or consumer.ORDERS.audit (globs: * and ?)"
	}
	msg := fmt.Sprintf("--only %s matches no object declared in the files or owned by this project on the server", e.Pattern)
	switch {
	case len(e.Suggestions) > 0:
		msg += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	case len(e.Examples) > 0:
		msg += "; addresses look like " + strings.Join(e.Examples, ", ")
	default:
		msg += "; addresses look like stream.NAME, consumer.STREAM.NAME, kv.BUCKET, object_store.BUCKET, " +
			"consumer_group.NAME, subject_mapping.NAME"
	}
	return msg + " (* matches any run of characters, dots included; ? one character)"
}

// onlyPattern compiles a --only glob: * is any run of characters (dots included), ?
// one character, everything else itself.
func onlyPattern(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// MatchOnly reports whether address matches the --only glob pattern.
func MatchOnly(pattern, address string) bool { return onlyPattern(pattern).MatchString(address) }

// onlyMatcher matches addresses against a set of patterns.
type onlyMatcher []*regexp.Regexp

func newOnlyMatcher(patterns []string) onlyMatcher {
	m := make(onlyMatcher, len(patterns))
	for i, p := range patterns {
		m[i] = onlyPattern(p)
	}
	return m
}

func (m onlyMatcher) match(addr string) bool {
	if addr == "" {
		return false
	}
	for _, re := range m {
		if re.MatchString(addr) {
			return true
		}
	}
	return false
}

// Addresses are the addresses --only may name, sorted: every object desired declares
// and every object of live this project owns (with the consumers of its streams).
func Addresses(desired, live *model.Model) []string { return projectAddresses(desired, live) }

// projectAddresses are the addresses --only may name: every object the files declare
// and every live object this project owns (with the consumers of its streams).
func projectAddresses(desired, live *model.Model) []string {
	set := map[string]bool{}
	for _, s := range desired.Streams {
		set[s.Address()] = true
	}
	for _, c := range desired.Consumers {
		set[c.Address()] = true
	}
	for _, g := range desired.Groups {
		set[g.Address()] = true
	}
	for _, m := range desired.Mappings {
		set[m.Address()] = true
	}
	if desired.Project != "" {
		for _, s := range live.Streams {
			if s.Owner() == desired.Project {
				set[s.Address()] = true
			}
		}
		for k, c := range live.Consumers {
			if c.Owner() == desired.Project || live.Streams[k.Stream] != nil && live.Streams[k.Stream].Owner() == desired.Project {
				set[c.Address()] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// CheckOnly returns an *OnlyError for the first pattern that matches none of the
// project's objects (declared, or live and owned), else nil.
func CheckOnly(patterns []string, desired, live *model.Model) error {
	if len(patterns) == 0 {
		return nil
	}
	addrs := projectAddresses(desired, live)
	for _, p := range patterns {
		if p == "" {
			return &OnlyError{}
		}
		re := onlyPattern(p)
		if slices.ContainsFunc(addrs, re.MatchString) {
			continue
		}
		e := &OnlyError{Pattern: p, Suggestions: closeAddresses(p, addrs)}
		if len(e.Suggestions) == 0 {
			e.Examples = exampleAddresses(addrs)
		}
		return e
	}
	return nil
}

// closeAddresses are up to three addresses that differ from pattern by little: in
// case, by a missing kind prefix ("ORDERS" for stream.ORDERS), or by a few edits.
func closeAddresses(pattern string, addrs []string) []string {
	lp := strings.ToLower(strings.NewReplacer("*", "", "?", "").Replace(pattern))
	limit := max(2, len(lp)/3)
	type scored struct {
		addr string
		d    int
	}
	var out []scored
	for _, a := range addrs {
		la := strings.ToLower(a)
		d := editDistance(lp, la)
		if _, rest, ok := strings.Cut(la, "."); ok && lp != "" && (strings.HasSuffix(la, "."+lp) || editDistance(lp, rest) <= limit) {
			d = min(d, editDistance(lp, rest))
		}
		if d <= limit {
			out = append(out, scored{a, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].d < out[j].d })
	var names []string
	for i := 0; i < len(out) && i < 3; i++ {
		names = append(names, out[i].addr)
	}
	return names
}

// exampleAddresses are one address of each kind the project has, at most five.
func exampleAddresses(addrs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range addrs {
		kind, _, _ := strings.Cut(a, ".")
		if !seen[kind] && len(out) < 5 {
			seen[kind] = true
			out = append(out, a)
		}
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Only reduces p to the changes --only selects (see above) and their dependencies,
// keeps the findings that concern them, renumbers the steps, recounts the summary,
// and records the patterns and how many changes were left out. desired and live are
// the models p was computed from. It returns an *OnlyError when a pattern matches no
// object of the project, and then leaves p as it was. No patterns: p is unchanged.
func Only(p *Plan, desired, live *model.Model, patterns []string) error {
	if len(patterns) == 0 {
		return nil
	}
	if err := CheckOnly(patterns, desired, live); err != nil {
		return err
	}
	s := &selection{p: p, desired: desired, live: live, m: newOnlyMatcher(patterns), keep: map[int]bool{}}
	s.index()
	s.seed()
	s.close()
	missing := s.missingDeletes()
	before := countChanges(p.Changes)
	kept := make([]*Change, 0, len(s.keep))
	for i, ch := range p.Changes {
		if s.keep[i] {
			kept = append(kept, ch)
		}
	}
	p.Changes = kept
	s.filterFindings()
	p.Findings = append(p.Findings, missing...)
	compactSteps(p.Changes)
	p.Summary = summarise(p.Changes)
	p.Only = slices.Clone(patterns)
	p.LeftOut = before - countChanges(p.Changes)
	return nil
}

// selection is one run of Only.
type selection struct {
	p             *Plan
	desired, live *model.Model
	m             onlyMatcher
	// byAddr indexes the changes by address, byStream the stream changes by stream
	// name; keep holds the indexes selected.
	byAddr   map[string][]int
	byStream map[string][]int
	keep     map[int]bool
	queue    []int
}

func (s *selection) index() {
	s.byAddr, s.byStream = map[string][]int{}, map[string][]int{}
	for i, ch := range s.p.Changes {
		s.byAddr[ch.Address] = append(s.byAddr[ch.Address], i)
		if ch.Kind != model.KindConsumer {
			s.byStream[ch.Name] = append(s.byStream[ch.Name], i)
		}
	}
}

// add selects change i (and the other parts of its object) once.
func (s *selection) add(i int) {
	for _, j := range s.byAddr[s.p.Changes[i].Address] {
		if !s.keep[j] {
			s.keep[j] = true
			s.queue = append(s.queue, j)
		}
	}
}

// addStream selects the changes of the stream named name, deletes excepted.
func (s *selection) addStream(name string) {
	for _, i := range s.byStream[name] {
		if s.p.Changes[i].Action != ActDelete {
			s.add(i)
		}
	}
}

// groupOf is the consumer_group address a change's consumer belongs to: declared,
// or written in the live consumer's metadata.
func (s *selection) groupOf(ch *Change) string {
	if ch.Kind != model.KindConsumer {
		return ""
	}
	if ch.Group != "" {
		return ch.Group
	}
	if lc := s.live.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; lc != nil {
		return lc.Config.Metadata[model.MetaGroup]
	}
	return ""
}

// seed selects the changes the patterns name: by their address, by their group's, and
// the streams of matched groups and mappings.
func (s *selection) seed() {
	for i, ch := range s.p.Changes {
		if s.m.match(ch.Address) || s.m.match(s.groupOf(ch)) {
			s.add(i)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.desired.Groups)) {
		if g := s.desired.Groups[name]; s.m.match(g.Address()) {
			s.addStream(g.Stream)
			if g.DeadLetter != nil {
				s.addStream(g.DeadLetter.Stream)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.desired.Mappings)) {
		if mp := s.desired.Mappings[name]; s.m.match(mp.Address()) {
			s.addStream(mp.Stream)
		}
	}
}

// close adds what the selected changes need: what the ordering puts before them
// (deletes excepted, unless a deleted stream takes the consumer along), and the
// dead-letter streams of the consumers kept.
func (s *selection) close() {
	for len(s.queue) > 0 {
		i := s.queue[0]
		s.queue = s.queue[1:]
		ch := s.p.Changes[i]
		for _, addr := range ch.DependsOn {
			for _, j := range s.byAddr[addr] {
				if s.needs(ch, s.p.Changes[j]) {
					s.add(j)
				}
			}
		}
		if ch.Kind == model.KindConsumer && ch.Action != ActDelete {
			if dc := s.desired.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; dc != nil && dc.DeadLetter != nil {
				s.addStream(dc.DeadLetter.Stream)
			}
		}
	}
}

// needs reports whether selecting ch selects its dependency dep: anything but a delete,
// and the deletes of the consumers of a stream ch deletes.
func (s *selection) needs(ch, dep *Change) bool {
	if dep.Action != ActDelete {
		return true
	}
	return ch.Action == ActDelete && ch.Kind != model.KindConsumer && dep.Kind == model.KindConsumer && dep.Stream == ch.Name
}

// missingDeletes drops from the kept changes' dependencies the deletes left out, and
// returns an error finding for each: the change can not run before that delete (it
// frees the subjects or the filter the change takes), and --only leaves it out.
func (s *selection) missingDeletes() []*finding.Finding {
	var out []*finding.Finding
	for i, ch := range s.p.Changes {
		if !s.keep[i] {
			continue
		}
		var deps []string
		for _, addr := range ch.DependsOn {
			idx := s.byAddr[addr]
			if len(idx) == 0 || slices.ContainsFunc(idx, func(j int) bool { return s.keep[j] }) {
				deps = append(deps, addr)
				continue
			}
			code := finding.CodeOverlap
			if ch.Kind == model.KindConsumer {
				code = finding.CodeWorkqueueOverlap
			}
			out = append(out, &finding.Finding{Code: code, Severity: finding.SevError, Address: ch.Address,
				Related: addr, Message: fmt.Sprintf("%s must wait for the delete of %s, which frees what it "+
					"takes (subjects or a workqueue filter), and --only leaves that delete out: add --only %s, or "+
					"apply without --only", ch.Address, addr, addr)})
		}
		ch.DependsOn = deps
	}
	return out
}

// participants are the addresses whose findings a partial plan keeps: the matched
// objects, the kept changes, the groups of kept consumers, and the mappings (with
// the groups that use them) of kept streams, whose subject transform they are.
func (s *selection) participants() map[string]bool {
	in := map[string]bool{}
	for _, a := range projectAddresses(s.desired, s.live) {
		if s.m.match(a) {
			in[a] = true
		}
	}
	streams := map[string]bool{}
	for _, ch := range s.p.Changes {
		in[ch.Address] = true
		if g := s.groupOf(ch); g != "" {
			in[g] = true
		}
		if ch.Kind != model.KindConsumer {
			streams[ch.Name] = true
		}
	}
	for _, mp := range s.desired.Mappings {
		if streams[mp.Stream] {
			in[mp.Address()] = true
		}
	}
	for _, g := range s.desired.Groups {
		if g.Mapping != "" && in["subject_mapping."+g.Mapping] {
			in[g.Address()] = true
		}
	}
	return in
}

// filterFindings keeps the findings about participants (or naming one as related)
// and those about no object; a dependency cycle is kept only if the kept changes
// still form one.
func (s *selection) filterFindings() {
	in := s.participants()
	var out []*finding.Finding
	for _, f := range s.p.Findings {
		keep := f.Address == "" || in[f.Address] || in[f.Related]
		if f.Address == "" && f.Code == finding.CodeOverlap && !cyclic(s.p.Changes) {
			keep = false // the cycle is among changes left out
		}
		if keep {
			out = append(out, f)
		}
	}
	s.p.Findings = out
}

// cyclic reports whether the changes' dependencies form a cycle.
func cyclic(chs []*Change) bool {
	deps, _ := dependencies(chs)
	_, ok := longestPaths(deps)
	return !ok
}

// dependencies indexes the changes' DependsOn: deps[i] holds the indexes of the
// changes change i depends on (every part of a split change), and byAddr the indexes
// of each address.
func dependencies(chs []*Change) (deps []map[int]bool, byAddr map[string][]int) {
	byAddr = map[string][]int{}
	for i, ch := range chs {
		byAddr[ch.Address] = append(byAddr[ch.Address], i)
	}
	deps = make([]map[int]bool, len(chs))
	for i, ch := range chs {
		deps[i] = map[int]bool{}
		for _, a := range ch.DependsOn {
			for _, j := range byAddr[a] {
				deps[i][j] = true
			}
		}
	}
	return deps, byAddr
}

// compactSteps renumbers the steps of the changes, sorted by step, from 1 without gaps.
func compactSteps(chs []*Change) {
	n, last := 0, 0
	for _, ch := range chs {
		if ch.Step != last {
			n++
			last = ch.Step
		}
		ch.Step = n
	}
}

// countChanges counts the changes as the summary does: a split change once.
func countChanges(chs []*Change) int {
	seen := map[string]bool{}
	for _, ch := range chs {
		seen[string(ch.Action)+" "+ch.Address] = true
	}
	return len(seen)
}
