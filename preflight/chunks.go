package preflight

import (
	"encoding/json"
	"slices"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// chunkStreams bounds how many streams a large plan's check puts in one private
// server. The server compares each new stream's subjects with every stream it holds
// and walks them all for its reservations, so one server holding every stream of a
// first plan costs time that grows with the square of their number (4,000 streams
// with 2 consumers each: 7.5–8.3 s, where 1,000 took 1.0–1.7 s) and memory for all of them at
// once (a first plan of 10,000 peaked at 1.7 GB). In parts, each of at most this many
// streams checked in a server of its own, the cost grows with the plan.
//
// Nothing the check proves is lost: a part holds whole groups of changes that touch
// each other (a stream, its consumers, the streams it mirrors or sources, whatever
// a change depends on), and what one server could see across groups is not the
// private server's to judge: subjects that overlap another stream are plan's NP402,
// checked over every stream, and the account's limits are plan's NP403.
var chunkStreams = 250

// chunks splits the changes of p into parts of at most chunkStreams streams each (a
// larger group is one part on its own), every part listing change indices in plan
// order, the parts in the order of their first change. A plan that fits is one part.
func chunks(p *plan.Plan, live *model.Model) [][]int {
	parent := map[string]string{}
	var find func(string) string
	find = func(s string) string {
		pa, ok := parent[s]
		if !ok {
			parent[s] = s
			return s
		}
		if pa == s {
			return s
		}
		root := find(pa)
		parent[s] = root
		return root
	}
	union := func(a, b string) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[rb] = ra
		}
	}
	// A live stream goes with the live streams it mirrors or sources, which the
	// private server recreates with it (restoreLive).
	linked := map[string]bool{}
	var withOrigins func(name string, cfg *server.StreamConfig)
	withOrigins = func(name string, cfg *server.StreamConfig) {
		for _, o := range origins(cfg) {
			union(name, o)
			if ls := live.Streams[o]; ls != nil && !linked[o] {
				linked[o] = true
				withOrigins(o, &ls.Config)
			}
		}
	}
	streamOf := make(map[string]string, len(p.Changes))
	for _, ch := range p.Changes {
		s := ch.Name
		if ch.Kind == model.KindConsumer {
			s = ch.Stream
		}
		streamOf[ch.Address] = s
		find(s)
		if ls := live.Streams[s]; ls != nil && !linked[s] {
			linked[s] = true
			withOrigins(s, &ls.Config)
		}
		if ch.Kind != model.KindConsumer && len(ch.After) > 0 {
			var cfg server.StreamConfig
			if json.Unmarshal(ch.After, &cfg) == nil {
				withOrigins(s, &cfg)
			}
		}
	}
	for _, ch := range p.Changes {
		for _, dep := range ch.DependsOn {
			if s, ok := streamOf[dep]; ok {
				union(streamOf[ch.Address], s)
			}
		}
	}
	if len(parent) <= chunkStreams {
		all := make([]int, len(p.Changes))
		for i := range all {
			all[i] = i
		}
		return [][]int{all}
	}
	// Groups in the order of their first change, with their changes and streams.
	type group struct {
		changes []int
		streams int
	}
	byRoot := map[string]*group{}
	var order []*group
	for i, ch := range p.Changes {
		root := find(streamOf[ch.Address])
		g := byRoot[root]
		if g == nil {
			g = &group{}
			byRoot[root] = g
			order = append(order, g)
		}
		g.changes = append(g.changes, i)
	}
	for s := range parent {
		if g := byRoot[find(s)]; g != nil {
			g.streams++
		}
	}
	var out [][]int
	var cur []int
	size := 0
	for _, g := range order {
		if size > 0 && size+g.streams > chunkStreams {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, g.changes...)
		size += g.streams
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	for _, c := range out {
		slices.Sort(c)
	}
	return out
}
