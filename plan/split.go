package plan

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// splitStream turns the changed fields of one stream into the updates the server
// accepts: it refuses to move (placement) and scale (num_replicas) in one update, and
// to do either together with a retention change (10123). Each part is its own Change
// with the intermediate config as After; parts run in order.
func splitStream(before, want server.StreamConfig, fields []*FieldChange) []*Change {
	var rest, replicas, placement []*FieldChange
	retention := false
	for _, f := range fields {
		switch topKey(f.Path) {
		case "placement":
			placement = append(placement, f)
		case "num_replicas":
			replicas = append(replicas, f)
		default:
			if topKey(f.Path) == "retention" {
				retention = true
			}
			rest = append(rest, f)
		}
	}
	var parts [][]*FieldChange
	switch {
	case retention:
		parts = [][]*FieldChange{rest, replicas, placement}
	case len(replicas) > 0 && len(placement) > 0:
		parts = [][]*FieldChange{append(rest, replicas...), placement}
	default:
		parts = [][]*FieldChange{fields}
	}
	var nonEmpty [][]*FieldChange
	for _, p := range parts {
		if len(p) > 0 {
			nonEmpty = append(nonEmpty, p)
		}
	}
	wantMap := mapOf(want)
	cur := mapOf(before)
	var out []*Change
	prev := rawJSON(before)
	for i, part := range nonEmpty {
		for _, f := range part {
			k := topKey(f.Path)
			if v, ok := wantMap[k]; ok {
				cur[k] = v
			} else {
				delete(cur, k)
			}
		}
		after := cur
		if i == len(nonEmpty)-1 {
			after = wantMap // the last part sends exactly the desired config
		}
		ch := &Change{Fields: part, Before: prev, After: rawJSON(after)}
		if len(nonEmpty) > 1 {
			ch.Phase = fmt.Sprintf("%d/%d", i+1, len(nonEmpty))
			if i > 0 {
				ch.LiveHash = Hash(prev)
			}
		}
		prev = ch.After
		out = append(out, ch)
	}
	return out
}
