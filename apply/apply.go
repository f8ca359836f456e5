// Package apply executes a plan against the server: in the plan's step order, with
// bounded parallelism inside a step, never starting a change before what it depends on
// succeeded, and reporting per change what was and was not done.
package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/plan"
)

// DefaultParallelism is how many changes of one step run at once when Options leave it
// unset. BenchmarkApply (numbers in docs/apply.md): on loopback the server's CPU is the
// limit and parallelism buys nothing; across a 2ms round trip 16 is about 5x faster than
// one at a time, and 64 about twice faster again on 1,000-stream plans. 16 is the largest
// pool of API workers a server runs (min(GOMAXPROCS, 16)), a bound on how much of it one
// apply takes from the applications sharing it; --parallelism raises it for big plans
// on slow links.
const DefaultParallelism = 16

// Options control a run.
type Options struct {
	// Parallelism bounds how many changes of one step are in flight; 0 means DefaultParallelism.
	Parallelism int
	// AllowDelete lets a plan that deletes or replaces objects run; without it such a
	// plan is refused before anything is sent.
	AllowDelete bool
	// AllowDataLoss accepts the error findings that name it (NP301: deleting a stream
	// that holds messages); without it such a plan is refused.
	AllowDataLoss bool
	// Progress receives a line per change (stderr in the CLI); nil discards them.
	Progress io.Writer
	// TTY lets progress redraw a status line instead of writing plain lines.
	TTY bool
	// Stop is closed on the first Ctrl-C: nothing new starts, in-flight requests finish.
	Stop <-chan struct{}
}

// Run executes p against the server. It refuses (a *RefusedError, every change refused,
// nothing sent) when the plan has error findings that o does not override, or deletes
// without AllowDelete. A failed change does not stop the run: everything that does not
// depend on it, directly or not, still runs, and the Result says what was and was not
// done. The error is for refusals and for plans that can not start; failed changes are
// in the Result only.
func Run(ctx context.Context, c *jsapi.Client, p *plan.Plan, o Options) (*Result, error) {
	if c == nil || p == nil {
		return nil, errors.New("apply: a client and a plan are required")
	}
	if reasons := refusals(p, o); len(reasons) > 0 {
		refused := &RefusedError{Reasons: reasons}
		res := newResult(p, StatusRefused)
		for _, s := range res.Steps {
			s.Err = refused
		}
		return res, refused
	}
	deps, err := graph(p)
	if err != nil {
		return nil, fmt.Errorf("apply: the plan can not run: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	par := o.Parallelism
	if par <= 0 {
		par = DefaultParallelism
	}
	r := &runner{
		c: c, p: p, deps: deps, par: par, stop: o.Stop,
		res:  newResult(p, StatusNotStarted),
		prog: newProgress(o.Progress, o.TTY, len(p.Changes)),
	}
	r.run(ctx)
	return r.res, nil
}

// runner schedules the changes of one run. Only run's goroutine touches its state; the
// requests run in their own goroutines and report back on a channel.
type runner struct {
	c    *jsapi.Client
	p    *plan.Plan
	deps [][]int
	par  int
	stop <-chan struct{}
	res  *Result
	prog *progress
	// halted is set once Stop is closed or ctx ends: nothing new starts after.
	halted bool
}

type outcome struct {
	i   int
	err error
	d   time.Duration
}

func (r *runner) run(ctx context.Context) {
	defer r.prog.close()
	done := make(chan outcome)
	for _, step := range r.steps() {
		r.runStep(ctx, step, done)
	}
}

// runStep runs the changes of one step. Each change counts its dependencies inside the
// step that have not succeeded yet and is ready at zero; a failure skips its dependants
// at once. That keeps the scheduling linear in the number of changes and dependencies,
// which matters for plans of tens of thousands of changes.
func (r *runner) runStep(ctx context.Context, step []int, done chan outcome) {
	inStep := make(map[int]bool, len(step))
	for _, i := range step {
		inStep[i] = true
	}
	waiting := make(map[int]int, len(step))
	dependants := map[int][]int{}
	for _, i := range step {
		for _, j := range r.deps[i] {
			if inStep[j] {
				waiting[i]++
				dependants[j] = append(dependants[j], i)
			}
		}
	}
	var ready []int
	for _, i := range step {
		// Earlier steps are finished: a dependency there that failed or was skipped
		// blocks this change for good.
		if b := r.blocker(i); b >= 0 {
			r.skip(i, b, dependants)
		} else if waiting[i] == 0 && r.res.Steps[i].Status == StatusNotStarted {
			ready = append(ready, i)
		}
	}
	running := 0
	for {
		for len(ready) > 0 && running < r.par && !r.stopped(ctx) {
			running++
			r.start(ctx, ready[0], done)
			ready = ready[1:]
		}
		if running == 0 {
			// Nothing is in flight, so nothing more becomes ready: what is left was
			// stopped and stays not_started.
			return
		}
		var stop, cancelled <-chan struct{}
		if !r.halted {
			stop, cancelled = r.stop, ctx.Done()
		}
		select {
		case o := <-done:
			running--
			r.finish(o)
			for _, i := range dependants[o.i] {
				if o.err != nil {
					r.skip(i, o.i, dependants)
				} else if waiting[i]--; waiting[i] == 0 && r.res.Steps[i].Status == StatusNotStarted {
					ready = append(ready, i)
				}
			}
		case <-stop:
			r.stopped(ctx)
		case <-cancelled:
			r.stopped(ctx)
		}
	}
}

// stopped reports whether Stop was closed or ctx ended, and says so once.
func (r *runner) stopped(ctx context.Context) bool {
	if r.halted {
		return true
	}
	select {
	case <-r.stop:
	case <-ctx.Done():
	default:
		return false
	}
	r.halted = true
	r.prog.stopping()
	return true
}

// steps groups the changes by step, in step order and plan order within a step.
func (r *runner) steps() [][]int {
	byStep := map[int][]int{}
	var order []int
	for i, ch := range r.p.Changes {
		if _, ok := byStep[ch.Step]; !ok {
			order = append(order, ch.Step)
		}
		byStep[ch.Step] = append(byStep[ch.Step], i)
	}
	sort.Ints(order)
	out := make([][]int, len(order))
	for k, s := range order {
		out[k] = byStep[s]
	}
	return out
}

// blocker returns a dependency of change i that failed or was skipped, or -1.
func (r *runner) blocker(i int) int {
	for _, j := range r.deps[i] {
		if st := r.res.Steps[j].Status; st == StatusFailed || st == StatusSkipped {
			return j
		}
	}
	return -1
}

// skip marks change i skipped because of blocker, and with it every change of the step
// that depends on it.
func (r *runner) skip(i, blocker int, dependants map[int][]int) {
	s := r.res.Steps[i]
	if s.Status != StatusNotStarted {
		return
	}
	b := r.res.Steps[blocker]
	s.Status = StatusSkipped
	if b.Status == StatusSkipped {
		s.Err = fmt.Errorf("depends on %s, which was skipped", b.Address)
	} else {
		s.Err = fmt.Errorf("depends on %s, which failed", b.Address)
	}
	r.prog.skipped(s)
	for _, d := range dependants[i] {
		r.skip(d, i, dependants)
	}
}

func (r *runner) start(ctx context.Context, i int, done chan<- outcome) {
	r.prog.started(r.res.Steps[i])
	ch := r.p.Changes[i]
	go func() {
		start := time.Now()
		err := execute(ctx, r.c, ch)
		done <- outcome{i, err, time.Since(start)}
	}()
}

func (r *runner) finish(o outcome) {
	s := r.res.Steps[o.i]
	s.Status, s.Err, s.Duration = StatusDone, nil, o.d
	if o.err != nil {
		s.Status, s.Err = StatusFailed, o.err
	}
	r.prog.done(s)
}
