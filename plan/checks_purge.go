package plan

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// purgeWarnings raises NP302 for stream updates the server accepts but that delete
// stored messages: limits lowered below what is stored, limits -> interest with no
// consumers.
func (c *computer) purgeWarnings(ds *model.Stream, ls *model.Stream, fields []*FieldChange) {
	if ls.State == nil || ls.State.Msgs == 0 {
		return
	}
	addr := ds.Address()
	st := ls.State
	for _, f := range fields {
		before, bok := number(f.Before)
		after, aok := number(f.After)
		lowered := bok && aok && after >= 0 && (before < 0 || after < before) && !(f.Path == "max_age" && after == 0)
		var msg string
		switch f.Path {
		case "max_msgs":
			if lowered && after < int64(st.Msgs) {
				msg = fmt.Sprintf("max_msgs %d is below the %d messages stored: the oldest are deleted", after, st.Msgs)
			}
		case "max_bytes":
			if lowered && after < int64(st.Bytes) {
				msg = fmt.Sprintf("max_bytes %d is below the %d bytes stored: the oldest messages are deleted", after, st.Bytes)
			}
		case "max_age", "max_msgs_per_subject":
			if lowered {
				msg = fmt.Sprintf("lowering %s on a stream holding %d messages deletes those beyond the new limit", f.Path, st.Msgs)
			}
		case "retention":
			if f.Before == "limits" && f.After == "interest" && c.liveConsumerCount(ds.Name) == 0 {
				msg = fmt.Sprintf("limits -> interest with no consumers deletes all %d stored messages", st.Msgs)
			}
		}
		if msg != "" {
			c.finding(CodePurge, SevWarning, addr, fieldPos(ds.Decl, f.Path), msg)
		}
	}
}

// consumerPurgeWarning raises NP302 when narrowing a consumer's filter on an interest
// stream drops the messages only it was interested in.
func (c *computer) consumerPurgeWarning(dc *model.Consumer, lc *model.Consumer, fields []*FieldChange) {
	ls := c.live.Streams[dc.Stream]
	if ls == nil || ls.Config.Retention != server.InterestPolicy {
		return
	}
	for _, f := range fields {
		if f.Path != "filter_subject" && f.Path != "filter_subjects" {
			continue
		}
		if narrows(filtersOf(lc.Config), filtersOf(c.wantC[dc.Key()])) {
			c.finding(CodePurge, SevWarning, dc.Address(), fieldPos(dc.Decl, f.Path),
				"narrowing the filter of a consumer on an interest stream deletes the messages no other consumer wants")
			return
		}
	}
}

// lastInterestConsumer raises NP302 when deleting lc leaves its interest stream with
// no consumer, which deletes every stored message.
func (c *computer) lastInterestConsumer(lc *model.Consumer) {
	ls := c.live.Streams[lc.Stream]
	if ls == nil || ls.Config.Retention != server.InterestPolicy {
		return
	}
	remaining := 0
	for _, o := range c.live.ConsumersOf(lc.Stream) {
		if o.Name != lc.Name && !o.IsSystem() {
			remaining++
		}
	}
	for k := range c.desired.Consumers {
		if k.Stream == lc.Stream && c.live.Consumers[k] == nil {
			remaining++
		}
	}
	if remaining == 0 {
		c.finding(CodePurge, SevWarning, lc.Address(), "",
			"deleting the last consumer of interest stream "+lc.Stream+" deletes its stored messages")
	}
}

func (c *computer) liveConsumerCount(stream string) int {
	n := 0
	for _, o := range c.live.ConsumersOf(stream) {
		if !o.IsSystem() {
			n++
		}
	}
	return n
}

// filtersOf is a consumer's filter set; an empty set means everything.
func filtersOf(cfg server.ConsumerConfig) []string {
	if cfg.FilterSubject != "" {
		return []string{cfg.FilterSubject}
	}
	if len(cfg.FilterSubjects) == 0 {
		return []string{">"}
	}
	return cfg.FilterSubjects
}

// narrows reports whether some subject matched by before is matched by nothing in after.
func narrows(before, after []string) bool {
	for _, b := range before {
		covered := false
		for _, a := range after {
			if server.SubjectMatchesFilter(b, a) {
				covered = true
				break
			}
		}
		if !covered {
			return true
		}
	}
	return false
}

// number reads a JSON number.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	case float64:
		return int64(n), true
	}
	return 0, false
}
