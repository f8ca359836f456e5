package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// apiLevelNeed is the JetStream API level a field needs (the level the server stamps
// into _nats.req.level, jetstream_versioning.go) and the first release with it.
type apiLevelNeed struct {
	level   int
	release string
}

var streamLevels = map[string]apiLevelNeed{
	"allow_msg_ttl":             {1, "v2.11.0"},
	"subject_delete_marker_ttl": {1, "v2.11.0"},
	"allow_msg_counter":         {2, "v2.12.0"},
	"allow_atomic":              {2, "v2.12.0"},
	"allow_msg_schedules":       {2, "v2.12.0"},
	"allow_batched":             {4, "v2.14.0"},
}

var consumerLevels = map[string]apiLevelNeed{
	"pause_until":      {1, "v2.11.0"},
	"priority_groups":  {1, "v2.11.0"},
	"priority_policy":  {1, "v2.11.0"},
	"priority_timeout": {1, "v2.11.0"},
}

// Values that need a level of their own, beyond the field tables.
var (
	flowControlNeed  = apiLevelNeed{4, "v2.14.0"} // ack_policy = "flow_control"
	asyncPersistNeed = apiLevelNeed{2, "v2.12.0"} // persist_mode = "async"
)

// highestNeed is the highest level any field or value needs.
func highestNeed() int {
	high := max(flowControlNeed.level, asyncPersistNeed.level)
	for _, table := range []map[string]apiLevelNeed{streamLevels, consumerLevels} {
		for _, need := range table {
			high = max(high, need.level)
		}
	}
	return high
}

// checkAPILevels raises NP401 for every field a change sends that the target's API
// level does not know.
func (c *computer) checkAPILevels() {
	if c.live.Target == nil {
		return
	}
	have := c.live.Target.APILevel
	if have >= highestNeed() {
		// The target knows every field, so there is nothing to find; decoding each
		// change's config to look was a quarter of planning a large create.
		return
	}
	for _, ch := range c.p.Changes {
		if ch.After == nil {
			continue
		}
		var cfg map[string]any
		if err := json.Unmarshal(ch.After, &cfg); err != nil {
			continue
		}
		needs := map[string]apiLevelNeed{}
		table := streamLevels
		if ch.Kind == model.KindConsumer {
			table = consumerLevels
			if cfg["ack_policy"] == "flow_control" {
				needs["ack_policy = \"flow_control\""] = flowControlNeed
			}
			if p, _ := cfg["priority_policy"].(string); p == "none" {
				delete(cfg, "priority_policy")
			}
		} else if cfg["persist_mode"] == "async" {
			needs["persist_mode = \"async\""] = asyncPersistNeed
		}
		for k, need := range table {
			if v, ok := cfg[k]; ok && v != false && v != nil {
				needs[k] = need
			}
		}
		names := make([]string, 0, len(needs))
		for n := range needs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			need := needs[n]
			if need.level <= have {
				continue
			}
			c.finding(finding.CodeAPILevel, finding.SevError, ch.Address, c.fieldRange(ch, n), fmt.Sprintf(
				"%s needs JetStream API level %d (nats-server %s or newer); the target is at level %d: "+
					"upgrade the server or remove the setting", n, need.level, need.release, have))
		}
	}
}

// fieldRange is the source range of a field of a declared object; field may carry its
// value ("ack_policy = \"flow_control\"").
func (c *computer) fieldRange(ch *Change, field string) string {
	field, _, _ = strings.Cut(field, " ")
	if ch.Kind == model.KindConsumer {
		if dc := c.desired.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; dc != nil {
			return fieldPos(dc.Decl, topKey(field))
		}
		return ch.Decl
	}
	if ds := c.desired.Streams[ch.Name]; ds != nil {
		return fieldPos(ds.Decl, topKey(field))
	}
	return ch.Decl
}
