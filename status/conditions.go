package status

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// judge holds what the conditions read while they are checked.
type judge struct {
	desired *model.Model
	live    *model.Model
	now     time.Time
	th      Thresholds
	out     []*Finding
}

// conditions returns the NP5xx findings of r: a pure function of the desired model,
// the sample and the thresholds. A consumer with nothing to do (nothing pending,
// nothing in flight) is never flagged.
func conditions(desired *model.Model, r *Report, cur *Sample, th Thresholds) []*Finding {
	j := &judge{desired: desired, live: cur.Live, now: cur.Time, th: th}
	idleLanes := map[string][]*Consumer{}
	for _, c := range r.Consumers {
		if c.Missing || c.system || c.Backlog() == 0 {
			continue
		}
		j.pool(c)
		j.redeliveries(c)
		if j.nobodyPulls(c) {
			idleLanes[c.Group] = append(idleLanes[c.Group], c)
		}
	}
	for _, group := range sortedKeys(idleLanes) {
		j.reportIdle(group, idleLanes[group])
	}
	for _, g := range r.Groups {
		j.hotLane(g, r)
	}
	for _, d := range r.DeadLetters {
		j.deadLetters(d)
	}
	j.fanOut(r)
	sort.SliceStable(j.out, func(a, b int) bool {
		if j.out[a].Code != j.out[b].Code {
			return j.out[a].Code < j.out[b].Code
		}
		return j.out[a].Address < j.out[b].Address
	})
	return j.out
}

func (j *judge) add(code finding.Code, sev finding.Severity, addr string, r hcl.Range, counters map[string]any, fix, format string, args ...any) {
	j.out = append(j.out, &Finding{
		Finding:  finding.Finding{Code: code, Severity: sev, Address: addr, Message: fmt.Sprintf(format, args...), Range: (&model.Decl{Range: r}).String()},
		Fix:      fix,
		Counters: counters,
	})
}

// fieldRange is where a consumer's field is declared: on its own block, or in its
// group's consumer {} template ("workers.x" paths name the group's workers block).
func (j *judge) fieldRange(c *Consumer, path string) hcl.Range {
	if g := groupOf(j.desired, c.Group); g != nil {
		if strings.HasPrefix(path, "workers.") {
			return g.FieldRange(path)
		}
		return g.FieldRange("consumer." + path)
	}
	if d := j.desired.Consumers[model.ConsumerKey{Stream: c.Stream, Name: c.Name}]; d != nil {
		return d.Decl.FieldRange(path)
	}
	return hcl.Range{}
}

func (j *judge) workers(c *Consumer) *model.Workers {
	if g := groupOf(j.desired, c.Group); g != nil {
		return g.Workers
	}
	return nil
}

// perKeyLane reports a lane of a per_key group at one message in flight: there a
// full pool and parked pulls are the price of order, not a fault.
func (j *judge) perKeyLane(c *Consumer) bool {
	g := groupOf(j.desired, c.Group)
	return g != nil && g.Mapping != "" && g.Ordering == "per_key" && c.MaxAckPending == 1
}

// pool reports NP501 (the in-flight pool is full while messages wait) and NP507 (and
// pull requests are parked behind it).
func (j *judge) pool(c *Consumer) {
	if c.MaxAckPending <= 0 || c.NumAckPending < c.MaxAckPending || c.NumPending == 0 || j.perKeyLane(c) {
		return
	}
	counters := map[string]any{"num_pending": c.NumPending, "num_ack_pending": c.NumAckPending, "max_ack_pending": c.MaxAckPending, "num_waiting": c.NumWaiting}
	w := j.workers(c)
	if c.NumWaiting > 0 {
		fix := "make every fetch fit the pool: lower the workers' fetch batch to at most max_ack_pending / workers, or raise max_ack_pending to workers × fetch batch"
		if w != nil && w.FetchBatch > 0 {
			counters["fetch_batch"] = w.FetchBatch
			fix = fmt.Sprintf("make every fetch fit the pool: with fetch_batch = %d and %d workers, set max_ack_pending to at least %d, or lower fetch_batch", w.FetchBatch, max(w.Count, 1), max(w.Count, 1)*w.FetchBatch)
		}
		j.add(CodeParkedPulls, finding.SevError, c.Address, j.fieldRange(c, "workers.fetch_batch"), counters, fix,
			"%d pull request(s) parked while the in-flight pool is full (%d/%d) and %d message(s) wait: each request waits out its expiry for messages the pool will not hand out (the fetch-batch trap)",
			c.NumWaiting, c.NumAckPending, c.MaxAckPending, c.NumPending)
		return
	}
	fix := "raise max_ack_pending to what the workers handle at once (workers × fetch batch × concurrency); if order matters per key, partition instead"
	if w != nil && w.Count > 0 {
		want := w.Count * max(w.FetchBatch, 1)
		fix = fmt.Sprintf("raise max_ack_pending to %d (workers.count %d × fetch_batch %d) so every worker has work; if order matters per key, partition with a subject_mapping instead", want, w.Count, max(w.FetchBatch, 1))
	}
	j.add(CodePoolSaturated, finding.SevWarning, c.Address, j.fieldRange(c, "max_ack_pending"), counters, fix,
		"in-flight pool saturated: %d/%d messages in flight while %d wait, so workers take turns whatever their number",
		c.NumAckPending, c.MaxAckPending, c.NumPending)
}

// redeliveries reports NP502: messages in flight that were delivered more than once.
func (j *judge) redeliveries(c *Consumer) {
	if c.NumRedelivered <= 0 || c.ackNone {
		return
	}
	counters := map[string]any{"num_redelivered": c.NumRedelivered, "num_ack_pending": c.NumAckPending}
	var ackWait time.Duration
	maxDeliver := 0
	if l := j.live.Consumers[model.ConsumerKey{Stream: c.Stream, Name: c.Name}]; l != nil {
		ackWait, maxDeliver = l.Config.AckWait, l.Config.MaxDeliver
		counters["ack_wait"] = ackWait.String()
		counters["max_deliver"] = maxDeliver
	}
	fix := fmt.Sprintf("raise ack_wait (%s) above the longest handling time, or have slow handlers send progress acks; find handlers that crash or nak", ackWait)
	if w := j.workers(c); w != nil && w.MaxHandlerTime > 0 {
		fix += fmt.Sprintf("; workers.max_handler_time says %s", w.MaxHandlerTime)
	}
	if c.DeadLetter == "" && maxDeliver > 0 {
		fix += fmt.Sprintf("; after %d deliveries a message is dropped from processing: add dead_letter {} to keep it", maxDeliver)
	}
	j.add(CodeRedeliveries, finding.SevWarning, c.Address, j.fieldRange(c, "ack_wait"), counters, fix,
		"%d message(s) in flight were delivered more than once: handlers take longer than ack_wait %s, crash, or nak",
		c.NumRedelivered, ackWait)
}

// nobodyPulls reports whether c holds NP504: messages wait, none are in flight, no pull
// request is parked, no push subscriber is bound, and nothing was delivered for Idle.
func (j *judge) nobodyPulls(c *Consumer) bool {
	if c.NumPending == 0 || c.NumAckPending > 0 || c.NumWaiting > 0 || c.PushBound || c.Paused {
		return false
	}
	last := c.created
	if c.LastDelivery != nil && c.LastDelivery.After(last) {
		last = *c.LastDelivery
	}
	return j.now.Sub(last) >= j.th.Idle
}

// reportIdle reports NP504 for the consumers of one group (or, with group "", each
// consumer alone); a group's idle lanes are one finding on the group.
func (j *judge) reportIdle(group string, cs []*Consumer) {
	const fix = "start the workers (or find why they stopped: crashed, lost their connection, pulling another consumer's name)"
	if group == "" || len(cs) == 1 {
		for _, c := range cs {
			j.add(CodeNobodyPulls, finding.SevError, c.Address, j.fieldRange(c, "workers.count"),
				map[string]any{"num_pending": c.NumPending, "num_ack_pending": 0, "num_waiting": 0, "idle": j.idleFor(c)}, fix,
				"%d message(s) wait and nobody pulls: no pull request parked, nothing in flight, %s", c.NumPending, j.idleFor(c))
		}
		return
	}
	g := groupOf(j.desired, group)
	var names []string
	var pending uint64
	for _, c := range cs {
		names = append(names, c.Name)
		pending += c.NumPending
	}
	var r hcl.Range
	if g != nil {
		r = g.FieldRange("workers.count")
	}
	j.add(CodeNobodyPulls, finding.SevError, group, r,
		map[string]any{"num_pending": pending, "consumers": names}, fix,
		"%d message(s) wait on %d consumer(s) of the group and nobody pulls them: %s", pending, len(cs), strings.Join(names, ", "))
}

func (j *judge) idleFor(c *Consumer) string {
	if c.LastDelivery == nil {
		return "never delivered"
	}
	return "last delivery " + age(j.now.Sub(*c.LastDelivery)) + " ago"
}

// hotLane reports NP503: one lane of a partitioned group far behind the others.
func (j *judge) hotLane(g *Group, r *Report) {
	if !g.Partitions {
		return
	}
	var lanes []*Consumer
	for _, c := range r.Consumers {
		if c.Group == g.Address && !c.Missing {
			lanes = append(lanes, c)
		}
	}
	if len(lanes) < 2 {
		return
	}
	backlogs := make([]uint64, len(lanes))
	hot := lanes[0]
	for i, c := range lanes {
		backlogs[i] = c.Backlog()
		if c.Backlog() > hot.Backlog() {
			hot = c
		}
	}
	slices.Sort(backlogs)
	median := backlogs[len(backlogs)/2]
	if len(backlogs)%2 == 0 {
		median = (backlogs[len(backlogs)/2-1] + backlogs[len(backlogs)/2]) / 2
	}
	top := hot.Backlog()
	if top < j.th.LaneBacklog || float64(top) < j.th.LaneSkew*float64(median) {
		return
	}
	skew := "the median lane holds none"
	counters := map[string]any{"lane": hot.Name, "lane_backlog": top, "median_backlog": median, "lanes": len(lanes)}
	if median > 0 {
		s := float64(top) / float64(median)
		counters["skew"] = s
		skew = fmt.Sprintf("%.0f× the median lane's %d", s, median)
	}
	dg := groupOf(j.desired, g.Address)
	var rng hcl.Range
	if dg != nil {
		rng = dg.FieldRange("mapping")
	}
	j.add(CodeHotLane, finding.SevWarning, g.Address, rng, counters,
		"find the hot key (natsplan partition SUBJECT tells which lane a subject lands in); spread it with a finer key, or more partitions if several keys share the lane; per-key order means one key never goes faster than one worker",
		"lane %s is far behind: %d message(s) pending or in flight, %s — a hot key", hot.Name, top, skew)
}

// deadLetters reports NP505: the dead-letter stream holds messages.
func (j *judge) deadLetters(d *DeadLetter) {
	if d.Missing || d.Msgs == 0 {
		return
	}
	counters := map[string]any{"messages": d.Msgs, "last_seq": d.LastSeq}
	newest := ""
	if d.Newest != nil {
		counters["newest"] = d.Newest.UTC().Format(time.RFC3339)
		newest = fmt.Sprintf(", the newest %s ago", age(j.now.Sub(*d.Newest)))
	}
	var rng hcl.Range
	if dl := j.deadLetterDecl(d.Stream); dl != nil {
		rng = dl.Range
	}
	j.add(CodeDeadLetters, finding.SevWarning, d.Address, rng, counters,
		fmt.Sprintf("read the advisories in %s (each names the stream sequence of the message given up on), fix the cause, republish or discard, then purge the stream", d.Stream),
		"dead-letter stream %s holds %d message(s)%s, from %s", d.Stream, d.Msgs, newest, strings.Join(d.For, ", "))
}

func (j *judge) deadLetterDecl(stream string) *model.Decl {
	for _, k := range j.desired.ConsumerKeys() {
		c := j.desired.Consumers[k]
		if c.DeadLetter != nil && c.DeadLetter.Stream == stream && c.DeadLetter.Decl != nil {
			return c.DeadLetter.Decl
		}
	}
	return nil
}

// fanOut reports NP506: live consumers outside the files that read exactly the same
// filter as others on the same stream, the way per-process durables (worker-<pid>)
// do: each gets every message.
func (j *judge) fanOut(r *Report) {
	type key struct{ stream, filters string }
	clusters := map[key][]*Consumer{}
	var keys []key
	for _, c := range r.Consumers {
		if c.Missing || c.system || c.ackNone || (!c.Declared && !j.active(c)) {
			continue
		}
		k := key{c.Stream, strings.Join(c.filters, " ")}
		if clusters[k] == nil {
			keys = append(keys, k)
		}
		clusters[k] = append(clusters[k], c)
	}
	for _, k := range keys {
		var declared []*Consumer
		declaredNames := map[string]bool{}
		byStem := map[string][]*Consumer{}
		for _, c := range clusters[k] {
			if c.Declared {
				declared = append(declared, c)
				declaredNames[c.Name] = true
				declaredNames[strings.TrimPrefix(c.Group, "consumer_group.")] = true
			} else {
				byStem[stem(c.Name)] = append(byStem[stem(c.Name)], c)
			}
		}
		// Per-process durables share a name but for their last part (worker-4711,
		// worker-4712, or email-<host> beside the declared email); another team's
		// consumer that happens to read the same subjects does not.
		var extra []*Consumer
		for _, st := range sortedKeys(byStem) {
			if cs := byStem[st]; len(cs) >= 2 || declaredNames[st] {
				extra = append(extra, cs...)
			}
		}
		if len(extra) == 0 {
			continue
		}
		names := make([]string, len(extra))
		for i, c := range extra {
			names[i] = c.Name
		}
		filter := k.filters
		if filter == "" {
			filter = "every subject"
		}
		addr, rng := "stream."+k.stream, hcl.Range{}
		if st := j.desired.Streams[k.stream]; st != nil && st.Decl != nil {
			rng = st.Decl.Range
		}
		if len(declared) > 0 {
			d := declared[0]
			addr, rng = d.Address, j.fieldRange(d, "durable_name")
			if d.Group != "" {
				addr = d.Group
			}
		}
		j.add(CodeRuntimeFanOut, finding.SevError, addr, rng,
			map[string]any{"stream": k.stream, "filter": filter, "consumers": names, "declared": len(declared)},
			"have every worker bind the declared durable by its name instead of creating its own (worker-<pid>), then delete the extra consumers",
			"%d live consumer(s) outside the files read %s of stream %s, as per-process durables do: %s; each gets every message, so work is done once per consumer",
			len(extra), filter, k.stream, strings.Join(names, ", "))
	}
}

// stem is a consumer name without its last "-", "_" or "." part: what per-process
// durables of one worker share.
func stem(name string) string {
	if i := strings.LastIndexAny(name, "-_."); i > 0 {
		return name[:i]
	}
	return name
}

// active reports whether c shows signs of a worker: a parked pull, messages in
// flight, a bound push subscriber, or a delivery within Idle.
func (j *judge) active(c *Consumer) bool {
	return c.NumWaiting > 0 || c.NumAckPending > 0 || c.PushBound ||
		(c.LastDelivery != nil && j.now.Sub(*c.LastDelivery) < j.th.Idle)
}

// age renders a duration for people: "3s", "4m10s", "2h5m".
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Hour:
		return d.Truncate(time.Second).String()
	}
	return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
