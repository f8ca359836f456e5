package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/natsplan/natsplan/apply"
	"github.com/natsplan/natsplan/internal/connect"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/plan/render"
	"github.com/natsplan/natsplan/schema"
)

// envApply is one environment of an apply across environments: its run (its own
// Factory: connection, lock, fence, "[NAME] " on stderr), how to prepare it, and what
// became of it.
type envApply struct {
	run *envRun
	// prepare plans (or reads and proves a saved part) under the environment's lock.
	prepare func(ctx context.Context) (*preparedApply, error)
	// target is the server a saved part was planned against, for the heading of an
	// environment refused before it read its own.
	target plan.Target

	a *preparedApply
	// refused is why the environment is not applied: prepare's error or the plan's
	// refusal. The section shows it in full, the report its first line.
	refused error
	// held is set when --fail-fast or an interruption kept the environment from running.
	held string
	// res and runErr are what execute returned.
	res    *apply.Result
	runErr error
	// stoppedBy names the environment whose failure stopped this one's run with
	// changes not started (--fail-fast).
	stoppedBy string
}

// Name is the environment's name.
func (e *envApply) Name() string { return e.run.Name() }

// executable reports whether the environment is to be executed: prepared, not
// refused, with something to do.
func (e *envApply) executable() bool {
	return e.refused == nil && e.held == "" && e.a != nil && e.a.Plan.HasChanges()
}

// eachEnvApply runs fn for every environment, envParallelism at a time, and waits.
// Unlike forEachEnv it leaves the factories open: an environment's lock and
// connection live from prepare to execute.
func eachEnvApply(envs []*envApply, fn func(*envApply)) {
	inParallel(len(envs), func(i int) { fn(envs[i]) })
}

// applyAcross applies every environment of envs: all prepared in parallel (each
// plan computed or proven under its own lock), all plans shown, one confirmation, then
// every environment executed in parallel on its own connection, a line each and one
// for all. An environment that is refused does not stop the others, unless
// --fail-fast: then a refusal applies nothing anywhere, and a failure while executing
// stops the other environments from starting anything new. Every lock taken is
// released, whether its environment ran or not.
func applyAcross(ctx context.Context, f *Factory, o *applyOptions, envs []*envApply) error {
	defer func() {
		for _, e := range envs {
			e.a.release(context.WithoutCancel(ctx))
			e.run.errw.flush()
			e.run.F.Close()
		}
	}()
	eachEnvApply(envs, func(e *envApply) {
		if e.run.Err != nil { // its own diagnostics, printed when loading
			e.refused = e.run.Err
			return
		}
		a, err := e.prepare(ctx)
		e.a = a
		switch {
		case err != nil:
			e.refused = err
		case a.Refused != nil:
			e.refused = a.Refused
		}
		e.run.Err = e.refused
	})
	if err := ctx.Err(); err != nil {
		// Interrupted while planning: nothing was changed anywhere.
		return err
	}
	var refused []string
	for _, e := range envs {
		if e.refused != nil {
			refused = append(refused, e.Name())
		}
	}
	if o.FailFast && len(refused) > 0 {
		why := fmt.Sprintf("--fail-fast: %s refused, so nothing is applied anywhere", strings.Join(refused, ", "))
		for _, e := range envs {
			if e.refused == nil {
				e.held = why
			}
		}
	}
	for i, e := range envs {
		if i > 0 {
			fmt.Fprintln(f.IO.Out)
		}
		if err := e.section(f.IO.Out, f.Color()); err != nil {
			return err
		}
	}
	// Everything said so far on the environments' stderr comes before the prompt.
	for _, e := range envs {
		e.run.errw.flush()
	}
	var run []*envApply
	for _, e := range envs {
		if e.executable() {
			run = append(run, e)
		} else {
			// Refused, held or with nothing to do: its lock is not held over the prompt.
			e.a.release(context.WithoutCancel(ctx))
		}
	}
	if len(run) > 0 {
		if err := f.confirmApply(ctx, o); err != nil {
			return err
		}
		executeAcross(ctx, f, o, run)
	}
	fmt.Fprintln(f.IO.Out)
	failed := false
	for _, e := range envs {
		line, bad := e.report()
		failed = failed || bad
		fmt.Fprintf(f.IO.Out, "%s: %s\n", e.Name(), line)
	}
	fmt.Fprintln(f.IO.Out, aggregate(envs))
	if failed {
		return silentExit(exitError)
	}
	return nil
}

// executeAcross executes the environments of run in parallel, each with its own
// connection, lock fence and reconnect window. The first Ctrl-C starts no new
// environment; with --fail-fast neither does the first failure, which also stops the
// environments already running from starting new changes (their Stop).
func executeAcross(ctx context.Context, f *Factory, o *applyOptions, run []*envApply) {
	stop := f.Stop
	var (
		mu           sync.Mutex
		firstFailure string // the environment that failed first, under --fail-fast
		failure      func(name string)
	)
	if o.FailFast {
		halt := make(chan struct{})
		failure = func(name string) {
			mu.Lock()
			defer mu.Unlock()
			select {
			case <-halt:
			default:
				firstFailure = name
				close(halt)
			}
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-f.Stop:
				failure("")
			case <-done:
			}
		}()
		stop = halt
		for _, e := range run {
			e.a.Opts.Stop = halt
			e.a.Opts.OnFailure = func() { failure(e.Name()) }
		}
	}
	f.writing.Store(true)
	defer f.writing.Store(false)
	eachEnvApply(run, func(e *envApply) {
		select {
		case <-stop:
			mu.Lock()
			e.held = "not started: " + stoppedBy(firstFailure)
			mu.Unlock()
			e.a.release(context.WithoutCancel(ctx))
			return
		default:
		}
		e.res, e.runErr = e.a.execute(ctx)
		e.a.release(context.WithoutCancel(ctx))
		if failure != nil && (e.runErr != nil || !e.res.OK()) {
			failure(e.Name())
		}
	})
	mu.Lock()
	defer mu.Unlock()
	for _, e := range run {
		if e.res != nil && e.res.Counts().NotStarted > 0 && firstFailure != "" && firstFailure != e.Name() {
			e.stoppedBy = firstFailure
		}
	}
}

// stoppedBy says why an environment was not started.
func stoppedBy(failed string) string {
	if failed != "" {
		return fmt.Sprintf("--fail-fast: %s failed", failed)
	}
	return "interrupted"
}

// section writes the environment's part of the plan output: its heading (name and
// target), then its plan, then why it is not applied, if so.
func (e *envApply) section(w io.Writer, color bool) error {
	head := &plan.Plan{Environment: e.Name(), Target: e.target}
	if e.a != nil && e.a.Plan != nil {
		head.Target = e.a.Plan.Target
	}
	fmt.Fprintln(w, render.EnvHeading(head, render.TextOptions{Color: color}))
	if _, err := io.Copy(w, e.run.Out); err != nil {
		return err
	}
	if e.a != nil && e.a.Plan != nil {
		if err := e.a.render(w, color); err != nil {
			return err
		}
	}
	if e.refused != nil {
		fmt.Fprintf(w, "Error: %s\n", e.run.errText())
	}
	return nil
}

// report is the environment's closing line, and whether it counts as a failure.
func (e *envApply) report() (string, bool) {
	switch {
	case e.refused != nil:
		msg, more, _ := strings.Cut(e.run.errText(), "\n")
		if more != "" {
			msg = strings.TrimSuffix(msg, ":") + " (see its section above)"
		}
		return "not applied: " + msg, true
	case e.held != "":
		return "not applied (" + e.held + "); nothing was changed there", true
	case e.a == nil || !e.a.Plan.HasChanges():
		return "No changes.", false
	case e.runErr != nil:
		msg, _, _ := strings.Cut(e.run.F.secrets.scrub(e.runErr.Error()), "\n")
		return "not applied: " + msg, true
	}
	line, failure := outcome(e.res)
	if failure != nil {
		if line == "" {
			line = failure.Error()
		} else if ee := (*exitErr)(nil); errors.As(failure, &ee) && ee.Err != nil {
			line += " " + ee.Err.Error()
		}
		if e.stoppedBy != "" {
			line = strings.TrimSuffix(line, ".") + fmt.Sprintf(" (--fail-fast: stopped because %s failed).", e.stoppedBy)
		}
		return e.run.F.secrets.scrub(line), true
	}
	return line, false
}

// aggregate is the last line of an apply across environments.
func aggregate(envs []*envApply) string {
	var applied, unchanged, refused, failed, stopped, held int
	for _, e := range envs {
		switch {
		case e.refused != nil:
			refused++
		case e.held != "":
			held++
		case e.a == nil || !e.a.Plan.HasChanges():
			unchanged++
		case e.stoppedBy != "":
			stopped++
		case e.runErr != nil || !e.res.OK():
			failed++
		default:
			applied++
		}
	}
	parts := []string{fmt.Sprintf("%d applied", applied)}
	for _, p := range []struct {
		n    int
		what string
	}{{unchanged, "with no changes"}, {refused, "refused"}, {failed, "failed"}, {stopped, "stopped"}, {held, "not started"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	noun := "environments"
	if len(envs) == 1 {
		noun = "environment"
	}
	return fmt.Sprintf("Apply across %d %s: %s.", len(envs), noun, strings.Join(parts, ", "))
}

// liveEnvApplies prepares each environment of runs from its desired model: read its
// server, plan, refuse, lock, plan again under the lock.
func liveEnvApplies(o *applyOptions, runs []*envRun) []*envApply {
	envs := make([]*envApply, len(runs))
	for i, r := range runs {
		e := &envApply{run: r}
		e.prepare = func(ctx context.Context) (*preparedApply, error) {
			desired, live, err := r.F.loadAndRead(ctx, o.Paths)
			if err != nil {
				return nil, err
			}
			if t := live.Target; t != nil { // the heading's, should the target guard refuse it
				e.target = plan.Target{URL: t.URL, Server: t.Server, Cluster: t.Cluster, Domain: t.Domain, Account: t.Account, APILevel: t.APILevel}
			}
			return r.F.prepareDesired(ctx, o, desired, live)
		}
		envs[i] = e
	}
	return envs
}

// savedEnvApplies prepares each selected part of a saved plan of several
// environments: it connects with the part's saved connection (env() settings read
// now), and proves the part as a saved plan of one server is proven. A part whose
// environment could not be planned is refused with the reason it carries.
func (f *Factory) savedEnvApplies(o *applyOptions, m *plan.Multi) ([]*envApply, error) {
	parts, err := selectParts(m, f.Global.Envs, o.PlanFile)
	if err != nil {
		return nil, err
	}
	if len(f.Global.connFlags) > 0 && len(parts) != 1 {
		names := make([]string, len(parts))
		for i, p := range parts {
			names[i] = p.Environment
		}
		return nil, usageErr("--%s sets the connection of one environment, but %d are selected (%s): the saved connections decide where each part is applied; select exactly one with --env NAME to override its settings",
			f.Global.connFlags[0], len(parts), strings.Join(names, ", "))
	}
	envs := make([]*envApply, len(parts))
	for i, p := range parts {
		env := &model.Environment{Name: p.Environment}
		if p.Connection != nil {
			env.Connection = *p.Connection
		}
		r := f.newEnvRun(&schema.EnvModel{Env: env})
		// A part saved without servers or a context goes to its target, as a saved
		// plan of one server does.
		r.F.defaultServer = connect.WithoutUserInfo(p.Target.URL)
		envs[i] = &envApply{run: r, target: p.Target, prepare: func(ctx context.Context) (*preparedApply, error) {
			if p.Error != "" {
				return nil, fmt.Errorf("environment %s could not be planned: %s", p.Environment, p.Error)
			}
			return r.F.prepareSaved(ctx, o, o.PlanFile, p)
		}}
	}
	return envs, nil
}

// selectParts picks the parts of m that the --env patterns match (path.Match globs),
// in the document's order; no pattern picks all. A pattern that matches no part is a
// usage error naming the environments the file holds.
func selectParts(m *plan.Multi, patterns []string, name string) ([]*plan.Plan, error) {
	if len(patterns) == 0 {
		return m.Environments, nil
	}
	names := make([]string, len(m.Environments))
	for i, p := range m.Environments {
		names[i] = p.Environment
	}
	picked := make([]bool, len(m.Environments))
	for _, pat := range patterns {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, usageErr("--env %q is not a valid pattern: %s. Patterns use *, ? and [...], like --env 'prod-*'", pat, err)
		}
		matched := false
		for i, n := range names {
			if ok, _ := path.Match(pat, n); ok {
				picked[i], matched = true, true
			}
		}
		if !matched {
			return nil, usageErr("--env %q matches no environment of the saved plan %s: it holds %s", pat, name, strings.Join(names, ", "))
		}
	}
	var out []*plan.Plan
	for i, p := range m.Environments {
		if picked[i] {
			out = append(out, p)
		}
	}
	return out, nil
}
