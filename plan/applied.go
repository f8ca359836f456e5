package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

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
		var now any
		if ch.Kind == model.KindConsumer {
			if lc := live.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; lc != nil {
				now = lc.Config
			}
		} else if ls := live.Streams[ch.Name]; ls != nil {
			now = ls.Config
		}
		if ch.Action == ActDelete {
			if now != nil {
				return false
			}
			continue
		}
		if now == nil || len(ch.After) == 0 {
			return false
		}
		have, err := json.Marshal(now)
		if err != nil {
			return false
		}
		if ok, err := Holds(ch.After, have); err != nil || !ok {
			return false
		}
	}
	return true
}

// Holds reports whether an object's live config (have, its JSON) holds every value a
// change sends (want, the change's After): the live object may have more keys (server
// defaults, server-owned metadata), a value the server leaves out of its JSON counts as
// the zero value, and one instant written two ways (pause_until) is the same value.
// AlreadyApplied and apply's read-back of a timed-out change both ask exactly this.
func Holds(want, have []byte) (bool, error) {
	var w, h any
	for _, x := range []struct {
		src []byte
		dst *any
	}{{want, &w}, {have, &h}} {
		d := json.NewDecoder(bytes.NewReader(x.src))
		d.UseNumber()
		if err := d.Decode(x.dst); err != nil {
			return false, fmt.Errorf("compare configs: %w", err)
		}
	}
	return within(w, h), nil
}

func within(w, h any) bool {
	wm, ok := w.(map[string]any)
	if !ok {
		return reflect.DeepEqual(w, h) || isZeroJSON(w) && h == nil || sameTime(w, h)
	}
	hm, _ := h.(map[string]any)
	for k, v := range wm {
		if !within(v, hm[k]) {
			return false
		}
	}
	return true
}

// sameTime reports whether w and h are one instant written two ways.
func sameTime(w, h any) bool {
	ws, ok1 := w.(string)
	hs, ok2 := h.(string)
	if !ok1 || !ok2 {
		return false
	}
	wt, err1 := time.Parse(time.RFC3339Nano, ws)
	ht, err2 := time.Parse(time.RFC3339Nano, hs)
	return err1 == nil && err2 == nil && wt.Equal(ht)
}

// isZeroJSON reports whether a decoded JSON value is its type's zero value.
func isZeroJSON(v any) bool {
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
