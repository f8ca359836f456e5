package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/natsplan/natsplan/apply"
)

// envApply is one environment of an apply across environments: its own Factory
// (connection, lock, fence, "[name] " on stderr), how to prepare it, and what became
// of it.
type envApply struct {
	Name string
	F    *Factory
	// Prepare plans (or reads and proves a saved part) under the environment's lock.
	Prepare func(ctx context.Context) (*preparedApply, error)
	// Heading writes the environment's section heading (name and target).
	Heading func(w io.Writer)

	a *preparedApply
	// refused is why the environment is not applied: Prepare's error or the plan's
	// refusal. The section shows it in full, the report its first line.
	refused error
	// held is set when --fail-fast kept the environment from running.
	held string
	// res and runErr are what execute returned.
	res    *apply.Result
	runErr error
}

// executable reports whether the environment is to be executed: prepared, not
// refused, with something to do.
func (e *envApply) executable() bool {
	return e.refused == nil && e.held == "" && e.a != nil && e.a.Plan.HasChanges()
}

// envParallel bounds how many environments are worked on at once.
const envParallel = 4

// forEachEnv runs fn for every environment, envParallel at a time, and waits.
func forEachEnv(envs []*envApply, fn func(*envApply)) {
	sem := make(chan struct{}, envParallel)
	var wg sync.WaitGroup
	for _, e := range envs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(e)
		}()
	}
	wg.Wait()
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
		}
	}()
	forEachEnv(envs, func(e *envApply) {
		a, err := e.Prepare(ctx)
		e.a = a
		switch {
		case err != nil:
			e.refused = err
		case a.Refused != nil:
			e.refused = a.Refused
		}
	})
	if err := ctx.Err(); err != nil {
		// Interrupted while planning: nothing was changed anywhere.
		return err
	}
	var refused []string
	for _, e := range envs {
		if e.refused != nil {
			refused = append(refused, e.Name)
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
	var run []*envApply
	for _, e := range envs {
		if e.executable() {
			run = append(run, e)
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
		fmt.Fprintf(f.IO.Out, "%s: %s\n", e.Name, line)
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
			e.a.Opts.OnFailure = func() { failure(e.Name) }
		}
	}
	f.writing.Store(true)
	defer f.writing.Store(false)
	forEachEnv(run, func(e *envApply) {
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
			failure(e.Name)
		}
	})
}

// stoppedBy says why an environment was not started.
func stoppedBy(failed string) string {
	if failed != "" {
		return fmt.Sprintf("--fail-fast: %s failed", failed)
	}
	return "interrupted"
}

// section writes the environment's part of the plan output: its heading, then its
// plan, then why it is not applied, if so.
func (e *envApply) section(w io.Writer, color bool) error {
	e.Heading(w)
	if e.a != nil && e.a.Plan != nil {
		if err := e.a.render(w, color); err != nil {
			return err
		}
	}
	if e.refused != nil {
		fmt.Fprintf(w, "Error: %s\n", refusalText(e.refused))
	}
	return nil
}

// refusalText is what an environment's refusal says; a silent one (diagnostics,
// already printed on stderr with the environment's prefix) points there.
func refusalText(err error) string {
	var ee *exitErr
	if errors.As(err, &ee) && ee.Err == nil {
		return "refused: see the diagnostics above on stderr"
	}
	return err.Error()
}

// report is the environment's closing line, and whether it counts as a failure.
func (e *envApply) report() (string, bool) {
	switch {
	case e.refused != nil:
		msg, _, _ := strings.Cut(refusalText(e.refused), "\n")
		return "not applied: " + msg, true
	case e.held != "":
		return "not applied (" + e.held + "); nothing was changed there", true
	case e.a == nil || !e.a.Plan.HasChanges():
		return "No changes.", false
	case e.runErr != nil:
		msg, _, _ := strings.Cut(e.runErr.Error(), "\n")
		return "not applied: " + msg, true
	}
	line, failure := outcome(e.res)
	if failure != nil {
		if line == "" {
			line = failure.Error()
		} else if ee := (*exitErr)(nil); errors.As(failure, &ee) && ee.Err != nil {
			line += " " + ee.Err.Error()
		}
		return line, true
	}
	return line, false
}

// aggregate is the last line of an apply across environments.
func aggregate(envs []*envApply) string {
	var applied, unchanged, refused, failed, held int
	for _, e := range envs {
		switch {
		case e.refused != nil:
			refused++
		case e.held != "":
			held++
		case e.a == nil || !e.a.Plan.HasChanges():
			unchanged++
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
	}{{unchanged, "with no changes"}, {refused, "refused"}, {failed, "failed"}, {held, "not started"}} {
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
