package plan

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// limitsCheck walks the plan in execution order the way the server will see it, keeping
// what exists at each step, and raises NP403 where the account's limits (streams and
// consumers per tier, storage reservations, per-stream limits) or the number of servers
// refuse a change. The rules are the server's (jetstream.go checkLimits, stream.go
// checkStreamCfgLocked, consumer.go addConsumer): these are the checks the private
// preflight server can not make, because they depend on the target's account.
type limitsCheck struct {
	c *computer
	// tiers are the account's limits as the server selects them; peers the cluster size.
	tiers map[string]server.JetStreamAccountLimits
	peers int
	// streams holds every stream's config as it stands at the current step; consumers
	// the names of each stream's consumers that count toward max_consumers.
	streams   map[string]*server.StreamConfig
	consumers map[string]map[string]bool
}

// checkAccountLimits raises NP403. It needs the target: validate has none.
func (c *computer) checkAccountLimits() {
	t := c.live.Target
	if t == nil || (t.Tiers == nil && t.Peers == 0) {
		return
	}
	// Only changes are checked: a plan without any needs no index of the account.
	if len(c.p.Changes) == 0 {
		return
	}
	l := &limitsCheck{c: c, tiers: t.Tiers, peers: t.Peers,
		streams:   make(map[string]*server.StreamConfig, len(c.live.Streams)+1),
		consumers: make(map[string]map[string]bool, len(c.live.Streams)+1)}
	for name, s := range c.live.Streams {
		cfg := s.Config
		l.streams[name] = &cfg
		l.consumers[name] = map[string]bool{}
	}
	l.lockBucket()
	for k, lc := range c.live.Consumers {
		if !lc.Config.Sourcing && !lc.Config.Direct && l.consumers[k.Stream] != nil {
			l.consumers[k.Stream][k.Name] = true
		}
	}
	errored := Refused(c.p)
	for _, ch := range c.p.Changes {
		if errored[ch.Address] || ch.Blocked != "" {
			continue // apply will not send it
		}
		if ch.Kind == model.KindConsumer {
			l.consumer(ch)
		} else {
			l.stream(ch)
		}
	}
}

// lockBucket counts the apply lock's bucket, which apply creates before its first change
// when the files enable the lock and the bucket does not exist yet: it takes a stream of
// the account's limit like any other, so a create that fits only without it is refused
// here, not at apply after the lock is taken.
func (l *limitsCheck) lockBucket() {
	lk := l.c.desired.Lock
	if lk == nil {
		return
	}
	bucket := lk.Bucket
	if bucket == "" {
		bucket = model.DefaultLockBucket
	}
	name := "KV_" + bucket
	if _, ok := l.streams[name]; ok {
		return
	}
	l.streams[name] = &server.StreamConfig{Name: name, Replicas: 1, Storage: server.FileStorage,
		MaxBytes: -1, MaxMsgs: -1, MaxMsgsPer: 1}
	l.consumers[name] = map[string]bool{}
}

// Refused returns the addresses that already carry an error finding: a change refused
// once is not checked or reported again. An error a flag overrides (data loss) does not
// count: with the flag, apply sends the change, so it must be checked.
func Refused(p *Plan) map[string]bool {
	out := map[string]bool{}
	for _, f := range p.Findings {
		if f.Severity == finding.SevError && f.Overridable == "" {
			out[f.Address] = true
		}
	}
	return out
}

// refuser returns how to raise NP403 for ch at one of its attributes ("" for the block).
func (l *limitsCheck) refuser(ch *Change) func(path, msg string) {
	decl := DeclOf(l.c.desired, ch)
	return func(path, msg string) {
		l.c.finding(finding.CodeAccountLimits, finding.SevError, ch.Address, fieldPos(decl, path), msg)
	}
}

// DeclOf returns where the object a change touches is declared in desired, or nil.
func DeclOf(desired *model.Model, ch *Change) *model.Decl {
	if ch.Kind == model.KindConsumer {
		if dc := desired.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; dc != nil {
			return dc.Decl
		}
		return nil
	}
	if ds := desired.Streams[ch.Name]; ds != nil {
		return ds.Decl
	}
	return nil
}

// tier selects the limits for a replica count as the server does (selectLimits): the
// account-wide limits when there are any, else the tier "R<n>".
func (l *limitsCheck) tier(replicas int) (string, server.JetStreamAccountLimits, bool) {
	if lim, ok := l.tiers[""]; ok {
		return "", lim, true
	}
	name := fmt.Sprintf("R%d", max(1, replicas))
	lim, ok := l.tiers[name]
	return name, lim, ok
}

func (l *limitsCheck) stream(ch *Change) {
	switch ch.Action {
	case ActDelete:
		delete(l.streams, ch.Name)
		delete(l.consumers, ch.Name)
		return
	case ActCreate, ActUpdate, ActAdopt:
	default:
		return
	}
	var cfg server.StreamConfig
	if json.Unmarshal(ch.After, &cfg) != nil {
		return
	}
	refuse := l.refuser(ch)
	if l.replicas(cfg.Replicas, refuse) && l.tiers != nil {
		l.streamLimits(ch, &cfg, refuse)
	}
	l.streams[ch.Name] = &cfg
	if l.consumers[ch.Name] == nil {
		l.consumers[ch.Name] = map[string]bool{}
	}
}

// replicas refuses more replicas than the target has servers; it reports whether the
// count passed.
func (l *limitsCheck) replicas(n int, refuse func(path, msg string)) bool {
	switch {
	case l.peers == 0 || n <= l.peers:
		return true
	case l.peers == 1:
		refuse("num_replicas", fmt.Sprintf("the target refuses num_replicas = %d: it is a single server, not a cluster "+
			"(\"replicas > 1 not supported in non-clustered mode\", JetStream error 10074); set num_replicas = 1, or plan against a cluster", n))
	default:
		refuse("num_replicas", fmt.Sprintf("the target refuses num_replicas = %d: its cluster has %d servers, and each replica needs "+
			"its own (\"no suitable peers for placement\", JetStream error 10005); set num_replicas to at most %d, or add servers", n, l.peers, l.peers))
	}
	return false
}

// streamLimits checks a stream create or update against the account's limits as they
// stand at this step of the plan.
func (l *limitsCheck) streamLimits(ch *Change, cfg *server.StreamConfig, refuse func(path, msg string)) {
	tier, lim, ok := l.tier(cfg.Replicas)
	if !ok {
		refuse("num_replicas", fmt.Sprintf("the account has no JetStream limits for tier %s (streams with %d replicas): the server "+
			"refuses it (\"no JetStream default or applicable tiered limit present\", JetStream error 10120); use a replica count "+
			"the account has a tier for, or ask the operator to add the tier", tier, max(1, cfg.Replicas)))
		return
	}
	in := tierLabel(tier)
	if ch.Action == ActCreate && lim.MaxStreams > 0 {
		n := 0
		for name, s := range l.streams {
			if name != cfg.Name && (tier == "" || max(1, s.Replicas) == max(1, cfg.Replicas)) {
				n++
			}
		}
		if n >= lim.MaxStreams {
			refuse("", fmt.Sprintf("the account allows %d streams%s and %d exist when apply reaches this create (deletes run after "+
				"creates, except where a create takes a deleted stream's subjects): the server refuses it (\"maximum number of streams reached\", JetStream error 10027); "+
				"declare fewer streams, delete some first, or raise the account's max_streams", lim.MaxStreams, in, n))
			return
		}
	}
	required, perStream := lim.MaxBytesRequired, lim.StoreMaxStreamBytes
	if cfg.Storage == server.MemoryStorage {
		perStream = lim.MemoryMaxStreamBytes
	}
	if required && cfg.MaxBytes <= 0 {
		refuse("max_bytes", fmt.Sprintf("the account requires every stream to set max_bytes%s (\"account requires a stream config to "+
			"have max bytes set\", JetStream error 10113); set max_bytes", in))
		return
	}
	if perStream > 0 && cfg.MaxBytes > perStream {
		refuse("max_bytes", fmt.Sprintf("max_bytes %s is above the account's limit of %s per %s stream%s (\"stream max bytes exceeds "+
			"account limit max stream bytes\", JetStream error 10122)", sizeText(cfg.MaxBytes), sizeText(perStream),
			storageName(cfg.Storage), in))
		return
	}
	if cfg.MaxConsumers > 0 && lim.MaxConsumers > 0 && cfg.MaxConsumers > lim.MaxConsumers {
		refuse("max_consumers", fmt.Sprintf("max_consumers %d is above the account's limit of %d consumers per stream%s "+
			"(\"maximum consumers limit reached\", JetStream error 10026)", cfg.MaxConsumers, lim.MaxConsumers, in))
		return
	}
	l.storage(ch, cfg, tier, lim, refuse)
}

// storage checks the account's memory or file storage reservation: the server reserves
// every stream's max_bytes (times its replicas when the limits are not tiered) and
// refuses a stream whose reservation does not fit beside the others'.
func (l *limitsCheck) storage(ch *Change, cfg *server.StreamConfig, tier string, lim server.JetStreamAccountLimits, refuse func(path, msg string)) {
	limit, what, code, reason := lim.MaxStore, "file storage", 10047, "insufficient storage resources available"
	if cfg.Storage == server.MemoryStorage {
		limit, what, code, reason = lim.MaxMemory, "memory", 10028, "insufficient memory resources available"
	}
	if limit < 0 {
		return
	}
	var reserved int64
	for name, s := range l.streams {
		if name == cfg.Name || s.Storage != cfg.Storage || s.MaxBytes <= 0 {
			continue
		}
		if tier == "" || max(1, s.Replicas) == max(1, cfg.Replicas) {
			reserved += reservation(tier, s.Replicas, s.MaxBytes)
		}
	}
	own := reservation(tier, cfg.Replicas, cfg.MaxBytes)
	if cfg.MaxBytes <= 0 && ch.Action == ActCreate {
		own = 1 // the server counts an unlimited stream as one byte
	}
	if reserved > limit || own > limit-reserved {
		refuse("max_bytes", fmt.Sprintf("the account's %s limit%s is %s; the other streams reserve %s (their max_bytes) and this "+
			"one needs %s: the server refuses it (%q, JetStream error %d); lower max_bytes here or elsewhere, or raise the "+
			"account's limit", what, tierLabel(tier), sizeText(limit), sizeText(reserved), sizeText(own), reason, code))
	}
}

// reservation is what a stream's max_bytes counts against the account: times its
// replicas when the limits are account-wide; tiered limits already include replication.
func reservation(tier string, replicas int, maxBytes int64) int64 {
	if maxBytes <= 0 {
		return 0
	}
	if tier == "" && replicas > 1 {
		return int64(replicas) * maxBytes
	}
	return maxBytes
}

func tierLabel(tier string) string {
	if tier == "" {
		return ""
	}
	return " (tier " + tier + ")"
}

func storageName(s server.StorageType) string {
	if s == server.MemoryStorage {
		return "memory"
	}
	return "file"
}

func (l *limitsCheck) consumer(ch *Change) {
	switch ch.Action {
	case ActDelete:
		delete(l.consumers[ch.Stream], ch.Name)
		return
	case ActCreate, ActUpdate, ActAdopt, ActReplace:
	default:
		return
	}
	var cfg server.ConsumerConfig
	if json.Unmarshal(ch.After, &cfg) != nil {
		return
	}
	refuse := l.refuser(ch)
	// A consumer's replicas are bounded by its stream's, which are checked against the
	// cluster; more than the stream's is the server's own rule (preflight).
	st := l.streams[ch.Stream]
	if st == nil || l.tiers == nil {
		l.addConsumer(ch)
		return
	}
	replicas := cfg.Replicas
	if replicas == 0 {
		replicas = st.Replicas
	}
	tier, lim, ok := l.tier(replicas)
	if !ok {
		return // the stream's own tier finding says it
	}
	in := tierLabel(tier)
	if lim.MaxAckPending > 0 && cfg.MaxAckPending > lim.MaxAckPending {
		refuse("max_ack_pending", fmt.Sprintf("max_ack_pending %d is above the account's limit of %d%s (\"consumer max ack pending "+
			"exceeds system limit of %d\", JetStream error 10121)", cfg.MaxAckPending, lim.MaxAckPending, in, lim.MaxAckPending))
		return
	}
	if ch.Action == ActCreate || ch.Action == ActReplace {
		maxc := st.MaxConsumers
		if maxc <= 0 || (lim.MaxConsumers > 0 && lim.MaxConsumers < maxc) {
			maxc = lim.MaxConsumers
		}
		have := len(l.consumers[ch.Stream])
		if ch.Action == ActReplace {
			have-- // the replace deletes it first
		}
		if maxc > 0 && have >= maxc {
			refuse("", fmt.Sprintf("stream %s may have %d consumers (the lower of its max_consumers and the account's limit%s) and "+
				"already has %d when apply reaches this create: the server refuses it (\"maximum consumers limit reached\", "+
				"JetStream error 10026); raise the limit or declare fewer consumers", ch.Stream, maxc, in, have))
			return
		}
	}
	l.addConsumer(ch)
}

func (l *limitsCheck) addConsumer(ch *Change) {
	if l.consumers[ch.Stream] == nil {
		l.consumers[ch.Stream] = map[string]bool{}
	}
	l.consumers[ch.Stream][ch.Name] = true
}

// sizeText spells a byte count as the language reads it ("10GiB").
func sizeText(n int64) string {
	if s, ok := model.FormatSize(n); ok {
		return s
	}
	return fmt.Sprint(n)
}
