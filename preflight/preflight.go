// Package preflight proves, before anything is sent to the target, that the server will
// accept every create and update of a plan. The server's validation (checkStreamCfgLocked,
// configUpdateCheckLocked, setConsumerConfigDefaults, checkConsumerCfg) is unexported, so
// the only way to apply the same rules rather than a re-typed copy of some of them is to
// ask a server: preflight starts a private in-process nats-server (no listener, no logs,
// a temporary store), recreates in it the live objects the plan touches, and sends it
// each planned change exactly as apply would, in plan order. Every refusal becomes an
// NP304 finding at the attribute that caused it.
//
// What the private server can not know is the target's: its account limits and its
// cluster size. Those are plan's static NP403 checks; here replicas are sent as 1, and
// storage as memory (see shadowStream).
package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// CodeRefused is the finding for a change the server's own validation refuses.
const CodeRefused = "NP304"

// Result is what a check found and what it cost.
type Result struct {
	// Findings are the NP304 errors, one per refused change.
	Findings []*plan.Finding
	// Checked counts the changes sent to the private server.
	Checked int
	// Unchecked names changes that could not be checked, with why.
	Unchecked []string
	// Startup is how long the private server took to start; zero when the plan had
	// nothing to check and none was started.
	Startup time.Duration
}

// Needed reports whether p has a create or an update to check. A plan without one
// must not pay for a server.
func Needed(p *plan.Plan) bool {
	for _, ch := range p.Changes {
		if ch.Action != plan.ActDelete {
			return true
		}
	}
	return false
}

// Check sends every create and update of p to a private server, in plan order, and
// reports the refusals. desired gives the source ranges; live the configs to recreate.
// Changes that already carry an error finding are not sent. The private server is
// stopped and its store removed before Check returns.
func Check(ctx context.Context, p *plan.Plan, desired, live *model.Model) (*Result, error) {
	res := &Result{}
	if !Needed(p) {
		return res, nil
	}
	start := time.Now()
	sh, err := startShadow(ctx)
	if err != nil {
		return nil, err
	}
	defer sh.stop()
	res.Startup = time.Since(start)
	r := &run{ctx: ctx, sh: sh, desired: desired, live: live, res: res,
		present: map[string]bool{}, replicas: map[string]int{}, retention: map[string]server.RetentionPolicy{},
		errored: map[string]bool{}}
	for _, f := range p.Findings {
		if f.Severity == plan.SevError {
			r.errored[f.Address] = true
		}
	}
	for _, ch := range p.Changes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := r.change(ch); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// run is one Check.
type run struct {
	ctx           context.Context
	sh            *shadow
	desired, live *model.Model
	res           *Result
	// present are the streams that exist in the shadow; replicas and retention are each
	// stream's real values (the shadow holds every stream with one replica).
	present   map[string]bool
	replicas  map[string]int
	retention map[string]server.RetentionPolicy
	errored   map[string]bool
}

func (r *run) change(ch *plan.Change) error {
	if ch.Kind == "consumer" {
		return r.consumer(ch)
	}
	return r.stream(ch)
}

func (r *run) stream(ch *plan.Change) error {
	if ch.Action == plan.ActDelete {
		if r.present[ch.Name] {
			delete(r.present, ch.Name)
			return r.quiet(r.sh.js.DeleteStream(r.ctx, ch.Name))
		}
		return nil
	}
	if r.errored[ch.Address] {
		return nil
	}
	var cfg server.StreamConfig
	if err := json.Unmarshal(ch.After, &cfg); err != nil {
		r.unchecked(ch, "its planned config does not decode: "+err.Error())
		return nil
	}
	for _, origin := range origins(&cfg) {
		if err := r.restoreStream(origin, map[string]bool{ch.Name: true}); err != nil {
			return err
		}
	}
	if ch.Action != plan.ActCreate {
		if err := r.restoreStream(ch.Name, map[string]bool{}); err != nil {
			return err
		}
		if !r.present[ch.Name] {
			r.unchecked(ch, "its live config could not be recreated for the check")
			return nil
		}
	}
	body, err := withFields(ch.After, shadowStream(&cfg))
	if err != nil {
		r.unchecked(ch, err.Error())
		return nil
	}
	r.res.Checked++
	if ch.Action == plan.ActCreate {
		_, err = r.sh.js.CreateStream(r.ctx, ch.Name, body)
	} else {
		_, err = r.sh.js.UpdateStream(r.ctx, ch.Name, body)
	}
	if err != nil {
		if ferr := r.refused(ch, false, err); ferr != nil {
			return ferr
		}
		if ch.Action != plan.ActCreate {
			return nil // the shadow keeps the live stream, which the consumers are checked against
		}
		// So that its consumers are still checked, the refused stream is created as a
		// lenient server would take it; where even that fails, they are not checked.
		if err := r.sh.js.Request(r.ctx, "create stream "+ch.Name, "STREAM.CREATE."+ch.Name, body, nil); err != nil {
			return r.quiet(err)
		}
	}
	r.present[ch.Name], r.replicas[ch.Name], r.retention[ch.Name] = true, cfg.Replicas, cfg.Retention
	return nil
}

func (r *run) consumer(ch *plan.Change) error {
	if ch.Action == plan.ActDelete {
		if r.present[ch.Stream] {
			return r.quiet(r.sh.js.DeleteConsumer(r.ctx, ch.Stream, ch.Name))
		}
		return nil
	}
	if r.errored[ch.Address] {
		return nil
	}
	if err := r.restoreStream(ch.Stream, map[string]bool{}); err != nil {
		return err
	}
	if !r.present[ch.Stream] {
		r.unchecked(ch, "its stream "+ch.Stream+" could not be created for the check")
		return nil
	}
	var cfg server.ConsumerConfig
	if err := json.Unmarshal(ch.After, &cfg); err != nil {
		r.unchecked(ch, "its planned config does not decode: "+err.Error())
		return nil
	}
	// The shadow is one server holding the stream with one replica, so a consumer's
	// replica count is judged here against the stream's real one, by the server's rules,
	// and sent as "inherit".
	body := ch.After
	if sr := max(1, r.replicas[ch.Stream]); cfg.Replicas != 0 && (sr > 1 || cfg.Replicas > 1) {
		if apiErr := consumerReplicas(cfg.Replicas, sr, r.retention[ch.Stream]); apiErr != nil {
			return r.refused(ch, true, &jsapi.Error{Op: string(ch.Action) + " consumer", Code: apiErr.Code,
				ErrCode: apiErr.ErrCode, Description: apiErr.Description})
		}
		var err error
		if body, err = withFields(ch.After, map[string]string{"num_replicas": "0"}); err != nil {
			r.unchecked(ch, err.Error())
			return nil
		}
	}
	action := jsapi.ConsumerCreate
	switch ch.Action {
	case plan.ActUpdate, plan.ActAdopt:
		action = jsapi.ConsumerUpdate
	case plan.ActReplace:
		if err := r.quiet(r.sh.js.DeleteConsumer(r.ctx, ch.Stream, ch.Name)); err != nil {
			return err
		}
	}
	r.res.Checked++
	if _, err := r.sh.js.WriteConsumer(r.ctx, ch.Stream, ch.Name, body, action); err != nil {
		return r.refused(ch, true, err)
	}
	return nil
}

// consumerReplicas applies checkConsumerCfg's replica rules against the stream's real
// replica count.
func consumerReplicas(n, stream int, retention server.RetentionPolicy) *server.ApiError {
	switch {
	case n < 0:
		return server.NewJSReplicasCountCannotBeNegativeError()
	case n > stream:
		return server.NewJSConsumerReplicasExceedsStreamError()
	case (retention == server.InterestPolicy || retention == server.WorkQueuePolicy) && n != stream:
		return server.NewJSConsumerReplicasShouldMatchStreamError()
	}
	return nil
}

// restoreStream recreates in the shadow a live stream that is not there yet, with the
// streams it reads from (the server looks mirror and source origins up) and its
// consumers (a stream update is checked against them). Recreating what the server
// already accepted can only fail on configs an older server accepted; such a stream
// stays absent and the changes that need it are reported unchecked.
func (r *run) restoreStream(name string, visiting map[string]bool) error {
	ls := r.live.Streams[name]
	if r.present[name] || ls == nil || visiting[name] {
		return nil
	}
	visiting[name] = true
	cfg := ls.Config
	for _, origin := range origins(&cfg) {
		if err := r.restoreStream(origin, visiting); err != nil {
			return err
		}
	}
	real := cfg.Replicas
	cfg.Replicas = shadowReplicas(cfg.Replicas)
	if cfg.PersistMode != server.AsyncPersistMode {
		cfg.Storage = server.MemoryStorage
	}
	sealed := cfg.Sealed
	cfg.Sealed = false // the server refuses to create a sealed stream
	if err := r.sh.js.Request(r.ctx, "recreate stream "+name, "STREAM.CREATE."+name, cfg, nil); err != nil {
		return r.quiet(err)
	}
	if sealed {
		cfg.Sealed = true
		if err := r.quiet(r.sh.js.Request(r.ctx, "recreate stream "+name, "STREAM.UPDATE."+name, cfg, nil)); err != nil {
			return err
		}
	}
	r.present[name], r.replicas[name], r.retention[name] = true, real, cfg.Retention
	for _, lc := range r.live.ConsumersOf(name) {
		if lc.IsSystem() || lc.Config.Durable == "" {
			continue // ephemerals come and go; plan counts them against max_consumers (NP403)
		}
		cc := lc.Config
		cc.Replicas = 0
		req := struct {
			Stream string                `json:"stream_name"`
			Config server.ConsumerConfig `json:"config"`
		}{name, cc}
		if err := r.quiet(r.sh.js.Request(r.ctx, "recreate consumer", "CONSUMER.CREATE."+name+"."+lc.Name, req, nil)); err != nil {
			return err
		}
	}
	return nil
}

// quiet drops the server's refusals (recreating live state is best effort) and keeps
// what stops the check: a cancelled context or a broken shadow.
func (r *run) quiet(err error) error {
	var apiErr *jsapi.Error
	if err == nil || errors.As(err, &apiErr) {
		return nil
	}
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("preflight: %w", err)
}

// refused turns the server's answer to a planned change into a finding; an answer that
// is not a refusal stops the check.
func (r *run) refused(ch *plan.Change, consumer bool, err error) error {
	var apiErr *jsapi.Error
	if !errors.As(err, &apiErr) {
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("preflight %s: %w", ch.Address, err)
	}
	decl := r.decl(ch)
	paths := changedFirst(refusedFields(consumer, apiErr.ErrCode, apiErr.Description), ch)
	what := "create"
	if ch.Action != plan.ActCreate {
		what = "update"
	}
	r.res.Findings = append(r.res.Findings, &plan.Finding{
		Code: CodeRefused, Severity: plan.SevError, Address: ch.Address, Range: rangeOf(decl, paths),
		Message: fmt.Sprintf("the server refuses this configuration: %s (JetStream error %d on the planned %s)%s",
			apiErr.Description, apiErr.ErrCode, what, hint(paths)),
	})
	return nil
}

// changedFirst orders the attributes a refusal names so that those an update changes
// come first: of "max_age" and "duplicate_window", the one the update lowered is the
// one to point at.
func changedFirst(paths []string, ch *plan.Change) []string {
	if len(ch.Fields) == 0 || len(paths) < 2 {
		return paths
	}
	changed := func(p string) bool {
		top, _, _ := strings.Cut(listIndex.ReplaceAllString(p, ""), ".")
		for _, f := range ch.Fields {
			if ftop, _, _ := strings.Cut(f.Path, "."); ftop == top {
				return true
			}
		}
		return false
	}
	out := slices.Clone(paths)
	slices.SortStableFunc(out, func(a, b string) int {
		switch ca, cb := changed(a), changed(b); {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return 0
	})
	return out
}

// hint names the attributes to change as the language spells them ("source.filter_subject"),
// at most two, leaving out a block whose attribute is already named.
func hint(paths []string) string {
	var names []string
	for _, p := range paths {
		n := strings.NewReplacer("sources[]", "source", "sources", "source", "subject_transforms[]", "subject_transform", "subject_transforms", "subject_transform", "[]", "").Replace(p)
		if !slices.ContainsFunc(names, func(have string) bool { return have == n || strings.HasPrefix(have, n+".") }) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; change " + strings.Join(names[:min(2, len(names))], " or ")
}

func (r *run) unchecked(ch *plan.Change, why string) {
	r.res.Unchecked = append(r.res.Unchecked, ch.Address+": "+why)
}

// decl is the declaration of the object a change touches, or nil.
func (r *run) decl(ch *plan.Change) *model.Decl {
	if ch.Kind == "consumer" {
		if dc := r.desired.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}]; dc != nil {
			return dc.Decl
		}
		return nil
	}
	if ds := r.desired.Streams[ch.Name]; ds != nil {
		return ds.Decl
	}
	return nil
}

// rangeOf renders the position of the first of paths the declaration sets, else the
// block's. A path matches an attribute or a block of that name and whatever is inside
// it; "[]" matches any element of a list ("sources[].filter_subject"). Of several
// matches the first in the file wins.
func rangeOf(d *model.Decl, paths []string) string {
	if d == nil {
		return ""
	}
	for _, p := range paths {
		var hits []hcl.Range
		for k, rg := range d.Fields {
			k = listIndex.ReplaceAllString(k, "[]")
			if k == p || strings.HasPrefix(k, p+".") || strings.HasPrefix(k, p+"[") {
				hits = append(hits, rg)
			}
		}
		if len(hits) > 0 {
			slices.SortFunc(hits, func(a, b hcl.Range) int { return a.Start.Byte - b.Start.Byte })
			return pos(hits[0])
		}
	}
	return pos(d.Range)
}

// listIndex is a list index in a field path ("sources[2]").
var listIndex = regexp.MustCompile(`\[\d+\]`)

func pos(rg hcl.Range) string {
	if rg.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", rg.Filename, rg.Start.Line, rg.Start.Column)
}

// origins are the streams of the same account a stream mirrors or sources.
func origins(cfg *server.StreamConfig) []string {
	var out []string
	if m := cfg.Mirror; m != nil && m.External == nil && m.Name != "" {
		out = append(out, m.Name)
	}
	for _, s := range cfg.Sources {
		if s != nil && s.External == nil && s.Name != "" {
			out = append(out, s.Name)
		}
	}
	return out
}

// shadowReplicas is the replica count sent to the single-server shadow: counts a cluster
// could hold become 1 (the target's cluster size is plan's NP403); the others are sent
// as they are, for the server to refuse.
func shadowReplicas(n int) int {
	if n > 1 && n <= server.StreamMaxReplicas {
		return 1
	}
	return n
}

// shadowStream is what the shadow gets different from what apply sends: replicas a
// single server holds, and memory storage. A file stream costs the shadow ~18ms to
// create and a memory one under 1ms (BenchmarkCheck), and the server's config checks
// do not depend on the storage type except that async persist needs file storage, so
// such streams keep it. Changing storage or persist_mode is refused by plan (NP303)
// before this check.
func shadowStream(cfg *server.StreamConfig) map[string]string {
	out := map[string]string{"num_replicas": fmt.Sprint(shadowReplicas(cfg.Replicas))}
	if cfg.PersistMode != server.AsyncPersistMode {
		out["storage"] = `"memory"`
	}
	return out
}

// withFields returns the config JSON with the given top-level fields set to the given
// JSON values, every other field's meaning unchanged.
func withFields(raw json.RawMessage, fields map[string]string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("its planned config does not decode: %w", err)
	}
	for k, v := range fields {
		m[k] = json.RawMessage(v)
	}
	return json.Marshal(m)
}
