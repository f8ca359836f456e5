package plan

import (
	"github.com/natsplan/natsplan/internal/finding"

	"fmt"
	"sort"

	"github.com/nats-io/nats-server/v2/server"
)

// checkOverlaps raises NP402 when a declared stream's subjects collide with another
// stream's: declared, or live and staying (a live stream this plan deletes frees its
// subjects first, see order). A pair of declared streams is reported once, on the
// first by name. Each finding names the stream's first subject, in declared order,
// that collides with the other stream, and the other stream's first such subject by
// name; a stream's findings come in the order of those subjects, then by name.
func (c *computer) checkOverlaps() {
	type owner struct {
		name     string
		declared bool
		subjects []string
	}
	// Declared streams first, by name, so that a declared owner's number orders it.
	var owners []owner
	for _, n := range c.inv.streamNames(c.desired) {
		owners = append(owners, owner{n, true, c.want[n].Subjects})
	}
	for _, n := range c.inv.streamNames(c.live) {
		if _, declared := c.desired.Streams[n]; declared || c.deleted[n] {
			continue
		}
		owners = append(owners, owner{n, false, c.live.Streams[n].Config.Subjects})
	}
	t := newSubjectTrie()
	var index []int // the position of each trie item in its stream's subjects
	for g, o := range owners {
		for i, s := range o.subjects {
			t.add(s, int32(g), o.declared)
			index = append(index, i)
		}
	}
	type hit struct {
		index   int    // of the reporting stream's subject
		subject string // of the other stream
	}
	first := map[[2]int32]hit{} // reporting stream, other stream
	note := func(x, y int32) {
		a, b := t.items[x].group, t.items[y].group
		if !owners[a].declared || owners[b].declared && b < a {
			return
		}
		h := hit{index[x], t.items[y].subject}
		if cur, ok := first[[2]int32{a, b}]; !ok || h.index < cur.index || h.index == cur.index && h.subject < cur.subject {
			first[[2]int32{a, b}] = h
		}
	}
	if err := t.pairs(c.ctx, func(x, y int32) { note(x, y); note(y, x) }); err != nil {
		c.err = err
		return
	}
	others := map[int32][]int32{}
	for k := range first {
		others[k[0]] = append(others[k[0]], k[1])
	}
	for a := range int32(len(owners)) {
		bs := others[a]
		if len(bs) == 0 {
			continue
		}
		sort.Slice(bs, func(i, j int) bool {
			hi, hj := first[[2]int32{a, bs[i]}], first[[2]int32{a, bs[j]}]
			if hi.index != hj.index {
				return hi.index < hj.index
			}
			return owners[bs[i]].name < owners[bs[j]].name
		})
		ds := c.desired.Streams[owners[a].name]
		rng := fieldPos(ds.Decl, "subjects")
		for _, b := range bs {
			h := first[[2]int32{a, b}]
			s1, other := owners[a].subjects[h.index], owners[b]
			if other.declared {
				f := c.finding(finding.CodeOverlap, finding.SevError, ds.Address(), rng, fmt.Sprintf(
					"subject %q of stream %s overlaps subject %q of stream %s: the server refuses overlapping "+
						"streams; make the subjects disjoint", s1, owners[a].name, h.subject, other.name))
				f.Related = c.desired.Streams[other.name].Address()
				continue
			}
			c.finding(finding.CodeOverlap, finding.SevError, ds.Address(), rng, fmt.Sprintf(
				"subject %q of stream %s overlaps subject %q of live stream %s, which this project does not "+
					"manage: make the subjects disjoint or remove that stream", s1, owners[a].name, h.subject, other.name))
		}
	}
}

// collide returns the first pair of colliding subjects.
func collide(as, bs []string) (string, string, bool) {
	for _, x := range as {
		for _, y := range bs {
			if server.SubjectsCollide(x, y) {
				return x, y, true
			}
		}
	}
	return "", "", false
}
