package apply

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// RefusedError is Run's error when it refuses a plan before sending anything: the plan
// has errors, or it deletes or loses data without the flag that allows it.
type RefusedError struct {
	Reasons []string
}

func (e *RefusedError) Error() string {
	return "apply refused, nothing was changed: " + strings.Join(e.Reasons, "; ")
}

// flagAllowDelete is the apply flag, without dashes, a finding's Overridable may name
// besides finding.OverrideDataLoss.
const flagAllowDelete = "allow-delete"

// refusals lists why the plan must not run under o; empty means it may.
func refusals(p *plan.Plan, o Options) []string {
	var reasons []string
	for _, f := range finding.Errors(p.Findings) {
		flag := f.Overridable
		if flag == "" && f.Code == finding.CodeDataLoss {
			// --allow-data-loss is NP301's flag even in a plan that does not name it.
			flag = finding.OverrideDataLoss
		}
		switch {
		case flag == finding.OverrideDataLoss && o.AllowDataLoss, flag == flagAllowDelete && o.AllowDelete,
			flag == plan.OverrideReorder && o.AllowReorder:
			continue
		case flag != "":
			reasons = append(reasons, fmt.Sprintf("%s %s: %s (run with --%s to accept)", f.Code, where(f), f.Message, flag))
		default:
			reasons = append(reasons, fmt.Sprintf("%s %s: %s (fix the configuration and plan again)", f.Code, where(f), f.Message))
		}
	}
	for _, ch := range p.Changes {
		// A blocked change comes with an NP303 error; this holds for a plan without it too.
		if ch.Blocked != "" {
			reasons = append(reasons, fmt.Sprintf("%s is blocked: %s", ch.Address, ch.Blocked))
		}
	}
	if !o.AllowDelete {
		var del []string
		for _, ch := range p.Changes {
			if ch.Action == plan.ActDelete || ch.Action == plan.ActReplace {
				del = append(del, ch.Address)
			}
		}
		if len(del) > 0 {
			reasons = append(reasons, fmt.Sprintf("the plan deletes or replaces %d object(s) (%s); review them and run with --allow-delete", len(del), abbreviate(del, 5)))
		}
	}
	return reasons
}

func where(f *finding.Finding) string {
	if f.Range != "" {
		return f.Address + " at " + f.Range
	}
	return f.Address
}

// abbreviate joins the first n items and says how many more there are.
func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// graph resolves every change's dependencies to indexes into p.Changes and checks that
// the plan can run: known kinds and actions, a config where one is needed, and no
// dependency on a later step or in a cycle. A dependency on an address the plan does not
// change is already satisfied. A change also depends on the earlier changes of its own
// address, so the second part of a split update never runs after the first failed.
func graph(p *plan.Plan) ([][]int, error) {
	byAddr := map[string][]int{}
	for i, ch := range p.Changes {
		if err := checkChange(ch); err != nil {
			return nil, fmt.Errorf("change %d (%s): %w", i+1, ch.Address, err)
		}
		byAddr[ch.Address] = append(byAddr[ch.Address], i)
	}
	deps := make([][]int, len(p.Changes))
	for i, ch := range p.Changes {
		seen := map[int]bool{}
		add := func(j int) {
			if j != i && !seen[j] {
				seen[j] = true
				deps[i] = append(deps[i], j)
			}
		}
		for _, addr := range ch.DependsOn {
			// Of an object changed in several steps, the parts up to this change's step
			// are the prerequisites; one changed only later makes the plan unrunnable.
			found := false
			for _, j := range byAddr[addr] {
				if p.Changes[j].Step <= ch.Step {
					add(j)
					found = true
				}
			}
			if !found && len(byAddr[addr]) > 0 {
				return nil, fmt.Errorf("%s (step %d) depends on %s, which changes only in a later step", ch.Address, ch.Step, addr)
			}
		}
		for _, j := range byAddr[ch.Address] {
			if j < i {
				add(j)
			}
		}
	}
	if cyc := cycle(deps); cyc >= 0 {
		return nil, fmt.Errorf("%s is part of a dependency cycle", p.Changes[cyc].Address)
	}
	return deps, nil
}

// cycle returns a change on a dependency cycle, or -1.
func cycle(deps [][]int) int {
	const (
		unseen = iota
		active
		finished
	)
	state := make([]int, len(deps))
	var visit func(i int) bool
	visit = func(i int) bool {
		state[i] = active
		for _, j := range deps[i] {
			if state[j] == active || state[j] == unseen && visit(j) {
				return true
			}
		}
		state[i] = finished
		return false
	}
	for i := range deps {
		if state[i] == unseen && visit(i) {
			return i
		}
	}
	return -1
}

// checkChange rejects a change apply would not know how to send.
func checkChange(ch *plan.Change) error {
	if ch.Name == "" {
		return fmt.Errorf("no name")
	}
	switch ch.Kind {
	case model.KindConsumer:
		if ch.Stream == "" {
			return fmt.Errorf("consumer without a stream")
		}
	case model.KindStream, model.KindKV, model.KindObjectStore:
		if ch.Action == plan.ActReplace {
			return fmt.Errorf("a %s is never replaced: its messages would be lost; plan again", ch.Kind)
		}
	default:
		return fmt.Errorf("unknown kind %q", ch.Kind)
	}
	switch ch.Action {
	case plan.ActDelete:
		return nil
	case plan.ActCreate, plan.ActUpdate, plan.ActAdopt, plan.ActReplace:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(ch.After, &obj); err != nil || obj == nil {
			return fmt.Errorf("%s needs the config to send in after", ch.Action)
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", ch.Action)
}
