package plan

import (
	"encoding/json"
	"reflect"

	"github.com/natsplan/natsplan/model"
)

// AlreadyApplied reports whether live is p's target and every object p touches is
// already as p leaves it: created and updated objects hold every value the plan
// sends, deleted ones are gone.
// A saved plan that Verify refuses for this reason was applied before, and saying
// so beats listing each object as changed after planning.
func AlreadyApplied(p *Plan, live *model.Model) bool {
	if !p.HasChanges() || len(verifyTarget(p.Target, live.Target)) > 0 {
		return false
	}
	// A change split in phases ends in the state of its last phase.
	last := map[string]*Change{}
	for _, ch := range p.Changes {
		last[ch.Address] = ch
	}
	for _, ch := range last {
		var now map[string]any
		if ch.Kind == model.KindConsumer {
			if lc := live.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; lc != nil {
				now = mapOf(lc.Config)
			}
		} else if ls := live.Streams[ch.Name]; ls != nil {
			now = mapOf(ls.Config)
		}
		if ch.Action == ActDelete {
			if now != nil {
				return false
			}
			continue
		}
		want := mapOf(ch.After)
		if now == nil || want == nil || !holds(now, want) {
			return false
		}
	}
	return true
}

// holds reports whether the object now has every value of want; a value the server
// leaves out of its JSON counts as the zero value.
func holds(now, want map[string]any) bool {
	for k, w := range want {
		n, ok := now[k]
		if !ok {
			if !isZero(w) {
				return false
			}
			continue
		}
		wm, wok := w.(map[string]any)
		nm, nok := n.(map[string]any)
		if wok && nok {
			if !holds(nm, wm) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(n, w) {
			return false
		}
	}
	return true
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
