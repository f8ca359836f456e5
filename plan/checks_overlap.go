package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// checkOverlaps raises NP402 when a declared stream's subjects collide with another
// stream's: declared, or live and staying (a live stream this plan deletes frees its
// subjects first, see order).
func (c *computer) checkOverlaps() {
	ix := newSubjectIndex()
	names := c.desired.StreamNames()
	for _, n := range names {
		for _, s := range c.want[n].Subjects {
			ix.add(n, s, true)
		}
	}
	for _, n := range c.live.StreamNames() {
		if _, declared := c.desired.Streams[n]; declared || c.deleted[n] {
			continue
		}
		for _, s := range c.live.Streams[n].Config.Subjects {
			ix.add(n, s, false)
		}
	}
	for _, a := range names {
		ds := c.desired.Streams[a]
		rng := fieldPos(ds.Decl, "subjects")
		reported := map[string]bool{}
		for _, s1 := range c.want[a].Subjects {
			for _, e := range ix.colliding(s1) {
				// A pair of declared streams is reported once, on the first by name.
				if e.stream == a || reported[e.stream] || (e.declared && e.stream < a) {
					continue
				}
				reported[e.stream] = true
				if e.declared {
					c.finding(CodeOverlap, SevError, ds.Address(), rng, fmt.Sprintf(
						"subject %q of stream %s overlaps subject %q of stream %s: the server refuses overlapping "+
							"streams; make the subjects disjoint", s1, a, e.subject, e.stream))
					continue
				}
				c.finding(CodeOverlap, SevError, ds.Address(), rng, fmt.Sprintf(
					"subject %q of stream %s overlaps subject %q of live stream %s, which this project does not "+
						"manage: make the subjects disjoint or remove that stream", s1, a, e.subject, e.stream))
			}
		}
	}
}

// subjectIndex finds colliding subjects without comparing every pair: subjects can
// only collide when their first tokens are equal or one of them is a wildcard.
type subjectIndex struct {
	byToken map[string][]subjectEntry
	wild    []subjectEntry
	all     []subjectEntry
}

type subjectEntry struct {
	stream, subject string
	declared        bool
}

func newSubjectIndex() *subjectIndex { return &subjectIndex{byToken: map[string][]subjectEntry{}} }

func firstToken(s string) string {
	t, _, _ := strings.Cut(s, ".")
	return t
}

func (ix *subjectIndex) add(stream, subject string, declared bool) {
	e := subjectEntry{stream, subject, declared}
	ix.all = append(ix.all, e)
	if t := firstToken(subject); t == "*" || t == ">" {
		ix.wild = append(ix.wild, e)
	} else {
		ix.byToken[t] = append(ix.byToken[t], e)
	}
}

// colliding returns the entries whose subject collides with s, by stream and subject.
func (ix *subjectIndex) colliding(s string) []subjectEntry {
	candidates := ix.all
	if t := firstToken(s); t != "*" && t != ">" {
		candidates = append(append([]subjectEntry{}, ix.byToken[t]...), ix.wild...)
	}
	var out []subjectEntry
	for _, e := range candidates {
		if server.SubjectsCollide(s, e.subject) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].stream != out[j].stream {
			return out[i].stream < out[j].stream
		}
		return out[i].subject < out[j].subject
	})
	return out
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
