package status

import (
	"slices"
	"sort"
	"strings"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// Evaluate builds the report of cur against what desired declares: a row per
// declared consumer and per undeclared consumer on a declared stream, the groups and
// dead-letter streams, and the conditions that hold. prev, when not nil, is the
// previous sample, from which rates and drain estimates are computed. It does no I/O.
func Evaluate(desired *model.Model, cur, prev *Sample, th Thresholds) *Report {
	live := cur.Live
	r := &Report{FormatVersion: FormatVersion, Target: live.Target, Time: cur.Time}
	for _, o := range live.Offline {
		r.Offline = append(r.Offline, o.String())
	}
	streams := Streams(desired)
	byKey := map[model.ConsumerKey]*Consumer{}
	for _, k := range desired.ConsumerKeys() {
		c := consumerRow(desired.Consumers[k], live.Consumers[k], desired)
		byKey[k] = c
		r.Consumers = append(r.Consumers, c)
	}
	for _, k := range live.ConsumerKeys() {
		if _, ok := byKey[k]; ok || !streams[k.Stream] {
			continue
		}
		c := consumerRow(nil, live.Consumers[k], desired)
		byKey[k] = c
		r.Consumers = append(r.Consumers, c)
	}
	sort.SliceStable(r.Consumers, func(i, j int) bool { return consumerLess(r.Consumers[i], r.Consumers[j]) })
	if prev != nil {
		r.Interval = cur.Time.Sub(prev.Time).Seconds()
		for _, c := range r.Consumers {
			c.Rates = consumerRates(c, prev.Live.Consumers[model.ConsumerKey{Stream: c.Stream, Name: c.Name}], r.Interval)
		}
	}
	r.Groups = groups(desired, byKey, prev, r.Interval)
	r.DeadLetters = deadLetters(desired, live)
	r.Findings = conditions(desired, r, cur, th)
	return r
}

// consumerLess orders rows by stream, then group, then lane number, then name, so a
// group's lanes read 0, 1, ... 10 rather than 0, 1, 10.
func consumerLess(a, b *Consumer) bool {
	if a.Stream != b.Stream {
		return a.Stream < b.Stream
	}
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Lane != "" && b.Lane != "" && len(a.Lane) != len(b.Lane) {
		return len(a.Lane) < len(b.Lane)
	}
	return a.Name < b.Name
}

// consumerRow is the row of one consumer: declared (d), live (l), or both.
func consumerRow(d, l *model.Consumer, desired *model.Model) *Consumer {
	src := l
	if src == nil {
		src = d
	}
	c := &Consumer{Address: src.Address(), Stream: src.Stream, Name: src.Name, Declared: d != nil, Missing: l == nil}
	if d != nil {
		c.Decl = d.Decl.String()
		c.Group = d.Group
		if d.DeadLetter != nil {
			c.DeadLetter = d.DeadLetter.Stream
		}
		if g := groupOf(desired, d.Group); g != nil && g.Mapping != "" {
			c.Lane = strings.TrimPrefix(d.Name, g.Name+"-")
		}
	}
	cfg := src.Config
	c.MaxAckPending = cfg.MaxAckPending
	c.filters = filtersOf(cfg.FilterSubject, cfg.FilterSubjects)
	c.system = src.IsSystem()
	c.ackNone = cfg.AckPolicy == server.AckNone
	if l == nil || l.State == nil {
		return c
	}
	s := l.State
	c.NumPending, c.NumAckPending, c.NumRedelivered, c.NumWaiting = s.NumPending, s.NumAckPending, s.NumRedelivered, s.NumWaiting
	c.PushBound, c.Paused, c.created = s.PushBound, s.Paused, s.Created
	c.Delivered, c.AckFloor = s.Delivered.Consumer, s.AckFloor.Consumer
	if !s.Delivered.Last.IsZero() {
		t := s.Delivered.Last
		c.LastDelivery = &t
	}
	if !s.AckFloor.Last.IsZero() {
		t := s.AckFloor.Last
		c.LastAck = &t
	}
	return c
}

func groupOf(desired *model.Model, address string) *model.ConsumerGroup {
	name, ok := strings.CutPrefix(address, "consumer_group.")
	if !ok {
		return nil
	}
	return desired.Groups[name]
}

// filtersOf is a consumer's filters as a sorted set.
func filtersOf(one string, many []string) []string {
	out := slices.Clone(many)
	if one != "" {
		out = append(out, one)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// groups sums each declared group's consumers.
func groups(desired *model.Model, byKey map[model.ConsumerKey]*Consumer, prev *Sample, interval float64) []*Group {
	var out []*Group
	names := make([]string, 0, len(desired.Groups))
	for n := range desired.Groups {
		names = append(names, n)
	}
	sort.Strings(names)
	byGroup := map[string][]*Consumer{}
	for k, c := range desired.Consumers {
		if c.Group != "" {
			byGroup[c.Group] = append(byGroup[c.Group], byKey[k])
		}
	}
	for _, n := range names {
		dg := desired.Groups[n]
		g := &Group{Address: dg.Address(), Name: dg.Name, Stream: dg.Stream, Partitions: dg.Mapping != "", Decl: dg.Decl.String()}
		if dg.DeadLetter != nil {
			g.DeadLetter = dg.DeadLetter.Stream
		}
		members := byGroup[g.Address]
		sort.SliceStable(members, func(i, j int) bool { return consumerLess(members[i], members[j]) })
		var prevBacklog uint64
		rated := prev != nil && interval > 0
		for _, c := range members {
			g.Consumers = append(g.Consumers, c.Name)
			g.NumPending += c.NumPending
			g.NumAckPending += c.NumAckPending
			g.MaxAckPending += max(c.MaxAckPending, 0)
			g.NumRedelivered += c.NumRedelivered
			g.NumWaiting += c.NumWaiting
			if !rated {
				continue
			}
			if c.Rates == nil {
				rated = false // a lane appeared or was re-created: no group rate this time
				continue
			}
			if g.Rates == nil {
				g.Rates = &Rates{}
			}
			g.Rates.Delivered += c.Rates.Delivered
			g.Rates.Acked += c.Rates.Acked
			g.Rates.Redelivered += c.Rates.Redelivered
			g.Rates.PendingGrowth += c.Rates.PendingGrowth
			pc := prev.Live.Consumers[model.ConsumerKey{Stream: c.Stream, Name: c.Name}]
			prevBacklog += pc.State.NumPending + uint64(max(pc.State.NumAckPending, 0))
		}
		if rated && g.Rates != nil {
			g.DrainSeconds = drain(prevBacklog, g.Backlog(), interval)
		} else {
			g.Rates = nil
		}
		out = append(out, g)
	}
	return out
}

// deadLetters reports every dead-letter stream the files name.
func deadLetters(desired *model.Model, live *model.Model) []*DeadLetter {
	by := map[string]*DeadLetter{}
	for _, k := range desired.ConsumerKeys() {
		c := desired.Consumers[k]
		if c.DeadLetter == nil || c.DeadLetter.Stream == "" {
			continue
		}
		name := c.DeadLetter.Stream
		d := by[name]
		if d == nil {
			d = &DeadLetter{Address: "stream." + name, Stream: name, Decl: c.DeadLetter.Decl.String()}
			if ls := live.Streams[name]; ls == nil || ls.State == nil {
				d.Missing = true
			} else {
				d.Msgs, d.LastSeq = ls.State.Msgs, ls.State.LastSeq
				if ls.State.Msgs > 0 && !ls.State.LastTime.IsZero() {
					t := ls.State.LastTime
					d.Newest = &t
				}
			}
			by[name] = d
		}
		owner := c.Address()
		if c.Group != "" {
			owner = c.Group
		}
		if !slices.Contains(d.For, owner) {
			d.For = append(d.For, owner)
		}
	}
	out := make([]*DeadLetter, 0, len(by))
	for _, d := range by {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stream < out[j].Stream })
	return out
}
