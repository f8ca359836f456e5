package plan

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// ageMargin is how close to the new max_age a stored message may be and still count as
// lost: it covers the time between the check and the update reaching the server, so a
// message that would expire a moment after the check is not called safe.
const ageMargin = time.Minute

// DataLoss judges every change of p that can remove stored messages or the consumers of
// a deleted stream against live, the state of the server: the state Compute read when
// planning, and a fresh read when apply runs (the same judgement, so a saved plan is
// judged against the server as it is when it is applied). live must hold every stream
// StateNeeded names, and every consumer of those ConsumersNeeded names.
//
// The findings are errors: NP301 (deleting a stream that holds messages) and NP302 (an
// update or delete that removes stored messages, or a stream delete that takes consumers
// the project does not own), which --allow-data-loss accepts, and NP302 without an
// override for a consumer that would go with its stream but is not in the plan, or that
// the server lists but can not report.
func DataLoss(p *Plan, live *model.Model) []*finding.Finding {
	return judgeLoss(p, live, nil).out
}

// StateNeeded names the streams whose config and state DataLoss needs: those the plan
// deletes, or updates in a field that can lose data, and those whose consumers it
// deletes, replaces or re-filters.
func StateNeeded(p *Plan) []string {
	var streams []string
	seen := map[string]bool{}
	for _, ch := range p.Changes {
		if ch.Action == ActCreate || !canLose(ch) {
			continue
		}
		name := ch.Name
		if ch.Kind == model.KindConsumer {
			name = ch.Stream
		}
		if !seen[name] {
			seen[name] = true
			streams = append(streams, name)
		}
	}
	return streams
}

// lossFields are the fields whose change can make the server delete stored messages:
// the stream limits it enforces on update, retention, and a consumer's filter.
var lossFields = map[string]bool{"max_msgs": true, "max_bytes": true, "max_msgs_per_subject": true,
	"max_age": true, "discard": true, "retention": true, "filter_subject": true, "filter_subjects": true}

// canLose reports whether a change can lose stored data at all: every delete and
// replace, and an update or adopt that changes one of lossFields; never a blocked change,
// which apply refuses. Any other update leaves
// the limits the server already enforces as they are.
func canLose(ch *Change) bool {
	if ch.Blocked != "" {
		return false // apply never makes it
	}
	if ch.Action != ActUpdate && ch.Action != ActAdopt {
		return true
	}
	for _, f := range ch.Fields {
		if lossFields[topKey(f.Path)] {
			return true
		}
	}
	return false
}

// ConsumersNeeded returns whether DataLoss needs every consumer of a live stream: when
// the plan deletes it (its consumers go with it), changes consumers of it while it has
// interest retention (whether others keep interest), or changes its retention (whether
// it has consumers at all). The plan is indexed once, so asking is cheap.
func ConsumersNeeded(p *Plan) func(ls *model.Stream) bool {
	deleted, consumersChanged, retention := map[string]bool{}, map[string]bool{}, map[string][]server.RetentionPolicy{}
	for _, ch := range p.Changes {
		switch {
		case !canLose(ch):
		case ch.Kind == model.KindConsumer:
			if ch.Action != ActCreate {
				consumersChanged[ch.Stream] = true
			}
		case ch.Action == ActDelete:
			deleted[ch.Name] = true
		case ch.Action == ActUpdate || ch.Action == ActAdopt:
			var after struct {
				Retention server.RetentionPolicy `json:"retention"`
			}
			if json.Unmarshal(ch.After, &after) == nil {
				retention[ch.Name] = append(retention[ch.Name], after.Retention)
			}
		}
	}
	return func(ls *model.Stream) bool {
		if deleted[ls.Name] || consumersChanged[ls.Name] && ls.Config.Retention == server.InterestPolicy {
			return true
		}
		for _, r := range retention[ls.Name] {
			if r != ls.Config.Retention {
				return true
			}
		}
		return false
	}
}

// lossJudge holds one DataLoss judgement.
type lossJudge struct {
	p    *Plan
	live *model.Model
	// pos returns where path of the object a change acts on was declared; nil uses the
	// change's Decl (apply has nothing finer).
	pos func(ch *Change, path string) string
	// deletedStreams and deletes index the plan's stream deletes and every delete or
	// replace by address.
	deletedStreams map[string]bool
	deletes        map[string]*Change
	// lossy are the changes that lose data.
	lossy map[*Change]bool
	// after is the config a stream has after the changes judged so far.
	after map[string]server.StreamConfig
	out   []*finding.Finding
	seen  map[string]bool
	// consumers are the live consumers by stream, indexed on first use (consumersOf):
	// a plan without changes asks for none.
	consumers map[string][]*model.Consumer
}

// consumersOf is the live consumers of stream, in name order.
func (j *lossJudge) consumersOf(stream string) []*model.Consumer {
	if j.consumers == nil {
		j.consumers = consumersByStream(j.live)
	}
	return j.consumers[stream]
}

// consumersByStream indexes the consumers of m by stream, each list in name order, so
// that looking up one stream's consumers does not walk all of them.
func consumersByStream(m *model.Model) map[string][]*model.Consumer {
	out := map[string][]*model.Consumer{}
	for _, k := range m.ConsumerKeys() {
		out[k.Stream] = append(out[k.Stream], m.Consumers[k])
	}
	return out
}

func judgeLoss(p *Plan, live *model.Model, pos func(ch *Change, path string) string) *lossJudge {
	j := &lossJudge{p: p, live: live, pos: pos, deletedStreams: map[string]bool{}, deletes: map[string]*Change{}, lossy: map[*Change]bool{},
		after: map[string]server.StreamConfig{}, seen: map[string]bool{}}
	for _, ch := range p.Changes {
		if ch.Action == ActDelete || ch.Action == ActReplace {
			j.deletes[ch.Address] = ch
			if ch.Kind != model.KindConsumer {
				j.deletedStreams[ch.Name] = true
			}
		}
	}
	for _, ch := range p.Changes {
		switch {
		case !canLose(ch):
		case ch.Kind != model.KindConsumer && ch.Action == ActDelete:
			j.streamDelete(ch)
		case ch.Kind != model.KindConsumer && (ch.Action == ActUpdate || ch.Action == ActAdopt):
			j.streamUpdate(ch)
		case ch.Kind == model.KindConsumer && !j.deletedStreams[ch.Stream]:
			j.consumerChange(ch)
		}
	}
	return j
}

// add records a finding about the change ch once per code, address and attribute.
func (j *lossJudge) add(code finding.Code, ch *Change, addr, path, msg string, overridable bool) {
	j.lossy[ch] = true
	key := string(code) + " " + addr + " " + path
	if j.seen[key] {
		return
	}
	j.seen[key] = true
	rng := ch.Decl
	if j.pos != nil {
		rng = j.pos(ch, path)
	}
	if j.pos == nil && !j.planned(code, addr) {
		msg += " (found when apply read the server again: the plan did not show it)"
	}
	f := &finding.Finding{Code: code, Severity: finding.SevError, Address: addr, Message: msg, Range: rng}
	if overridable {
		f.Overridable = finding.OverrideDataLoss
	}
	j.out = append(j.out, f)
}

// state is a live stream's state; a stream the server did not report state for is
// taken to hold messages, so that nothing is called safe on no evidence.
func state(ls *model.Stream) model.StreamState {
	if ls.State == nil {
		return model.StreamState{Msgs: 1}
	}
	return *ls.State
}

// streamDelete: a stream that holds messages (NP301); its consumers go with it, and
// those the project does not own are lost data too (NP302).
func (j *lossJudge) streamDelete(ch *Change) {
	ls := j.live.Streams[ch.Name]
	if ls == nil {
		return // already gone: apply counts the delete as done
	}
	if st := state(ls); st.Msgs > 0 {
		j.add(finding.CodeDataLoss, ch, ch.Address, "", fmt.Sprintf("deleting %s loses %s (%d bytes): declare it again to keep it",
			ch.Address, messages(st.Msgs, "its"), st.Bytes), true)
	}
	for _, o := range j.live.Offline {
		if strings.HasPrefix(o.Address, "consumer."+ch.Name+".") {
			j.add(finding.CodePurge, ch, o.Address, "", fmt.Sprintf("%s is offline on the server (%s), and deleting %s would delete it "+
				"unseen: bring the server's peers back and plan again", o.Address, o.Reason, ch.Address), false)
		}
	}
	for _, lc := range j.consumersOf(ch.Name) {
		if lc.IsSystem() || lc.Config.Durable == "" {
			continue
		}
		addr := lc.Address()
		switch del := j.deletes[addr]; {
		case del == nil:
			j.add(finding.CodePurge, ch, addr, "", fmt.Sprintf("%s exists on the server but is not in the plan, and deleting %s "+
				"would delete it too: plan again and review the new plan", addr, ch.Address), false)
		case lc.Owner() != ls.Owner():
			j.add(finding.CodePurge, del, addr, "", fmt.Sprintf("deleting %s also deletes %s, which this project does not own (%s): "+
				"whoever uses it loses its position and ack state", ch.Address, addr, unmanagedReason(lc.Owner())), true)
		}
	}
}

// messages counts messages in words: "its 1 message", "its 10 messages", "all 2 messages".
func messages(n uint64, det string) string {
	if n == 1 {
		return det + " 1 message"
	}
	return fmt.Sprintf("%s %d messages", det, n)
}

// planned reports whether the plan already has a finding of code about addr.
func (j *lossJudge) planned(code finding.Code, addr string) bool {
	for _, f := range j.p.Findings {
		if f.Code == code && f.Address == addr {
			return true
		}
	}
	return false
}

// streamUpdate: the server enforces the new limits on the stored messages as soon as it
// takes the update (fileStore and memStore UpdateConfig, stream.updateWithAdvisory).
func (j *lossJudge) streamUpdate(ch *Change) {
	ls := j.live.Streams[ch.Name]
	if ls == nil {
		return
	}
	before, ok := j.after[ch.Name]
	if !ok {
		before = ls.Config
	}
	var after server.StreamConfig
	if err := json.Unmarshal(ch.After, &after); err != nil {
		return // apply refuses a change it can not decode
	}
	j.after[ch.Name] = after
	st := state(ls)
	if st.Msgs == 0 {
		return
	}
	names := limitNames(ch.Kind)
	// max_msgs and max_bytes are enforced only with discard old: with discard new the
	// server refuses new messages instead.
	if after.Discard == server.DiscardOld {
		if after.MaxMsgs > 0 && st.Msgs > uint64(after.MaxMsgs) {
			j.add(finding.CodePurge, ch, ch.Address, limitPath(before, after, "max_msgs"), fmt.Sprintf(
				"%s holds %d messages and max_msgs %d with discard old deletes the oldest %d of them",
				ch.Address, st.Msgs, after.MaxMsgs, st.Msgs-uint64(after.MaxMsgs)), true)
		}
		if after.MaxBytes > 0 && st.Bytes > uint64(after.MaxBytes) {
			j.add(finding.CodePurge, ch, ch.Address, limitPath(before, after, "max_bytes"), fmt.Sprintf(
				"%s holds %d bytes in %d messages and max_bytes %d with discard old deletes the oldest messages "+
					"until %d bytes remain", ch.Address, st.Bytes, st.Msgs, after.MaxBytes, after.MaxBytes), true)
		}
	}
	if after.MaxMsgsPer > 0 && (before.MaxMsgsPer <= 0 || after.MaxMsgsPer < before.MaxMsgsPer) {
		if msg := perSubjectLoss(st, after.MaxMsgsPer); msg != "" {
			j.add(finding.CodePurge, ch, ch.Address, "max_msgs_per_subject", fmt.Sprintf("%s %d on %s, which %s",
				names.perSubject, after.MaxMsgsPer, ch.Address, msg), true)
		}
	}
	if after.MaxAge > 0 && (before.MaxAge <= 0 || after.MaxAge < before.MaxAge) {
		if msg := ageLoss(st, after.MaxAge); msg != "" {
			j.add(finding.CodePurge, ch, ch.Address, "max_age", fmt.Sprintf("%s %s on %s, which %s",
				names.age, model.FormatDuration(after.MaxAge), ch.Address, msg), true)
		}
	}
	if before.Retention == server.LimitsPolicy && after.Retention == server.InterestPolicy {
		what := fmt.Sprintf("the stored messages every consumer has already acknowledged (up to all %d)", st.Msgs)
		if j.consumerCount(ch.Name) == 0 {
			what = fmt.Sprintf("all %d stored messages: it has no consumers", st.Msgs)
		}
		j.add(finding.CodePurge, ch, ch.Address, "retention", fmt.Sprintf("retention limits -> interest on %s deletes %s",
			ch.Address, what), true)
	}
}

// limitPath is the attribute a max_msgs or max_bytes loss points at: the limit when it
// changes, else discard (a change to discard old is what enforces it).
func limitPath(before, after server.StreamConfig, path string) string {
	if before.Discard != after.Discard && ((path == "max_msgs" && before.MaxMsgs == after.MaxMsgs) ||
		(path == "max_bytes" && before.MaxBytes == after.MaxBytes)) {
		return "discard"
	}
	return path
}

// bucketNames are the user's names of the stream limits of one kind of object.
type bucketNames struct{ perSubject, age string }

func limitNames(kind model.Kind) bucketNames {
	switch kind {
	case model.KindKV:
		return bucketNames{"history", "ttl"}
	case model.KindObjectStore:
		return bucketNames{"max_msgs_per_subject", "ttl"}
	}
	return bucketNames{"max_msgs_per_subject", "max_age"}
}

// perSubjectLoss says which messages a per-subject limit deletes, or "" when the state
// proves it deletes none. The state has only the number of subjects, not the count of
// each, so between the two certain cases the loss is possible, not proven.
func perSubjectLoss(st model.StreamState, limit int64) string {
	l := uint64(limit)
	switch {
	case st.Msgs <= l:
		return "" // no subject can hold more than all the messages
	case st.NumSubjects > 0 && uint64(st.NumSubjects) == st.Msgs:
		return "" // one message per subject
	case st.NumSubjects > 0 && st.Msgs > uint64(st.NumSubjects)*l:
		return fmt.Sprintf("deletes at least %d of its %d messages: they are on %d subject(s), so some subject holds more than %d",
			st.Msgs-uint64(st.NumSubjects)*l, st.Msgs, st.NumSubjects, l)
	case st.NumSubjects > 0:
		return fmt.Sprintf("may delete up to %d of its %d messages (those beyond the newest %d of any of its %d subject(s)); "+
			"the server reports how many subjects there are, not how many messages each holds",
			st.Msgs-uint64(st.NumSubjects), st.Msgs, l, st.NumSubjects)
	}
	return fmt.Sprintf("may delete up to %d of its %d messages (those beyond the newest %d of any subject)",
		st.Msgs-1, st.Msgs, l)
}

// ageLoss says which messages a new max_age deletes at once, or "" when the oldest is
// younger than the limit by more than ageMargin.
func ageLoss(st model.StreamState, maxAge time.Duration) string {
	if st.FirstTime.IsZero() || st.ReadAt.IsZero() {
		return fmt.Sprintf("may delete its %d messages: the server did not say how old they are", st.Msgs)
	}
	oldest := st.ReadAt.Sub(st.FirstTime)
	if oldest+ageMargin < maxAge {
		return ""
	}
	age := model.FormatDuration(oldest.Round(time.Second))
	if oldest >= maxAge {
		return fmt.Sprintf("deletes at once its messages older than %s: it holds %d and the oldest is %s old",
			model.FormatDuration(maxAge), st.Msgs, age)
	}
	return fmt.Sprintf("deletes its oldest messages within %s of the check: it holds %d and the oldest is %s old",
		model.FormatDuration((maxAge - oldest).Round(time.Second)), st.Msgs, age)
}

// consumerCount counts the live consumers of stream that keep interest: durable ones,
// the server's own (sources) included.
func (j *lossJudge) consumerCount(stream string) int {
	n := 0
	for _, lc := range j.consumersOf(stream) {
		if lc.Config.Durable != "" || lc.IsSystem() {
			n++
		}
	}
	return n
}

// consumerChange: on an interest stream the server deletes the stored messages nobody
// has interest in any more as soon as a consumer is deleted or its filter narrows
// (consumer.cleanupNoInterestMessages); workqueue and limits streams keep them.
func (j *lossJudge) consumerChange(ch *Change) {
	ls := j.live.Streams[ch.Stream]
	lc := j.live.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]
	if ls == nil || lc == nil {
		return
	}
	// The stream's update, if the plan has one, runs first: a stream this plan moves to
	// interest retention loses messages to the consumer change too.
	after, updated := j.after[ch.Stream]
	if ls.Config.Retention != server.InterestPolicy && (!updated || after.Retention != server.InterestPolicy) {
		return
	}
	st := state(ls)
	if st.Msgs == 0 {
		return
	}
	var pending, unacked uint64
	holds := true // without its state, take it to hold messages
	if lc.State != nil {
		pending, unacked = lc.State.NumPending, uint64(max(lc.State.NumAckPending, 0))
		holds = pending+unacked > 0
	}
	stream := "stream." + ch.Stream + " (interest retention)"
	switch ch.Action {
	case ActDelete, ActReplace:
		verb := "deleting"
		if ch.Action == ActReplace {
			verb = "replacing (delete, then create)"
		}
		remaining := 0
		for _, o := range j.consumersOf(ch.Stream) {
			if o.Name != lc.Name && (o.Config.Durable != "" || o.IsSystem()) && j.deletes[o.Address()] == nil {
				remaining++
			}
		}
		switch {
		case remaining == 0:
			j.add(finding.CodePurge, ch, ch.Address, "", fmt.Sprintf("%s %s leaves %s without consumers, "+
				"which deletes all its %d messages", verb, ch.Address, stream, st.Msgs), true)
		case holds:
			j.add(finding.CodePurge, ch, ch.Address, "", fmt.Sprintf("%s %s deletes the messages of %s that "+
				"only it still wants (%d not yet delivered, %d unacknowledged)", verb, ch.Address, stream, pending, unacked), true)
		}
	case ActUpdate, ActAdopt:
		var after server.ConsumerConfig
		if err := json.Unmarshal(ch.After, &after); err != nil {
			return
		}
		if !narrows(filtersOf(lc.Config), filtersOf(after)) || !holds {
			return
		}
		path := "filter_subjects"
		if after.FilterSubject != "" || lc.Config.FilterSubject != "" {
			path = "filter_subject"
		}
		j.add(finding.CodePurge, ch, ch.Address, path, fmt.Sprintf("narrowing the filter of %s on %s deletes "+
			"the messages on the subjects it drops that no other consumer wants (it has %d not yet delivered, %d "+
			"unacknowledged)", ch.Address, stream, pending, unacked), true)
	}
}

// judgeLoss adds DataLoss's findings to the plan, pointing at the attributes declared,
// and marks the changes they are about as destructive.
func (c *computer) judgeLoss() {
	pos := func(ch *Change, path string) string {
		if ch.Kind == model.KindConsumer {
			if dc := c.desired.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; dc != nil {
				return fieldPos(dc.Decl, path)
			}
			return ch.Decl
		}
		if ds := c.desired.Streams[ch.Name]; ds != nil {
			return fieldPos(ds.Decl, path)
		}
		return ch.Decl
	}
	j := judgeLoss(c.p, c.live, pos)
	for ch := range j.lossy {
		ch.Destructive = true
	}
	c.p.Findings = append(c.p.Findings, j.out...)
}
