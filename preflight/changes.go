package preflight

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// change sends change i of the plan to the shadow.
func (r *run) change(i int, ch *plan.Change) error {
	if ch.Blocked != "" {
		return nil // apply will not send it; its NP303 says why
	}
	if ch.Kind == model.KindConsumer {
		return r.consumer(i, ch)
	}
	return r.streamChange(i, ch)
}

func (r *run) streamChange(i int, ch *plan.Change) error {
	present, _, _ := r.stream(ch.Name)
	if ch.Action == plan.ActDelete {
		if present {
			r.setStream(ch.Name, false, 0, 0)
			return r.quiet(r.sh.js.DeleteStream(r.ctx, ch.Name))
		}
		return nil
	}
	var cfg server.StreamConfig
	if err := json.Unmarshal(ch.After, &cfg); err != nil {
		r.unchecked(ch, "its planned config does not decode: "+err.Error())
		return nil
	}
	if r.errored[ch.Address] {
		// Refused already: not reported again, but a new stream still stands in for
		// its consumers, which are checked against it.
		if ch.Action == plan.ActCreate {
			body, err := withFields(ch.After, shadowStream(&cfg))
			if err != nil {
				return nil
			}
			if ok, err := r.standIn(ch.Name, body); err != nil || !ok {
				return err
			}
			r.setStream(ch.Name, true, cfg.Replicas, cfg.Retention)
		}
		return nil
	}
	if ch.Action != plan.ActCreate && !present {
		r.unchecked(ch, "its live config could not be recreated for the check")
		return nil
	}
	body, err := withFields(ch.After, shadowStream(&cfg))
	if err != nil {
		r.unchecked(ch, err.Error())
		return nil
	}
	r.checked()
	if ch.Action == plan.ActCreate {
		_, err = r.sh.js.CreateStream(r.ctx, ch.Name, body)
	} else {
		_, err = r.sh.js.UpdateStream(r.ctx, ch.Name, body)
	}
	if err != nil {
		if ferr := r.refused(i, ch, false, err); ferr != nil {
			return ferr
		}
		if ch.Action != plan.ActCreate {
			return nil // the shadow keeps the live stream, which the consumers are checked against
		}
		if ok, err := r.standIn(ch.Name, body); err != nil || !ok {
			return err
		}
	}
	r.setStream(ch.Name, true, cfg.Replicas, cfg.Retention)
	return nil
}

// standInTries bounds how many refused attributes standIn leaves out.
const standInTries = 4

// standIn creates a refused stream in the shadow anyway, so that its consumers are still
// checked: as a lenient server takes it, else without the attributes the server names
// (back at their defaults). It reports whether the stream now exists.
func (r *run) standIn(name string, body json.RawMessage) (bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return false, nil
	}
	for range standInTries {
		req, err := json.Marshal(m)
		if err != nil {
			return false, nil
		}
		err = r.sh.js.Request(r.ctx, "create stream "+name, "STREAM.CREATE."+name, json.RawMessage(req), nil)
		var apiErr *jsapi.Error
		if !errors.As(err, &apiErr) {
			return err == nil, r.quiet(err)
		}
		dropped := false
		for _, path := range refusedFields(false, apiErr.ErrCode, apiErr.Description) {
			top, _, _ := strings.Cut(listIndex.ReplaceAllString(path, ""), ".")
			if _, ok := m[top]; ok && top != "name" {
				delete(m, top)
				dropped = true
			}
		}
		if !dropped {
			return false, nil
		}
	}
	return false, nil
}

func (r *run) consumer(i int, ch *plan.Change) error {
	present, streamReplicas, retention := r.stream(ch.Stream)
	if ch.Action == plan.ActDelete {
		if present {
			return r.quiet(r.sh.js.DeleteConsumer(r.ctx, ch.Stream, ch.Name))
		}
		return nil
	}
	if r.errored[ch.Address] {
		return nil
	}
	if !present {
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
	if sr := max(1, streamReplicas); cfg.Replicas != 0 && (sr > 1 || cfg.Replicas > 1) {
		if apiErr := consumerReplicas(cfg.Replicas, sr, retention); apiErr != nil {
			return r.refused(i, ch, true, &jsapi.Error{Op: string(ch.Action) + " consumer", Code: apiErr.Code,
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
	r.checked()
	if _, err := r.sh.js.WriteConsumer(r.ctx, ch.Stream, ch.Name, body, action); err != nil {
		return r.refused(i, ch, true, err)
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

// restoreLive recreates in the shadow, before any change is sent, the live streams the
// plan's creates and updates depend on: the streams it updates, the streams of the
// consumers it writes, and the streams any of those mirror or source (the server looks
// origins up: message size, direct get, cycles), with their durable consumers (a stream
// update is checked against them). This is what the target holds when apply starts.
// They are recreated as live configs the server already accepted, without pedantic
// mode, so the order among them does not matter.
func (r *run) restoreLive(p *plan.Plan, part []int) error {
	need := map[string]bool{}
	var want func(name string)
	want = func(name string) {
		ls := r.live.Streams[name]
		if ls == nil || need[name] {
			return
		}
		need[name] = true
		for _, o := range origins(&ls.Config) {
			want(o)
		}
	}
	for _, i := range part {
		ch := p.Changes[i]
		if ch.Action == plan.ActDelete || r.errored[ch.Address] || ch.Blocked != "" {
			continue
		}
		if ch.Kind == model.KindConsumer {
			want(ch.Stream)
			continue
		}
		want(ch.Name)
		var cfg server.StreamConfig
		if json.Unmarshal(ch.After, &cfg) == nil {
			for _, o := range origins(&cfg) {
				want(o)
			}
		}
	}
	sem := make(chan struct{}, Parallelism)
	errs := make(chan error, len(need))
	var wg sync.WaitGroup
	for name := range need {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := r.restoreStream(name); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// restoreStream recreates one live stream and its durable consumers. Recreating what
// the server already accepted can only fail on configs an older server accepted; such
// a stream stays absent and the changes that need it are reported unchecked.
func (r *run) restoreStream(name string) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	cfg := r.live.Streams[name].Config
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
	r.setStream(name, true, real, cfg.Retention)
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

// refused turns the server's answer to change i into a finding; an answer that is not
// a refusal stops the check.
func (r *run) refused(i int, ch *plan.Change, consumer bool, err error) error {
	var apiErr *jsapi.Error
	if !errors.As(err, &apiErr) {
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("preflight %s: %w", ch.Address, err)
	}
	paths := changedFirst(refusedFields(consumer, apiErr.ErrCode, apiErr.Description), ch)
	what := "create"
	if ch.Action != plan.ActCreate {
		what = "update"
	}
	advice := hint(paths)
	if note, field := limitNote(r.desired.ServerLimits, consumer, apiErr); note != "" {
		paths, advice = []string{field}, ": "+note
	}
	r.found(i, &finding.Finding{
		Code: finding.CodeServerRefuses, Severity: finding.SevError, Address: ch.Address, Range: rangeOf(plan.DeclOf(r.desired, ch), paths),
		Message: fmt.Sprintf("the server refuses this configuration: %s (JetStream error %d on the planned %s)%s",
			apiErr.Description, apiErr.ErrCode, what, advice),
	})
	return nil
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
