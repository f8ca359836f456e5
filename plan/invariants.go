package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// CheckInvariants proves the rules that make concurrent consumers correct on the
// desired model. live is nil offline (validate); with it (plan) the checks also see
// the consumers on the server that the files do not declare, the live partition
// counts, and the account and server limits behind the consumer defaults. It is pure.
func CheckInvariants(desired, live *model.Model) []*finding.Finding {
	return newInvariants(desired, live).check()
}

// CheckInvariantsContext is CheckInvariants that stops soon after ctx ends, and then
// returns ctx's error and no findings.
func CheckInvariantsContext(ctx context.Context, desired, live *model.Model) ([]*finding.Finding, error) {
	v := newInvariants(desired, live)
	v.ctx = ctx
	out := v.check()
	if v.err != nil {
		return nil, fmt.Errorf("check invariants: %w", v.err)
	}
	return out, nil
}

// newInvariants prepares a run of the checks. Compute normalises the declared configs
// through it (streamConfig, config) so that the checks reuse that work.
func newInvariants(desired, live *model.Model) *invariants {
	v := &invariants{desired: desired, live: live, cfgs: map[*model.Consumer]server.ConsumerConfig{},
		streams: map[string]*server.StreamConfig{}, members: map[string][]*model.Consumer{}, ctx: context.Background(),
		keys: map[*model.Model][]model.ConsumerKey{}, names: map[*model.Model][]string{}}
	v.target = normTarget(desired, live)
	return v
}

// check runs the checks and returns their findings in code and address order. When
// ctx ends it stops early with v.err set, and what it returns is incomplete.
func (v *invariants) check() []*finding.Finding {
	checks := []func(){
		v.checkMappings,
		func() {
			for _, name := range slices.Sorted(maps.Keys(v.desired.Groups)) {
				if v.stopped() {
					return
				}
				v.checkGroup(v.desired.Groups[name])
			}
		},
		func() {
			for _, k := range v.consumerKeys(v.desired) {
				if v.stopped() {
					return
				}
				if c := v.desired.Consumers[k]; c.Group == "" {
					v.checkPlainConsumer(c)
				}
			}
		},
		v.checkFanOut,
		v.checkWorkqueues,
		v.checkDeadFilters,
		v.checkRewrites,
	}
	for _, check := range checks {
		if v.stopped() {
			return nil
		}
		check()
	}
	sort.SliceStable(v.out, func(i, j int) bool {
		if v.out[i].Code != v.out[j].Code {
			return v.out[i].Code < v.out[j].Code
		}
		return v.out[i].Address < v.out[j].Address
	})
	return v.out
}

// invariants holds one CheckInvariants run.
type invariants struct {
	desired, live *model.Model
	target        *model.Target
	out           []*finding.Finding
	// Memos: the checks compare consumers pairwise, and normalising is not free.
	cfgs    map[*model.Consumer]server.ConsumerConfig
	streams map[string]*server.StreamConfig
	members map[string][]*model.Consumer
	// keys and names memoise the models' sorted consumer keys and stream names (see
	// consumerKeys and streamNames), which several checks and phases walk.
	keys  map[*model.Model][]model.ConsumerKey
	names map[*model.Model][]string
	// ctx ends the run early; err is its error once seen (see stopped).
	ctx context.Context
	err error
}

// stopped reports whether the run was cancelled, and remembers why. Only the
// goroutine that runs the checks calls it; workers look at ctx.Err themselves.
func (v *invariants) stopped() bool {
	if v.err == nil {
		v.err = v.ctx.Err()
	}
	return v.err != nil
}

func (v *invariants) add(code finding.Code, sev finding.Severity, addr string, r hcl.Range, format string, args ...any) {
	v.out = append(v.out, &finding.Finding{Code: code, Severity: sev, Address: addr, Range: rangeString(r),
		Message: fmt.Sprintf(format, args...)})
}

// relate names the other object the last finding added is about.
func (v *invariants) relate(addr string) {
	v.out[len(v.out)-1].Related = addr
}

// streamAddress is the address of the stream named name: its kv or object_store
// address when the files declare it as one.
func (v *invariants) streamAddress(name string) string {
	if s := v.desired.Streams[name]; s != nil {
		return s.Address()
	}
	if v.live != nil {
		if s := v.live.Streams[name]; s != nil {
			return s.Address()
		}
	}
	return "stream." + name
}

// rangeString renders r as file:line:col, or "" when unknown.
func rangeString(r hcl.Range) string {
	if r.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// consumerRange is the range of a consumer field: on its own block, or on the group
// that generated it (filters on the group, other fields in its consumer {} template).
func (v *invariants) consumerRange(c *model.Consumer, field string) hcl.Range {
	if g := v.groupOf(c); g != nil {
		if field == "filter_subjects" || field == "filter_subject" {
			return g.FieldRange("filter_subjects")
		}
		return g.FieldRange("consumer." + field)
	}
	if c.Decl == nil {
		return hcl.Range{}
	}
	if field == "filter_subjects" {
		if r, ok := c.Decl.Fields["filter_subject"]; ok {
			return r
		}
	}
	return c.Decl.FieldRange(field)
}

// groupOf is the declared group that generated c.
func (v *invariants) groupOf(c *model.Consumer) *model.ConsumerGroup {
	if name, ok := strings.CutPrefix(c.Group, "consumer_group."); ok {
		return v.desired.Groups[name]
	}
	return nil
}

// consumerKeys is m.ConsumerKeys() for the desired or the live model, sorted once per
// run. The models do not change during a run; the caller must not change the slice.
func (v *invariants) consumerKeys(m *model.Model) []model.ConsumerKey {
	return memoised(v, v.keys, m, (*model.Model).ConsumerKeys)
}

// streamNames is consumerKeys for m.StreamNames().
func (v *invariants) streamNames(m *model.Model) []string {
	return memoised(v, v.names, m, (*model.Model).StreamNames)
}

// memoised is list(m), kept in memo when m is the run's desired or live model.
func memoised[T any](v *invariants, memo map[*model.Model]T, m *model.Model, list func(*model.Model) T) T {
	if m != v.desired && m != v.live {
		return list(m)
	}
	out, ok := memo[m]
	if !ok {
		out = list(m)
		memo[m] = out
	}
	return out
}

// streamConfig is the normalised config a stream will have: declared, else live.
func (v *invariants) streamConfig(name string) *server.StreamConfig {
	if cfg, ok := v.streams[name]; ok {
		return cfg
	}
	out := v.normStream(name)
	v.streams[name] = out
	return out
}

// normStream computes what streamConfig memoises.
func (v *invariants) normStream(name string) *server.StreamConfig {
	if s := v.desired.Streams[name]; s != nil {
		cfg := s.Config
		if cfg.Name == "" {
			cfg.Name = name
		}
		cfg = normalizeStream(cfg, v.target, streamDeclared(s))
		return &cfg
	}
	if v.live != nil && v.live.Streams[name] != nil {
		cfg := v.live.Streams[name].Config
		return &cfg
	}
	return nil
}

// config is a consumer's config with the server's defaults filled in; live configs
// already carry them.
func (v *invariants) config(c *model.Consumer) server.ConsumerConfig {
	if cfg, ok := v.cfgs[c]; ok {
		return cfg
	}
	cfg := v.normConsumer(c)
	v.cfgs[c] = cfg
	return cfg
}

// normConsumer computes what config memoises.
func (v *invariants) normConsumer(c *model.Consumer) server.ConsumerConfig {
	if v.declared(c) {
		return normalizeConsumer(c.Config, v.streamConfig(c.Stream), v.target, consumerDeclared(c))
	}
	return c.Config
}

// normaliseDeclared fills the memos for every declared stream and consumer, the
// normalising spread over the CPUs: a large plan spends much of its time here, and each
// config is normalised on its own. The memos are written by this goroutine only.
func (v *invariants) normaliseDeclared() {
	names := v.streamNames(v.desired)
	streams := make([]*server.StreamConfig, len(names))
	parallel(len(names), func(i int) {
		if v.ctx.Err() == nil {
			streams[i] = v.normStream(names[i])
		}
	})
	if v.stopped() {
		return
	}
	for i, name := range names {
		v.streams[name] = streams[i]
	}
	keys := v.consumerKeys(v.desired)
	for _, k := range keys {
		v.streamConfig(k.Stream) // memoised here so that the workers only read
	}
	cfgs := make([]server.ConsumerConfig, len(keys))
	parallel(len(keys), func(i int) {
		if v.ctx.Err() == nil {
			cfgs[i] = v.normConsumer(v.desired.Consumers[keys[i]])
		}
	})
	if v.stopped() {
		return
	}
	for i, k := range keys {
		v.cfgs[v.desired.Consumers[k]] = cfgs[i]
	}
}

// consumers are the consumers of stream once the plan is applied: the declared ones
// and the live durables it leaves alone (not this project's; or this project's but
// kept by prevent_destroy). Server-made consumers and ephemerals are left out.
func (v *invariants) consumers(stream string) []*model.Consumer {
	if cs, ok := v.members[stream]; ok {
		return cs
	}
	if len(v.members) == 0 {
		v.indexConsumers()
	}
	return v.members[stream]
}

// indexConsumers fills members for every stream in one pass over the models.
func (v *invariants) indexConsumers() {
	for _, k := range v.consumerKeys(v.desired) {
		v.members[k.Stream] = append(v.members[k.Stream], v.desired.Consumers[k])
	}
	if v.live == nil {
		return
	}
	for _, k := range v.consumerKeys(v.live) {
		lc := v.live.Consumers[k]
		if _, declared := v.desired.Consumers[k]; declared || lc.IsSystem() || lc.Config.Durable == "" {
			continue
		}
		owned := lc.Owner() == v.desired.Project && v.desired.Project != ""
		if owned && !keptByMetadata(lc.Config.Metadata) {
			continue // this plan deletes it
		}
		v.members[k.Stream] = append(v.members[k.Stream], lc)
	}
}

// streamsWithConsumers lists every stream that has a consumer, declared or live.
func (v *invariants) streamsWithConsumers() []string {
	set := map[string]bool{}
	for k := range v.desired.Consumers {
		set[k.Stream] = true
	}
	if v.live != nil {
		for k := range v.live.Consumers {
			set[k.Stream] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// declared reports whether c comes from the files.
func (v *invariants) declared(c *model.Consumer) bool {
	return v.desired.Consumers[c.Key()] == c
}
