package plan

import (
	"encoding/json"
	"sort"

	"github.com/nats-io/nats-server/v2/server"
)

// order numbers the changes into steps (DESIGN.md §4.6) and sorts them by step and
// address: streams before what reads them, sources before mirrors, widen or add before
// narrow or delete on interest streams (the reverse on workqueue streams, where an
// overlap is refused), no transient subject overlap, deletes last and consumers before
// their stream. Changes in one step may run in parallel.
func (c *computer) order() {
	chs := c.p.Changes
	deps := make([]map[int]bool, len(chs))
	for i := range deps {
		deps[i] = map[int]bool{}
	}
	dep := func(i, j int) {
		if i != j {
			deps[i][j] = true
		}
	}
	// lastOf is the last (non-delete) part of each address; byAddr all of its parts.
	lastOf := map[string]int{}
	streamIdx := map[string][]int{}
	for i, ch := range chs {
		if ch.Action == ActDelete {
			continue
		}
		if prev, ok := lastOf[ch.Address]; ok {
			dep(i, prev) // parts of one split change run in order
		}
		lastOf[ch.Address] = i
		if ch.Kind != "consumer" {
			streamIdx[ch.Name] = append(streamIdx[ch.Name], i)
		}
	}
	streamLast := func(name string) (int, bool) {
		idx := streamIdx[name]
		if len(idx) == 0 {
			return 0, false
		}
		return idx[len(idx)-1], true
	}
	early := map[int]bool{}
	for i, ch := range chs {
		if ch.Action == ActDelete {
			continue
		}
		if ch.Kind == "consumer" {
			if j, ok := streamLast(ch.Stream); ok {
				dep(i, j)
			}
			continue
		}
		after := streamOf(ch.After)
		for _, up := range upstreams(after) {
			if j, ok := streamLast(up); ok {
				dep(i, j)
			}
		}
		gained := gainedSubjects(streamOf(ch.Before), after)
		for j, o := range chs {
			if o.Kind == "consumer" || o.Name == ch.Name {
				continue
			}
			freed := freedSubjects(streamOf(o.Before), streamOf(o.After), o.Action == ActDelete)
			if _, _, hit := collide(gained, freed); hit {
				dep(i, j)
				if o.Action == ActDelete {
					early[j] = true
				}
			}
		}
	}
	c.orderConsumers(dep)
	// A stream's consumers are deleted before it; an early delete takes its consumers along.
	for i, ch := range chs {
		if ch.Action != ActDelete || ch.Kind == "consumer" {
			continue
		}
		for j, o := range chs {
			if o.Action == ActDelete && o.Kind == "consumer" && o.Stream == ch.Name {
				dep(i, j)
				if early[i] {
					early[j] = true
				}
			}
		}
	}
	for i, ch := range chs {
		if ch.Action != ActDelete || early[i] {
			continue
		}
		for j, o := range chs {
			if o.Action != ActDelete {
				dep(i, j)
			}
		}
	}
	steps, cyclic := stepsOf(deps)
	if cyclic {
		c.finding(CodeOverlap, SevError, "", "", "the changes depend on each other in a cycle (for example two "+
			"streams swapping subjects): split the change into two applies")
	}
	for i, ch := range chs {
		ch.Step = steps[i]
		ch.DependsOn = nil
		seen := map[string]bool{}
		for j := range deps[i] {
			a := chs[j].Address
			if a != ch.Address && !seen[a] {
				seen[a] = true
				ch.DependsOn = append(ch.DependsOn, a)
			}
		}
		sort.Strings(ch.DependsOn)
	}
	sort.SliceStable(chs, func(i, j int) bool {
		if chs[i].Step != chs[j].Step {
			return chs[i].Step < chs[j].Step
		}
		if chs[i].Address != chs[j].Address {
			return chs[i].Address < chs[j].Address
		}
		return chs[i].Phase < chs[j].Phase
	})
}

// orderConsumers orders the consumer changes of one stream: on interest streams adds
// and widenings go first so no message loses its last interest; on workqueue streams
// narrowings and deletes go first when they would overlap what is added, which the
// server refuses.
func (c *computer) orderConsumers(dep func(i, j int)) {
	chs := c.p.Changes
	for i, a := range chs {
		if a.Kind != "consumer" {
			continue
		}
		retention := c.retentionOf(a.Stream)
		if retention != server.InterestPolicy && retention != server.WorkQueuePolicy {
			continue
		}
		oldA, newA := consumerOf(a.Before), consumerOf(a.After)
		aShrinks := a.Action == ActDelete || (oldA != nil && newA != nil && narrows(filtersOf(*oldA), filtersOf(*newA)))
		if !aShrinks {
			continue
		}
		for j, b := range chs {
			if j == i || b.Kind != "consumer" || b.Stream != a.Stream || b.Action == ActDelete {
				continue
			}
			oldB, newB := consumerOf(b.Before), consumerOf(b.After)
			bGrows := oldB == nil || (newB != nil && narrows(filtersOf(*newB), filtersOf(*oldB)))
			if !bGrows {
				continue
			}
			if retention == server.InterestPolicy {
				dep(i, j) // shrink after grow
				continue
			}
			if oldA != nil && newB != nil {
				if _, _, hit := collide(filtersOf(*oldA), filtersOf(*newB)); hit {
					dep(j, i) // grow after shrink
				}
			}
		}
	}
}

func (c *computer) retentionOf(stream string) server.RetentionPolicy {
	if cfg, ok := c.want[stream]; ok {
		return cfg.Retention
	}
	if s := c.live.Streams[stream]; s != nil {
		return s.Config.Retention
	}
	return server.LimitsPolicy
}

// stepsOf numbers each node one past its deepest dependency, starting at 1.
func stepsOf(deps []map[int]bool) ([]int, bool) {
	steps := make([]int, len(deps))
	state := make([]int, len(deps)) // 0 new, 1 visiting, 2 done
	cyclic := false
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 1:
			cyclic = true
			return 0
		case 2:
			return steps[i]
		}
		state[i] = 1
		s := 1
		for j := range deps[i] {
			if d := visit(j) + 1; d > s {
				s = d
			}
		}
		state[i], steps[i] = 2, s
		return s
	}
	for i := range deps {
		visit(i)
	}
	return steps, cyclic
}

func streamOf(raw json.RawMessage) *server.StreamConfig {
	if raw == nil {
		return nil
	}
	var cfg server.StreamConfig
	if json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return &cfg
}

func consumerOf(raw json.RawMessage) *server.ConsumerConfig {
	if raw == nil {
		return nil
	}
	var cfg server.ConsumerConfig
	if json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	return &cfg
}

// upstreams are the local streams a stream mirrors or sources.
func upstreams(cfg *server.StreamConfig) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	if cfg.Mirror != nil && cfg.Mirror.External == nil {
		out = append(out, cfg.Mirror.Name)
	}
	for _, s := range cfg.Sources {
		if s != nil && s.External == nil {
			out = append(out, s.Name)
		}
	}
	return out
}

// gainedSubjects are the subjects after has that before did not.
func gainedSubjects(before, after *server.StreamConfig) []string {
	if after == nil {
		return nil
	}
	had := map[string]bool{}
	if before != nil {
		for _, s := range before.Subjects {
			had[s] = true
		}
	}
	var out []string
	for _, s := range after.Subjects {
		if !had[s] {
			out = append(out, s)
		}
	}
	return out
}

// freedSubjects are the subjects a change gives up: all of them on delete.
func freedSubjects(before, after *server.StreamConfig, deleting bool) []string {
	if before == nil {
		return nil
	}
	if deleting || after == nil {
		return before.Subjects
	}
	keep := map[string]bool{}
	for _, s := range after.Subjects {
		keep[s] = true
	}
	var out []string
	for _, s := range before.Subjects {
		if !keep[s] {
			out = append(out, s)
		}
	}
	return out
}
