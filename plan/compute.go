package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// Options tune Compute.
type Options struct {
	// Version is the natsplan version written into the plan.
	Version string
	// Only are the --only patterns: the plan keeps the changes whose address matches
	// one of them, with their dependencies (Only). A pattern that matches no object of
	// the project makes Compute return an *OnlyError.
	Only []string
}

// computer holds the state of one Compute call.
type computer struct {
	desired, live *model.Model
	opts          Options
	p             *Plan
	// want are the normalised desired configs, as apply sends them; normaliseDesired
	// fills them, and the desired hash reads them from then on: they do not change.
	want  map[string]server.StreamConfig
	wantC map[model.ConsumerKey]server.ConsumerConfig
	// deleted are the live streams this plan deletes.
	deleted map[string]bool
	// offline maps the addresses the server listed but could not report to the reason.
	offline map[string]string
	// inv runs the invariant checks; it also normalises the declared configs, once.
	inv *invariants
	// badMeta holds the addresses NP407 was raised for.
	badMeta map[string]bool
	// sent holds the config a create's After encodes (*server.StreamConfig or
	// *server.ConsumerConfig), so ordering need not decode it again.
	sent map[*Change]any
	// ctx ends the computation early; err is its error once seen (see stopped).
	ctx context.Context
	err error
}

// stopped reports whether the computation was cancelled, and remembers why.
func (c *computer) stopped() bool {
	if c.err == nil {
		c.err = c.ctx.Err()
	}
	return c.err != nil
}

// Compute diffs desired against live and returns the plan. It is pure: no I/O. live is
// what observe read (live.Target set). Errors are for impossible inputs only; refusals
// are Findings.
func Compute(desired, live *model.Model, opts Options) (*Plan, error) {
	return ComputeContext(context.Background(), desired, live, opts)
}

// ComputeContext is Compute that stops soon after ctx ends and then returns ctx's
// error and no plan: a plan of tens of thousands of objects is seconds of CPU, which
// an interrupted command does not wait for.
func ComputeContext(ctx context.Context, desired, live *model.Model, opts Options) (*Plan, error) {
	if desired == nil || live == nil {
		return nil, errors.New("compute plan: both the desired and the live model are required")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("compute plan: %w", err)
	}
	if err := CheckOnly(opts.Only, desired, live); err != nil {
		return nil, err
	}
	c := &computer{
		desired: desired, live: live, opts: opts,
		p: &Plan{
			FormatVersion: FormatVersion, NatsplanVersion: opts.Version,
			Changes: []*Change{}, Findings: []*finding.Finding{}, Drift: []*Drift{}, Unmanaged: []*Object{},
		},
		want:    map[string]server.StreamConfig{},
		wantC:   map[model.ConsumerKey]server.ConsumerConfig{},
		deleted: map[string]bool{},
		offline: offlineObjects(live),
		inv:     newInvariants(desired, live),
		sent:    map[*Change]any{},
		badMeta: map[string]bool{},
		ctx:     ctx,
	}
	c.inv.ctx = ctx
	if t := live.Target; t != nil {
		c.p.Target = Target{URL: t.URL, Server: t.Server, Cluster: t.Cluster, Domain: t.Domain,
			Account: t.Account, APILevel: t.APILevel}
	}
	c.normaliseDesired()
	if c.stopped() {
		return nil, fmt.Errorf("compute plan: %w", c.err)
	}
	// The hash is of the configs as normalised here: the maps are not changed after
	// normaliseDesired (what a consumer's diff keeps of its live config, see
	// keepUnreadableDefaults, stays out of them), so the hash reads them as they are. It
	// is computed when the plan document is first encoded (Plan.MarshalJSON): hashing
	// every config is a large part of computing a plan, and only the document shows it.
	want, wantC, project := c.want, c.wantC, desired.Project
	c.p.hashDesired = sync.OnceValue(func() string { return desiredHash(project, want, wantC) })
	if l := desired.Lock; l != nil {
		c.p.Lock = &LockSpec{Project: desired.Project, Bucket: l.Bucket}
		if l.TTL > 0 {
			c.p.Lock.TTL = l.TTL.String()
		}
	}
	// Each phase, and each object within the long ones, first looks at ctx.
	phases := []func(){
		func() {
			for _, name := range c.inv.streamNames(desired) {
				if c.stopped() {
					return
				}
				c.stream(desired.Streams[name])
			}
		},
		func() {
			for _, k := range c.inv.consumerKeys(desired) {
				if c.stopped() {
					return
				}
				c.consumer(desired.Consumers[k])
			}
		},
		c.undeclared,
		c.checkAPILevels,
		c.checkOverlaps,
		func() { c.p.Findings = append(c.p.Findings, c.inv.check()...); c.err = c.inv.err },
		c.judgeLoss,
		func() { c.p.Findings = append(c.p.Findings, permissionFindings(desired, live)...) },
		c.order,
		func() { OrderLanes(c.p, desired, live) },
		// A partial plan is cut before the account's limits are judged: what is left
		// out is not created and takes no room.
		func() { c.err = Only(c.p, desired, live, opts.Only) },
		c.checkAccountLimits,
		c.summarise,
	}
	for _, phase := range phases {
		if c.stopped() {
			break
		}
		phase()
	}
	if c.stopped() {
		return nil, fmt.Errorf("compute plan: %w", c.err)
	}
	return c.p, nil
}

// ownership writes natsplan's metadata marks into a desired config's metadata.
func (c *computer) ownership(md map[string]string, lc model.Lifecycle) map[string]string {
	out := make(map[string]string, len(md)+2)
	for k, v := range md {
		out[k] = v
	}
	if c.desired.Project != "" {
		out[model.MetaProject] = c.desired.Project
	}
	if lc.PreventDestroy {
		out[model.MetaPreventDestroy] = "true"
	}
	return out
}

// normaliseDesired fills want and wantC: ownership metadata plus the server's defaults.
// The invariant checks normalise the same declared configs without the ownership marks;
// normalising ignores metadata except to strip server keys from it, so the configs are
// taken from there and only the metadata is done here, as the normalisers do it.
func (c *computer) normaliseDesired() {
	c.inv.normaliseDeclared()
	if c.err = c.inv.err; c.err != nil {
		return
	}
	for name, s := range c.desired.Streams {
		cfg := *c.inv.streamConfig(name)
		cfg.Metadata = ownedMetadata(c.ownership(s.Config.Metadata, s.Lifecycle))
		c.want[name] = cfg
	}
	// mirror_direct is the origin's allow_direct, declared or live, unless the file
	// sets it (NP305 says when the server would refuse that).
	for name, cfg := range c.want {
		if cfg.Mirror == nil || cfg.Mirror.External != nil || streamDeclared(c.desired.Streams[name]).set("mirror_direct", false) {
			continue
		}
		if o, ok := c.want[cfg.Mirror.Name]; ok {
			cfg.MirrorDirect = o.AllowDirect
		} else if o := c.live.Streams[cfg.Mirror.Name]; o != nil {
			cfg.MirrorDirect = o.Config.AllowDirect
		}
		c.want[name] = cfg
	}
	for k, dc := range c.desired.Consumers {
		md := c.ownership(dc.Config.Metadata, dc.Lifecycle)
		if dc.Config.Durable == "" && dc.Config.Name == "" {
			// The checks normalise the config as declared; this one gets a name.
			cfg := dc.Config
			cfg.Durable, cfg.Metadata = k.Name, md
			c.wantC[k] = normalizeConsumer(cfg, c.streamConfig(k.Stream), c.inv.target, consumerDeclared(dc))
			continue
		}
		// Of the stream, normalising a consumer reads only consumer_limits, which the
		// ownership marks and mirror_direct of want leave as the checks have them.
		cfg := c.inv.config(dc)
		cfg.Metadata = ownedMetadata(md)
		c.wantC[k] = cfg
	}
}

// streamConfig is the config a consumer's stream will have: declared, else live.
func (c *computer) streamConfig(name string) *server.StreamConfig {
	if cfg, ok := c.want[name]; ok {
		return &cfg
	}
	if s := c.live.Streams[name]; s != nil {
		cfg := s.Config
		return &cfg
	}
	return nil
}

// desiredHash identifies the desired model: the project and every normalised config.
// It is Hash of the document hashDoc builds, written into the hash one config at a
// time: the whole document at once was several copies of every config's JSON in
// memory (at 30,000 objects, most of a plan's peak heap).
func desiredHash(project string, want map[string]server.StreamConfig, wantC map[model.ConsumerKey]server.ConsumerConfig) string {
	if h, ok := streamedHash(project, want, wantC); ok {
		return h
	}
	return Hash(hashDoc(project, want, wantC))
}

// desiredDoc is the document desiredHash hashes.
type desiredDoc struct {
	Project   string                           `json:"project"`
	Streams   map[string]server.StreamConfig   `json:"streams"`
	Consumers map[string]server.ConsumerConfig `json:"consumers"`
}

func hashDoc(project string, want map[string]server.StreamConfig, wantC map[model.ConsumerKey]server.ConsumerConfig) desiredDoc {
	doc := desiredDoc{project, want, make(map[string]server.ConsumerConfig, len(wantC))}
	for k, cfg := range wantC {
		doc.Consumers[k.String()] = cfg
	}
	return doc
}

// streamedHash is Hash(hashDoc(...)), with the canonical JSON written member by
// member in the order canonicalJSON sorts them. ok is false when a config's JSON is
// not canonical byte-wise, or two consumers' keys are the same string; then Hash
// takes its own path over the whole document.
func streamedHash(project string, want map[string]server.StreamConfig, wantC map[model.ConsumerKey]server.ConsumerConfig) (string, bool) {
	h := sha256.New()
	// Keys sort "consumers" < "project" < "streams"; every key is written as
	// json.Marshal writes a string, which is how canonicalJSON writes it back.
	consumers := make([]keyed[model.ConsumerKey], 0, len(wantC))
	for k := range wantC {
		consumers = append(consumers, keyed[model.ConsumerKey]{k.String(), k})
	}
	streams := make([]keyed[string], 0, len(want))
	for name := range want {
		streams = append(streams, keyed[string]{name, name})
	}
	h.Write([]byte(`{"consumers":`))
	if !streamedMembers(h, consumers, func(k model.ConsumerKey) any { return wantC[k] }) {
		return "", false
	}
	h.Write([]byte(`,"project":`))
	b, err := json.Marshal(project)
	if err != nil {
		return "", false
	}
	h.Write(b)
	h.Write([]byte(`,"streams":`))
	if !streamedMembers(h, streams, func(name string) any { return want[name] }) {
		return "", false
	}
	h.Write([]byte(`}`))
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), true
}

// keyed is a map key and the name it has in the hashed document.
type keyed[K any] struct {
	name string
	key  K
}

// streamedMembers writes the canonical JSON of an object to w, member by member, in
// the order of the members' names. As canonicalJSON does, a member named "metadata"
// is treated as metadata: its server keys go, and so does the member when nothing is
// left.
func streamedMembers[K any](w io.Writer, members []keyed[K], value func(K) any) bool {
	slices.SortFunc(members, func(a, b keyed[K]) int { return strings.Compare(a.name, b.name) })
	w.Write([]byte{'{'})
	first := true
	for i, m := range members {
		if i > 0 && members[i-1].name == m.name {
			return false
		}
		b, err := json.Marshal(value(m.key))
		if err != nil {
			return false
		}
		mode := canonNormal
		if m.name == "metadata" && len(b) > 0 && b[0] == '{' {
			mode = canonMeta
		}
		if b, err = canonicalValue(b, mode); err != nil {
			return false
		}
		if mode == canonMeta && string(b) == "{}" {
			continue
		}
		key, err := json.Marshal(m.name)
		if err != nil {
			return false
		}
		if !first {
			w.Write([]byte{','})
		}
		first = false
		w.Write(key)
		w.Write([]byte{':'})
		w.Write(b)
	}
	w.Write([]byte{'}'})
	return true
}

// finding records a finding.
func (c *computer) finding(code finding.Code, sev finding.Severity, addr, rng, msg string) *finding.Finding {
	f := &finding.Finding{Code: code, Severity: sev, Address: addr, Message: msg, Range: rng}
	c.p.Findings = append(c.p.Findings, f)
	return f
}

// foreign reports whether a live object is owned by another project, and says so.
func (c *computer) foreign(owner, addr string, d *model.Decl) bool {
	if owner == "" || owner == c.desired.Project {
		return false
	}
	c.finding(finding.CodeForeignOwner, finding.SevError, addr, d.String(), fmt.Sprintf(
		"%s exists and is owned by project %q (metadata %s): natsplan leaves it alone; remove it from "+
			"this project's files, rename it, or move it to this project by changing its %s metadata",
		addr, owner, model.MetaProject, model.MetaProject))
	return true
}

// stream plans one declared stream.
func (c *computer) stream(ds *model.Stream) {
	want := c.want[ds.Name]
	// The declaration's position is rendered only for a change: most objects have none.
	addr := ds.Address()
	ls := c.live.Streams[ds.Name]
	if c.isOffline("stream."+ds.Name, addr, ds.Decl) {
		return
	}
	if ls == nil {
		ch := &Change{Address: addr, Kind: kindOf(ds), Name: ds.Name, Action: ActCreate,
			After: rawJSON(want), Decl: ds.Decl.String()}
		if want.Sealed {
			c.finding(finding.CodeRefused, finding.SevError, addr, fieldPos(ds.Decl, "sealed"),
				"sealed can not be set when a stream is created: create it first, then set sealed = true in a later apply")
			ch.Blocked = "the server refuses to create a sealed stream (NP303): apply refuses this plan until the " +
				"configuration is changed"
		}
		c.sent[ch] = &want
		c.add(ch)
		return
	}
	if c.foreign(ls.Owner(), addr, ds.Decl) {
		return
	}
	c.badMetadata(addr, ds.Decl, ls.Config.Metadata, metaRefusal)
	var fields []*FieldChange
	if !sameStream(ls.Config, want) {
		fields = diffMaps("", canonStream(ls.Config), canonStream(want))
	}
	if want.Mirror != nil && ls.Config.MirrorDirect != want.MirrorDirect && streamDeclared(ds).set("mirror_direct", false) {
		// Compared only where the file sets it; else the server decides it (NP305).
		fields = append(fields, &FieldChange{Path: "mirror_direct", Before: ls.Config.MirrorDirect, After: want.MirrorDirect})
		sort.Slice(fields, func(i, j int) bool { return fields[i].Path < fields[j].Path })
	}
	if len(fields) == 0 {
		return
	}
	decl := ds.Decl.String()
	var refusedFields []string
	for _, f := range fields {
		f.Rule = streamFieldRule(f)
		if refused(f) {
			f.Blocked = true
			refusedFields = append(refusedFields, f.Path)
			c.finding(finding.CodeRefused, finding.SevError, addr, fieldPos(ds.Decl, topKey(f.Path)), streamRefusal(f))
		}
	}
	action, reason := ActUpdate, ""
	if ls.Owner() == "" {
		action = ActAdopt
		reason = fmt.Sprintf("exists on the server without a natsplan mark: adopting writes %s = %q", model.MetaProject, c.desired.Project)
	}
	before := liveConfig(ls.Config)
	if len(refusedFields) > 0 {
		// Still a change: the plan shows every difference, and apply refuses it.
		c.add(&Change{Address: addr, Kind: kindOf(ds), Name: ds.Name, Action: action, Reason: reason,
			Decl: decl, Fields: fields, Before: rawJSON(before), After: rawJSON(want), LiveHash: Hash(ls.Config),
			Blocked: blockedReason(refusedFields)})
		return
	}
	for _, ch := range splitStream(before, want, fields) {
		ch.Address, ch.Kind, ch.Name, ch.Action, ch.Reason, ch.Decl = addr, kindOf(ds), ds.Name, action, reason, decl
		if ch.LiveHash == "" {
			ch.LiveHash = Hash(ls.Config)
		}
		c.add(ch)
	}
}

// liveConfig strips server-owned metadata from a live stream config.
func liveConfig(cfg server.StreamConfig) server.StreamConfig {
	cfg = cloneStream(cfg)
	cfg.Metadata = userMetadata(cfg.Metadata)
	return cfg
}

func kindOf(s *model.Stream) model.Kind {
	if s.Kind == "" {
		return model.KindStream
	}
	return s.Kind
}

// consumer plans one declared consumer.
func (c *computer) consumer(dc *model.Consumer) {
	k := dc.Key()
	want := c.wantC[k]
	addr := dc.Address()
	lc := c.live.Consumers[k]
	if c.isOffline("stream."+dc.Stream, addr, dc.Decl) || c.isOffline(addr, addr, dc.Decl) {
		return
	}
	// Decl is rendered only for a change, as in stream.
	base := Change{Address: addr, Kind: model.KindConsumer, Name: dc.Name, Stream: dc.Stream, Group: dc.Group}
	if lc == nil {
		ch := base
		ch.Decl = dc.Decl.String()
		ch.Action, ch.After = ActCreate, rawJSON(want)
		c.sent[&ch] = &want
		c.add(&ch)
		return
	}
	if c.foreign(lc.Owner(), addr, dc.Decl) {
		return
	}
	c.badMetadata(addr, dc.Decl, lc.Config.Metadata, metaRefusal)
	want = keepUnreadableDefaults(dc.Config, want, lc.Config, c.inv.target)
	replicas := 1
	if st := c.streamConfig(dc.Stream); st != nil && st.Replicas > 0 {
		replicas = st.Replicas
	}
	var fields []*FieldChange
	if !sameConsumer(lc.Config, want, replicas) {
		fields = diffMaps("", canonConsumer(lc.Config, replicas), canonConsumer(want, replicas))
	}
	if want.PauseUntil != nil && (lc.Config.PauseUntil == nil || !lc.Config.PauseUntil.Equal(*want.PauseUntil)) {
		var before any
		if lc.Config.PauseUntil != nil {
			before = lc.Config.PauseUntil.UTC()
		}
		fields = append(fields, &FieldChange{Path: "pause_until", Before: before, After: want.PauseUntil.UTC(), Via: "pause"})
		sort.Slice(fields, func(i, j int) bool { return fields[i].Path < fields[j].Path })
	}
	if len(fields) == 0 {
		return
	}
	var refusedFields []string
	for _, f := range fields {
		f.Rule = consumerFieldRule(f)
		if refused(f) {
			refusedFields = append(refusedFields, f.Path)
		}
	}
	ch := base
	ch.Decl = dc.Decl.String()
	ch.Fields, ch.After, ch.LiveHash = fields, rawJSON(want), Hash(lc.Config)
	ch.Before = rawJSON(liveConsumerConfig(lc.Config))
	switch {
	case len(refusedFields) > 0 && dc.Lifecycle.ReplaceOnChange:
		ch.Action, ch.Destructive = ActReplace, true
		ch.Reason = fmt.Sprintf("%s can not change on an existing consumer; lifecycle.replace_on_change deletes and "+
			"re-creates it: its ack state and position are lost", strings.Join(refusedFields, ", "))
	case lc.Owner() == "":
		ch.Action = ActAdopt
		ch.Reason = fmt.Sprintf("exists on the server without a natsplan mark: adopting writes %s = %q", model.MetaProject, c.desired.Project)
	default:
		ch.Action = ActUpdate
	}
	if len(refusedFields) > 0 && ch.Action != ActReplace {
		// Still a change: the plan shows every difference, and apply refuses it.
		for _, f := range fields {
			f.Blocked = refused(f)
		}
		for _, path := range refusedFields {
			c.finding(finding.CodeRefused, finding.SevError, addr, fieldPos(dc.Decl, topKey(path)),
				fmt.Sprintf("%s can not change on an existing consumer: %s", path, consumerRecipe))
		}
		ch.Blocked = blockedReason(refusedFields)
		c.add(&ch)
		return
	}
	c.add(&ch)
}

// blockedReason is a blocked change's Blocked: which fields the server refuses to change.
func blockedReason(paths []string) string {
	return fmt.Sprintf("the server refuses to change %s (NP303): apply refuses this plan until the configuration "+
		"or the server is changed", strings.Join(paths, ", "))
}

// liveConsumerConfig strips server-owned metadata from a live consumer config.
func liveConsumerConfig(cfg server.ConsumerConfig) server.ConsumerConfig {
	cfg = cloneConsumer(cfg)
	cfg.Metadata = userMetadata(cfg.Metadata)
	return cfg
}

// add appends a change.
func (c *computer) add(ch *Change) { c.p.Changes = append(c.p.Changes, ch) }

// summarise counts the changes; a split change counts once.
func (c *computer) summarise() { c.p.Summary = summarise(c.p.Changes) }

// summarise counts changes by action; a split change counts once.
func summarise(chs []*Change) Summary {
	var s Summary
	seen := map[string]bool{}
	for _, ch := range chs {
		key := string(ch.Action) + " " + ch.Address
		if seen[key] {
			continue
		}
		seen[key] = true
		if ch.Blocked != "" {
			s.Blocked++
			continue
		}
		switch ch.Action {
		case ActCreate:
			s.Create++
		case ActUpdate:
			s.Update++
		case ActDelete:
			s.Delete++
		case ActReplace:
			s.Replace++
		case ActAdopt:
			s.Adopt++
		}
	}
	return s
}

// fieldPos renders where the attribute at path (or else the block) was declared, as
// file:line:col; "" when unknown.
func fieldPos(d *model.Decl, path string) string {
	if d == nil {
		return ""
	}
	return rangeString(d.FieldRange(path))
}
