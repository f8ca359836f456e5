package plan

import (
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// instanceMarkers are name tokens after which the rest of a consumer name identifies
// a process, not a service: orders-host-a, email-pod-7, sync-ip-10-0-0-12.
var instanceMarkers = []string{"host", "pod", "node", "pid", "ip", "instance", "replica", "proc", "process"}

// Stem returns the part of a consumer name that names the service, and whether a
// per-process suffix was removed. Suffixes are the trailing tokens (split on '-' and
// '_') that look like a process identity: numbers (worker-1, email-4821), hex and
// mixed ids of 4+ characters with a digit (worker-7f3a, email-5d8f9b7c4d-x2kq4, UUIDs),
// single letters (orders-a), and everything from a marker token such as host or pod on
// (orders-host-a). It never removes the first token.
func Stem(name string) (string, bool) {
	toks := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' })
	if len(toks) < 2 {
		return name, false
	}
	end := len(toks)
	for i := 1; i < len(toks); i++ {
		for _, m := range instanceMarkers {
			if strings.EqualFold(toks[i], m) {
				end = min(end, i)
			}
		}
	}
	for end > 1 && instanceToken(toks[end-1]) {
		end--
	}
	if end == len(toks) {
		return name, false
	}
	return strings.Join(toks[:end], "-"), true
}

// instanceToken reports whether a name token looks like a process identity.
func instanceToken(t string) bool {
	digits, letters, hex := 0, 0, true
	for _, r := range t {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters++
			hex = hex && strings.ContainsRune("abcdefABCDEF", r)
		default:
			return false
		}
	}
	switch {
	case letters == 0:
		return digits > 0 // worker-1, email-4821
	case len(t) == 1:
		return true // orders-a, orders-b
	case digits == 0:
		return false // email-feed is a service, not an id
	case hex:
		return len(t) >= 4 // worker-7f3a, UUID groups
	default:
		return len(t) >= 5 // pod hashes such as x2kq4
	}
}

// checkFanOut finds consumers of one stream with overlapping filters whose names
// differ only by a per-process suffix (NP103): each process got its own durable, so
// every worker receives every message. Consumers with different service names are
// intended fan-out and pass; so do a group's lanes, whose filters are disjoint.
func (v *invariants) checkFanOut() {
	for _, stream := range v.streamsWithConsumers() {
		if v.stopped() {
			return
		}
		cs := v.consumers(stream)
		byStem := map[string][]int{}
		stems := make([]string, len(cs))
		cut := make([]bool, len(cs))
		for i, c := range cs {
			name := c.Name
			if g := v.groupOf(c); g != nil {
				name = g.Name
			}
			stems[i], cut[i] = Stem(name)
			byStem[stems[i]] = append(byStem[stems[i]], i)
		}
		reported := map[string]bool{}
		for _, stem := range slices.Sorted(maps.Keys(byStem)) {
			idx := byStem[stem]
			for x, i := range idx {
				for _, j := range idx[x+1:] {
					v.fanOutPair(stream, stem, cs[i], cs[j], cut[i], cut[j], reported)
				}
			}
		}
	}
}

// fanOutPair reports two consumers with one stem when they look like per-process
// copies of each other.
func (v *invariants) fanOutPair(stream, stem string, a, b *model.Consumer, cutA, cutB bool, reported map[string]bool) {
	if !cutA && !cutB || a.Group != "" && a.Group == b.Group || !v.declared(a) && !v.declared(b) {
		return
	}
	if _, _, ok := collide(filtersOf(v.config(a)), filtersOf(v.config(b))); !ok {
		return
	}
	// Point at the per-process name, the later one when both are; always at a declared one.
	at, other := b, a
	if !cutB && cutA || !v.declared(b) {
		at, other = a, b
	}
	if !v.declared(at) {
		at, other = other, at
	}
	if reported[at.Address()] {
		return
	}
	reported[at.Address()] = true
	where := "declared"
	if !v.declared(other) {
		where = "on the server"
	}
	v.add(finding.CodeFanOut, finding.SevError, at.Address(), fanOutRange(v, at),
		"consumers %s (%s) and %s (%s, %s) of stream %s read the same subjects under names that differ "+
			"only by a per-process suffix: each durable gets its own copy of every message, so N worker "+
			"processes do the work N times. Give all workers one durable (consumer_group %q with no "+
			"mapping) and let them pull from it; if these really are different services, give them "+
			"names that say so", at.Name, strings.Join(filtersOf(v.config(at)), ", "), other.Name,
		strings.Join(filtersOf(v.config(other)), ", "), where, stream, stem)
	v.relate(other.Address())
}

// fanOutRange points at a consumer's declaration: its group block, or its own.
func fanOutRange(v *invariants, c *model.Consumer) hcl.Range {
	if g := v.groupOf(c); g != nil && g.Decl != nil {
		return g.Decl.Range
	}
	if c.Decl == nil {
		return hcl.Range{}
	}
	return c.Decl.Range
}
