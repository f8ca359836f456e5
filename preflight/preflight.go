// Package preflight proves, before anything is sent to the target, that the server will
// accept every create and update of a plan. The server's validation (checkStreamCfgLocked,
// configUpdateCheckLocked, setConsumerConfigDefaults, checkConsumerCfg) is unexported, so
// the only way to apply the same rules rather than a re-typed copy of some of them is to
// ask a server: preflight starts a private in-process nats-server (no listener, no logs,
// a temporary store), recreates in it the live objects the plan touches, and sends it
// each planned change as apply would: the same request, step by step, each after what
// it depends on. Every refusal becomes an NP304 finding at the attribute that caused it.
//
// What the private server can not know is the target's: its account limits and its
// cluster size. Those are plan's static NP403 checks; here replicas are sent as 1, and
// storage as memory (see shadowStream). The target's server-wide JetStream limits
// (max_request_batch, max_ack_pending, the duplicate window), which no account can
// read either, are the ones the files declare in natsplan { server_limits {} }: the
// private server runs with exactly those, so it refuses what the target would.
package preflight

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// Result is what a check found and what it cost.
type Result struct {
	// Findings are the NP304 errors, one per refused change, after the NP304 warnings
	// of Contradictions.
	Findings []*finding.Finding
	// Checked counts the changes sent to the private server.
	Checked int
	// Unchecked names changes that could not be checked, with why.
	Unchecked []string
	// Startup is how long the private servers took to start (one, or one per part of
	// a large plan); zero when the plan had nothing to check and none was started.
	Startup time.Duration
}

// needed reports whether p has a create or an update to check (blocked ones are not
// sent). A plan without one must not pay for a server.
func needed(p *plan.Plan) bool { return slices.ContainsFunc(p.Changes, sendable) }

// sendable reports whether a change is one the check sends: a create or an update that
// apply would send.
func sendable(ch *plan.Change) bool { return ch.Action != plan.ActDelete && ch.Blocked == "" }

// knownRefusals returns the addresses whose changes already carry an error finding that
// says what the server itself would answer: a field change it refuses (NP303), a value it
// refuses to rewrite (NP305), subjects that overlap another stream (NP402). Those are not
// sent again, so that one refusal is reported once. Other errors (the account's limits,
// the cluster's size, natsplan's own invariants, data loss) say nothing of what the
// server thinks of the config itself, so those changes are still checked: a review sees
// every refusal in one plan, not one more after each fix.
func knownRefusals(p *plan.Plan) map[string]bool {
	out := map[string]bool{}
	for _, f := range p.Findings {
		if f.Severity != finding.SevError {
			continue
		}
		switch f.Code {
		case finding.CodeRefused, finding.CodeRewrite, finding.CodeOverlap:
			out[f.Address] = true
		}
	}
	return out
}

// Parallelism bounds how many changes of one step are sent to the private server at
// once. Changes in one step are independent except for the dependencies the plan lists,
// which are waited for, as apply does.
const Parallelism = 16

// Check sends every create and update of p to a private server, in plan order, and
// reports the refusals. desired gives the source ranges; live the configs to recreate.
// Changes whose error findings already say what the server would answer are not sent.
// A large plan is checked in parts, each in a private server of its own (chunks). Every
// private server is stopped and its store removed before Check returns.
func Check(ctx context.Context, p *plan.Plan, desired, live *model.Model) (*Result, error) {
	res := &Result{Findings: Contradictions(desired, live)}
	if !needed(p) {
		return res, nil
	}
	errored, at := knownRefusals(p), map[*finding.Finding]int{}
	for _, part := range chunks(p, live) {
		if err := checkPart(ctx, p, part, desired, live, res, errored, at); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(res.Findings, func(a, b *finding.Finding) int { return at[a] - at[b] })
	slices.Sort(res.Unchecked)
	return res, nil
}

// checkPart checks the changes of p at the indices part in a private server of its own,
// adding to res and at.
func checkPart(ctx context.Context, p *plan.Plan, part []int, desired, live *model.Model, res *Result, errored map[string]bool, at map[*finding.Finding]int) error {
	if !slices.ContainsFunc(part, func(i int) bool { return sendable(p.Changes[i]) }) {
		return nil
	}
	start := time.Now()
	sh, err := startShadow(ctx, desired.ServerLimits.Options())
	if err != nil {
		return err
	}
	defer sh.stop()
	res.Startup += time.Since(start)
	r := &run{ctx: ctx, sh: sh, desired: desired, live: live, res: res,
		present: map[string]bool{}, replicas: map[string]int{}, retention: map[string]server.RetentionPolicy{},
		errored: errored, at: at}
	if err := r.restoreLive(p, part); err != nil {
		return err
	}
	return r.runSteps(p, part)
}

// run is one Check. Changes run concurrently; mu guards everything below it.
type run struct {
	ctx           context.Context
	sh            *shadow
	desired, live *model.Model
	errored       map[string]bool // addresses whose refusal is already a finding (knownRefusals)

	mu  sync.Mutex
	res *Result
	at  map[*finding.Finding]int // the plan index of each finding's change, for the order
	// present are the streams that exist in the shadow; replicas and retention are each
	// stream's real values (the shadow holds every stream with one replica).
	present   map[string]bool
	replicas  map[string]int
	retention map[string]server.RetentionPolicy
}

// stream reports whether a stream exists in the shadow, with its real replicas and
// retention.
func (r *run) stream(name string) (bool, int, server.RetentionPolicy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.present[name], r.replicas[name], r.retention[name]
}

// setStream records a stream the shadow now holds; present false records it gone.
func (r *run) setStream(name string, present bool, replicas int, retention server.RetentionPolicy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !present {
		delete(r.present, name)
		return
	}
	r.present[name], r.replicas[name], r.retention[name] = true, replicas, retention
}

func (r *run) checked() {
	r.mu.Lock()
	r.res.Checked++
	r.mu.Unlock()
}

func (r *run) unchecked(ch *plan.Change, why string) {
	r.mu.Lock()
	r.res.Unchecked = append(r.res.Unchecked, ch.Address+": "+why)
	r.mu.Unlock()
}

func (r *run) found(i int, f *finding.Finding) {
	r.mu.Lock()
	r.res.Findings = append(r.res.Findings, f)
	r.at[f] = i
	r.mu.Unlock()
}

// runSteps sends the changes of p at the indices part step by step; within a step up
// to Parallelism at once, each after the changes of its step it depends on.
func (r *run) runSteps(p *plan.Plan, part []int) error {
	var steps []int
	byStep := map[int][]int{}
	for _, i := range part {
		ch := p.Changes[i]
		if _, ok := byStep[ch.Step]; !ok {
			steps = append(steps, ch.Step)
		}
		byStep[ch.Step] = append(byStep[ch.Step], i)
	}
	slices.Sort(steps)
	for _, s := range steps {
		if err := r.runStep(p, byStep[s]); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) runStep(p *plan.Plan, step []int) error {
	done := make(map[string][]chan struct{}, len(step))
	for _, i := range step {
		done[p.Changes[i].Address] = append(done[p.Changes[i].Address], make(chan struct{}))
	}
	seen := map[string]int{}
	sem := make(chan struct{}, Parallelism)
	errs := make(chan error, len(step))
	var wg sync.WaitGroup
	for _, i := range step {
		ch := p.Changes[i]
		// An earlier part of the same object in this step comes first.
		var wait []chan struct{}
		for _, dep := range ch.DependsOn {
			wait = append(wait, done[dep]...)
		}
		n := seen[ch.Address]
		wait = append(wait, done[ch.Address][:n]...)
		mine := done[ch.Address][n]
		seen[ch.Address] = n + 1
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(mine)
			for _, w := range wait {
				select {
				case <-w:
				case <-r.ctx.Done():
					errs <- r.ctx.Err()
					return
				}
			}
			select {
			case sem <- struct{}{}:
			case <-r.ctx.Done():
				errs <- r.ctx.Err()
				return
			}
			defer func() { <-sem }()
			if err := r.ctx.Err(); err != nil {
				errs <- err
				return
			}
			if err := r.change(i, ch); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
