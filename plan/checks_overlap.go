package plan

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// checkOverlaps raises NP402 when a declared stream's subjects collide with another
// stream's: declared, or live and staying (a live stream this plan deletes frees its
// subjects first, see order).
func (c *computer) checkOverlaps() {
	names := c.desired.StreamNames()
	for i, a := range names {
		wa := c.want[a]
		ds := c.desired.Streams[a]
		rng := fieldPos(ds.Decl, "subjects")
		for _, b := range names[i+1:] {
			if s1, s2, ok := collide(wa.Subjects, c.want[b].Subjects); ok {
				c.finding(CodeOverlap, SevError, ds.Address(), rng, fmt.Sprintf(
					"subject %q of stream %s overlaps subject %q of stream %s: the server refuses overlapping "+
						"streams; make the subjects disjoint", s1, a, s2, b))
			}
		}
		for _, b := range c.live.StreamNames() {
			if b == a || c.deleted[b] {
				continue
			}
			if _, declared := c.desired.Streams[b]; declared {
				continue
			}
			if s1, s2, ok := collide(wa.Subjects, c.live.Streams[b].Config.Subjects); ok {
				c.finding(CodeOverlap, SevError, ds.Address(), rng, fmt.Sprintf(
					"subject %q of stream %s overlaps subject %q of live stream %s, which this project does not "+
						"manage: make the subjects disjoint or remove that stream", s1, a, s2, b))
			}
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
