package plan

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/internal/subject"
	"github.com/natsplan/natsplan/model"
)

// OrderLanes orders the changes of a repartitioning (a partition count, key or source
// that differs from the live stream's transform): new lanes are created before the
// stream update routes keys to them, and lanes that lose their partition are deleted
// only after it stopped routing to them. A lane's filter names its own partition
// number, so no step ever puts two lanes on one partition. Call it after Compute; it
// renumbers the steps and keeps the plan sorted by step.
func OrderLanes(p *Plan, desired, live *model.Model) {
	if p == nil || desired == nil || live == nil {
		return
	}
	changed := false
	for _, name := range slices.Sorted(maps.Keys(desired.Mappings)) {
		mp := desired.Mappings[name]
		pm, merr := subject.ParseMapping(mp.Source, mp.Destination, mp.Partitions, mp.Key)
		ls := live.Streams[mp.Stream]
		if merr != nil || ls == nil {
			continue
		}
		old := subject.LiveMapping(ls.Config.SubjectTransform)
		if old == nil || old.Destination == pm.Destination && old.Source == pm.Source {
			continue
		}
		if orderRepartition(p, desired, mp) {
			changed = true
		}
	}
	if changed {
		renumber(p)
	}
}

// orderRepartition rewires the dependencies between a repartitioned stream's update
// and the lanes of the groups that use its mapping.
func orderRepartition(p *Plan, desired *model.Model, mp *model.SubjectMapping) bool {
	streamAddr := ""
	for _, ch := range p.Changes {
		if ch.Kind != model.KindConsumer && ch.Name == mp.Stream && (ch.Action == ActUpdate || ch.Action == ActAdopt) {
			streamAddr = ch.Address
		}
	}
	if streamAddr == "" {
		return false
	}
	groups := map[string]bool{}
	for _, g := range desired.Groups {
		if g.Mapping == mp.Name && g.Stream == mp.Stream {
			groups[g.Address()] = true
		}
	}
	var lanes []string
	for _, ch := range p.Changes {
		if ch.Kind != model.KindConsumer || ch.Stream != mp.Stream {
			continue
		}
		switch {
		case ch.Action == ActCreate && groups[ch.Group]:
			ch.DependsOn = slices.DeleteFunc(ch.DependsOn, func(a string) bool { return a == streamAddr })
			lanes = append(lanes, ch.Address)
		case ch.Action == ActDelete && !slices.Contains(ch.DependsOn, streamAddr):
			ch.DependsOn = append(ch.DependsOn, streamAddr)
			sort.Strings(ch.DependsOn)
		}
	}
	for _, ch := range p.Changes {
		if ch.Address == streamAddr {
			for _, l := range lanes {
				if !slices.Contains(ch.DependsOn, l) {
					ch.DependsOn = append(ch.DependsOn, l)
				}
			}
			sort.Strings(ch.DependsOn)
		}
	}
	return true
}

// renumber recomputes every step from DependsOn (parts of one split change keep their
// order) and sorts the changes by step. A cycle leaves the old steps in place.
func renumber(p *Plan) {
	chs := p.Changes
	deps, byAddr := dependencies(chs)
	for i, ch := range chs {
		for _, j := range byAddr[ch.Address] {
			if chs[j].Step < ch.Step || chs[j].Step == ch.Step && chs[j].Phase < ch.Phase {
				deps[i][j] = true
			}
		}
	}
	steps, ok := longestPaths(deps)
	if !ok {
		return
	}
	for i, ch := range chs {
		ch.Step = steps[i]
	}
	sort.SliceStable(chs, func(i, j int) bool {
		if chs[i].Step != chs[j].Step {
			return chs[i].Step < chs[j].Step
		}
		return strings.Compare(chs[i].Address, chs[j].Address) < 0
	})
}

// longestPaths numbers each change one past its deepest dependency, from 1; false
// when the dependencies form a cycle.
func longestPaths(deps []map[int]bool) ([]int, bool) {
	steps := make([]int, len(deps))
	state := make([]int, len(deps)) // 0 new, 1 visiting, 2 done
	ok := true
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 1:
			ok = false
			return 0
		case 2:
			return steps[i]
		}
		state[i] = 1
		s := 1
		for j := range deps[i] {
			s = max(s, visit(j)+1)
		}
		state[i], steps[i] = 2, s
		return s
	}
	for i := range deps {
		visit(i)
	}
	return steps, ok
}
