package plan

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// splitStream turns the changed fields of one stream into the updates the server
// accepts: it refuses to move (placement) and to scale (num_replicas) or change
// retention in the same update (10123, jsClusteredStreamUpdateRequestLocked). The move
// then goes in its own, later part; each part is its own Change with the intermediate
// config as After, and parts run in order.
func splitStream(before, want server.StreamConfig, fields []*FieldChange) []*Change {
	var rest, placement []*FieldChange
	reconfigures := false
	for _, f := range fields {
		switch topKey(f.Path) {
		case "placement":
			placement = append(placement, f)
			continue
		case "num_replicas", "retention":
			reconfigures = true
		}
		rest = append(rest, f)
	}
	parts := [][]*FieldChange{fields}
	if reconfigures && len(placement) > 0 {
		parts = [][]*FieldChange{rest, placement}
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
