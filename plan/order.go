package plan

import (
	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"

	"encoding/json"
	"sort"

	"github.com/nats-io/nats-server/v2/server"
)

// order numbers the changes into steps (docs/apply.md, "Order") and sorts them by step and
// address: streams before what reads them, sources before mirrors, widen or add before
// narrow or delete on interest streams (the reverse on workqueue streams, where an
// overlap is refused), no transient subject overlap, deletes last and consumers before
// their stream. Changes in one step may run in parallel.
func (c *computer) order() {
	o := newOrdering(c.p.Changes, c.sent)
	chs := o.chs
	// lastOf is the last part of each created or updated object.
	lastOf := map[string]int{}
	streamLast := map[string]int{}
	for i, ch := range chs {
		if ch.Action == ActDelete {
			continue
		}
		if prev, ok := lastOf[ch.Address]; ok {
			o.dep(i, prev) // parts of one split change run in order
		}
		lastOf[ch.Address] = i
		if ch.Kind != model.KindConsumer {
			streamLast[ch.Name] = i
		}
	}
	// freers are the stream changes that give up subjects.
	var freers []int
	freed := make([][]string, len(chs))
	for j, ch := range chs {
		if ch.Kind != model.KindConsumer {
			freed[j] = freedSubjects(o.sb[j], o.sa[j], ch.Action == ActDelete)
			if len(freed[j]) > 0 {
				freers = append(freers, j)
			}
		}
	}
	gained := map[int][]string{}
	for i, ch := range chs {
		if ch.Action == ActDelete {
			continue
		}
		if ch.Kind == model.KindConsumer {
			if j, ok := streamLast[ch.Stream]; ok {
				o.dep(i, j)
			}
			continue
		}
		for _, up := range upstreams(o.sa[i]) {
			if j, ok := streamLast[up]; ok {
				o.dep(i, j)
			}
		}
		if g := gainedSubjects(o.sb[i], o.sa[i]); len(g) > 0 {
			gained[i] = g
		}
	}
	// A stream that gains subjects another change frees runs after that change.
	freedBy := make(map[int][]string, len(freers))
	for _, j := range freers {
		freedBy[j] = freed[j]
	}
	hits, err := collidingSets(c.ctx, gained, freedBy)
	if err != nil {
		c.err = err
		return
	}
	for hit := range hits {
		i, j := hit[0], hit[1]
		if chs[j].Name == chs[i].Name {
			continue
		}
		o.dep(i, j)
		if chs[j].Action == ActDelete {
			o.early[j] = true
		}
	}
	c.orderConsumers(o)
	// A stream's consumers are deleted before it; an early delete takes its consumers along.
	consumerDeletes := map[string][]int{}
	for j, ch := range chs {
		if ch.Action == ActDelete && ch.Kind == model.KindConsumer {
			consumerDeletes[ch.Stream] = append(consumerDeletes[ch.Stream], j)
		}
	}
	for i, ch := range chs {
		if ch.Action != ActDelete || ch.Kind == model.KindConsumer {
			continue
		}
		for _, j := range consumerDeletes[ch.Name] {
			o.dep(i, j)
			if o.early[i] {
				o.early[j] = true
			}
		}
	}
	if o.number() {
		c.finding(finding.CodeOverlap, finding.SevError, "", "", "the changes depend on each other in a cycle (for example two "+
			"streams swapping subjects): split the change into two applies")
	}
	for i, ch := range chs {
		ch.Step = o.steps[i]
		ch.DependsOn = nil
		seen := map[string]bool{}
		for j := range o.deps[i] {
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

// ordering is the dependency graph of a plan's changes, with each change's configs
// decoded once.
type ordering struct {
	chs    []*Change
	deps   []map[int]bool
	sb, sa []*server.StreamConfig
	cb, ca []*server.ConsumerConfig
	// early marks deletes other changes wait for; the rest run after everything else.
	early map[int]bool
	steps []int
}

// newOrdering decodes the changes' configs; sent has the ones whose After was encoded
// from a config at hand (a value decoded from that JSON would equal it), which are
// taken as they are.
func newOrdering(chs []*Change, sent map[*Change]any) *ordering {
	o := &ordering{chs: chs, deps: make([]map[int]bool, len(chs)), early: map[int]bool{},
		sb: make([]*server.StreamConfig, len(chs)), sa: make([]*server.StreamConfig, len(chs)),
		cb: make([]*server.ConsumerConfig, len(chs)), ca: make([]*server.ConsumerConfig, len(chs))}
	for i, ch := range chs {
		o.deps[i] = map[int]bool{}
		if ch.Kind == model.KindConsumer {
			o.cb[i] = consumerOf(ch.Before)
			if cfg, ok := sent[ch].(*server.ConsumerConfig); ok {
				o.ca[i] = cfg
			} else {
				o.ca[i] = consumerOf(ch.After)
			}
		} else {
			o.sb[i] = streamOf(ch.Before)
			if cfg, ok := sent[ch].(*server.StreamConfig); ok {
				o.sa[i] = cfg
			} else {
				o.sa[i] = streamOf(ch.After)
			}
		}
	}
	return o
}

// dep records that change i runs after change j.
func (o *ordering) dep(i, j int) {
	if i != j {
		o.deps[i][j] = true
	}
}

// late reports whether change i is a delete that runs after every other change.
func (o *ordering) late(i int) bool { return o.chs[i].Action == ActDelete && !o.early[i] }

// number gives each change a step one past its deepest dependency; late deletes start
// after the last step of everything else. It reports a dependency cycle.
func (o *ordering) number() (cyclic bool) {
	o.steps = make([]int, len(o.chs))
	state := make([]int, len(o.chs)) // 0 new, 1 visiting, 2 done
	base := 0
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 1:
			cyclic = true
			return 0
		case 2:
			return o.steps[i]
		}
		state[i] = 1
		s := 1
		if o.late(i) {
			s = base + 1
		}
		for j := range o.deps[i] {
			if d := visit(j) + 1; d > s {
				s = d
			}
		}
		state[i], o.steps[i] = 2, s
		return s
	}
	for i := range o.chs {
		if !o.late(i) {
			if s := visit(i); s > base {
				base = s
			}
		}
	}
	for i := range o.chs {
		visit(i)
	}
	return cyclic
}

// orderConsumers orders the consumer changes of one stream: on interest streams adds
// and widenings go first so no message loses its last interest; on workqueue streams
// narrowings and deletes go first when they would overlap what is added, which the
// server refuses (such a delete is then no longer last).
func (c *computer) orderConsumers(o *ordering) {
	byStream := map[string][]int{}
	for i, ch := range o.chs {
		if ch.Kind == model.KindConsumer {
			byStream[ch.Stream] = append(byStream[ch.Stream], i)
		}
	}
	for stream, idx := range byStream {
		retention := c.retentionOf(stream)
		if retention != server.InterestPolicy && retention != server.WorkQueuePolicy {
			continue
		}
		for _, i := range idx {
			a := o.chs[i]
			oldA, newA := o.cb[i], o.ca[i]
			aShrinks := a.Action == ActDelete || (oldA != nil && newA != nil && narrows(filtersOf(*oldA), filtersOf(*newA)))
			if !aShrinks {
				continue
			}
			for _, j := range idx {
				b := o.chs[j]
				if j == i || b.Action == ActDelete {
					continue
				}
				oldB, newB := o.cb[j], o.ca[j]
				if oldB != nil && (newB == nil || !narrows(filtersOf(*newB), filtersOf(*oldB))) {
					continue // b does not grow
				}
				if retention == server.InterestPolicy {
					o.dep(i, j) // shrink after grow
					continue
				}
				if oldA != nil && newB != nil {
					if _, _, hit := collide(filtersOf(*oldA), filtersOf(*newB)); hit {
						o.dep(j, i) // grow after shrink
						if a.Action == ActDelete {
							o.early[i] = true
						}
					}
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
