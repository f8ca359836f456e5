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
	// that holds messages; NP302: a change that removes stored messages or deletes
	// consumers the project does not own); without it such a plan is refused. Run judges
	// these again against the server's state before it sends anything.
	AllowDataLoss bool
	// AllowReorder accepts repartitioning lanes that still hold messages (NP204 as an
	// error); without it such a plan is refused.
	AllowReorder bool
	// Progress receives a line per change (stderr in the CLI); nil discards them.
	Progress io.Writer
	// TTY lets progress redraw a status line instead of writing plain lines.
	TTY bool
	// Stop is closed on the first Ctrl-C: nothing new starts, in-flight requests finish.
	Stop <-chan struct{}
	// Fence, when set, is asked before every write request; when it fails (the apply
	// lock is lost) the write is not sent, nothing new starts, and Result.Stopped is
	// its error.
	Fence func(ctx context.Context) error
	// ReconnectWindow is how long to wait for a lost connection to come back before
	// stopping (DefaultReconnectWindow when zero). Nothing new starts while it is down.
	ReconnectWindow time.Duration
	// OnFailure, when set, is called once, from the run's own goroutine, the first
	// time a change fails (the server refused it, or a read-back found it not carried
	// out) or the run stops early (lost lock, server gone): apply across environments
	// with --fail-fast stops the other environments with it, not waiting for this run
	// to end. An outcome that stays unknown is only known at the end, in the Result.
	OnFailure func()
}

// Run executes p against the server. It refuses (a *RefusedError, every change refused,
// nothing sent) when the plan has error findings that o does not override, or deletes
// without AllowDelete. A failed change does not stop the run: everything that does not
// depend on it, directly or not, still runs, and the Result says what was and was not
// done. A change whose request timed out is read back before it counts as done or
// failed; a denied kind of request is not sent again; the run stops early, with
// Result.Stopped saying why, when the fence fails or the server stays unreachable for
// the reconnect window. The error is for refusals and for plans that can not start;
// failed changes are in the Result only.
func Run(ctx context.Context, c *jsapi.Client, p *plan.Plan, o Options) (*Result, error) {
	if c == nil || p == nil {
		return nil, errors.New("apply: a client and a plan are required")
	}
	if reasons := refusals(p, o); len(reasons) > 0 {
		return refuse(p, reasons)
	}
	deps, err := graph(p)
	if err != nil {
		return nil, fmt.Errorf("apply: the plan can not run: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	// Data loss is judged against the server as it is now, not as it was planned: a
	// saved plan may be hours old, and a prompt may have waited minutes.
	fresh, err := rejudge(ctx, c, p)
	if err != nil {
		return nil, err
	}
	if reasons := refusals(fresh, o); len(reasons) > 0 {
		return refuse(p, reasons)
	}
	par := o.Parallelism
	if par <= 0 {
		par = DefaultParallelism
	}
	window := o.ReconnectWindow
	if window <= 0 {
		window = DefaultReconnectWindow
	}
	fenced := *c
	fenced.Fence = o.Fence
	r := &runner{
		c: &fenced, p: p, deps: deps, par: par, stop: o.Stop, window: window, onFailure: o.OnFailure,
		res:    newResult(p, StatusNotStarted),
		prog:   newProgress(o.Progress, o.TTY, len(p.Changes)),
		denied: map[string]*deniedKind{},
		resent: map[int]bool{},
	}
	r.run(ctx)
	return r.res, nil
}

// refuse is Run's answer to a plan it does not start: every change refused.
func refuse(p *plan.Plan, reasons []string) (*Result, error) {
	refused := &RefusedError{Reasons: reasons}
	res := newResult(p, StatusRefused)
	for _, s := range res.Steps {
		s.Err = refused
	}
	return res, refused
}

// runner schedules the changes of one run. Only run's goroutine touches its state; the
// requests run in their own goroutines and report back on a channel.
type runner struct {
	c      *jsapi.Client
	p      *plan.Plan
	deps   [][]int
	par    int
	stop   <-chan struct{}
	window time.Duration
	res    *Result
	prog   *progress
	// halted is set once Stop is closed, ctx ends, the fence fails or the server stays
	// unreachable: nothing new starts after.
	halted bool
	// downSince is when the connection was first seen down (or a ping went
	// unanswered); zero while it is up.
	downSince time.Time
	// silent is set when a request timed out: the server may have stopped answering
	// on a connection that still looks up (a stalled process, a black-holed network),
	// so nothing new is sent until it answers a ping. probe is that ping while it is
	// out, answered within the reconnect window or the run halts.
	silent bool
	probe  chan error
	// denied are the API operations the server refused to route, by operation.
	denied     map[string]*deniedKind
	deniedKeys []string
	// resent are the changes sent a second time after a timeout and a read-back
	// that found them not carried out.
	resent map[int]bool
	// onFailure is Options.OnFailure, set to nil once called.
	onFailure func()
}

// failed calls Options.OnFailure the first time something fails.
func (r *runner) failed() {
	if f := r.onFailure; f != nil {
		r.onFailure = nil
		f()
	}
}

// deniedKind is an API operation the user may not send: the first change it failed,
// and how many more were denied too (they were in flight) or not sent because of it.
type deniedKind struct {
	err   error
	first string
	more  int
}

type outcome struct {
	i   int
	err error
	d   time.Duration
}

// pollConnection is how often a run waiting for the connection to come back looks.
const pollConnection = 50 * time.Millisecond

func (r *runner) run(ctx context.Context) {
	defer r.prog.close()
	done := make(chan outcome)
	for _, step := range r.steps() {
		r.runStep(ctx, step, done)
	}
	if !r.prog.quiet {
		for _, s := range r.res.Steps {
			if s.Status == StatusUnknown {
				r.prog.line(describe(s))
			}
		}
	}
	for _, op := range r.deniedKeys {
		if d := r.denied[op]; d.more > 0 {
			r.prog.line(fmt.Sprintf("%d more change(s) that need the same permission as %s failed or were not sent: %v", d.more, d.first, d.err))
		}
	}
}

// runStep runs the changes of one step. Each change counts its dependencies inside the
// step that have not succeeded yet and is ready at zero; a failure skips its dependants
// at once. That keeps the scheduling linear in the number of changes and dependencies,
// which matters for plans of tens of thousands of changes. A change whose request timed
// out holds its dependants until the end of the step, when its object is read again.
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
	var ready, unknown []int
	for _, i := range step {
		// Earlier steps are finished: a dependency there that failed or was skipped
		// blocks this change for good.
		if b := r.blocker(i); b >= 0 {
			r.skip(i, b, dependants)
		} else if waiting[i] == 0 && r.res.Steps[i].Status == StatusNotStarted {
			ready = append(ready, i)
		}
	}
	succeeded := func(i int) {
		for _, d := range dependants[i] {
			if waiting[d]--; waiting[d] == 0 && r.res.Steps[d].Status == StatusNotStarted {
				ready = append(ready, d)
			}
		}
	}
	running := 0
	for {
		for len(ready) > 0 && running < r.par && !r.stopped(ctx) && r.connected() {
			i := ready[0]
			ready = ready[1:]
			if r.notAllowed(i, dependants) {
				continue
			}
			running++
			r.start(ctx, i, done)
		}
		// Timed-out changes are read back once nothing is in flight, on a live
		// connection; while it is down the run waits for it (or halts).
		resolveNow := running == 0 && len(ready) == 0 && len(unknown) > 0 && !r.halted && r.connected()
		if running == 0 && (len(ready) == 0 || r.halted) && (r.halted || len(unknown) == 0 || resolveNow) {
			if resolveNow {
				for _, a := range r.resolve(ctx, unknown) {
					switch {
					case a.done:
						succeeded(a.i)
					case a.err == nil && !r.resent[a.i]:
						// Known not to have happened: send it once more. Every
						// change is idempotent (the same config, or a delete).
						r.resent[a.i] = true
						r.res.Steps[a.i].Status, r.res.Steps[a.i].Err = StatusNotStarted, nil
						ready = append(ready, a.i)
					default:
						for _, d := range dependants[a.i] {
							r.skip(d, a.i, dependants)
						}
					}
				}
				unknown = nil
				continue
			}
			// Nothing is in flight, so nothing more becomes ready: what is left was
			// stopped and stays not_started, or depends on an unknown outcome.
			for _, i := range unknown {
				for _, d := range dependants[i] {
					r.skip(d, i, dependants)
				}
			}
			return
		}
		var stop, cancelled <-chan struct{}
		var poll <-chan time.Time
		if !r.halted {
			stop, cancelled = r.stop, ctx.Done()
			if !r.downSince.IsZero() {
				poll = time.After(pollConnection)
			}
		}
		select {
		case o := <-done:
			running--
			switch r.finish(o) {
			case StatusDone:
				succeeded(o.i)
			case StatusUnknown:
				unknown = append(unknown, o.i)
			case StatusNotStarted:
				ready = append(ready, o.i) // not sent: the connection was down
			default:
				r.failed()
				for _, d := range dependants[o.i] {
					r.skip(d, o.i, dependants)
				}
			}
		case <-stop:
			r.stopped(ctx)
		case <-cancelled:
			r.stopped(ctx)
		case <-poll:
		}
	}
}

// connected reports whether the connection is up. While it is down nothing starts;
// once it has been down for the whole reconnect window the run halts.
func (r *runner) connected() bool {
	nc := r.c.NC
	if nc.IsConnected() {
		if !r.answering() {
			return false // waiting for the ping's answer (or halted without one)
		}
		r.downSince = time.Time{}
		return true
	}
	if r.downSince.IsZero() {
		r.downSince = time.Now()
	}
	if down := time.Since(r.downSince); down >= r.window || nc.IsClosed() {
		r.halt(&UnreachableError{Down: down})
	}
	return false
}

// answering reports whether the server answers on a connection that looks up. After
// a request timed out it sends one ping and reports false until the pong: a server
// that stalled would otherwise be sent every change left, each timing out with its
// outcome unknown, and carry them all out whenever it resumes. A ping unanswered for
// the whole reconnect window halts the run as an unreachable server does.
func (r *runner) answering() bool {
	if !r.silent {
		return true
	}
	if r.probe == nil {
		ch := make(chan error, 1)
		r.probe = ch
		nc, window := r.c.NC, r.window
		go func() { ch <- nc.FlushTimeout(window) }()
	}
	select {
	case err := <-r.probe:
		r.probe = nil
		switch {
		case err == nil:
			r.silent = false
			return true
		case r.c.NC.IsConnected():
			r.halt(&UnreachableError{Down: r.window, Silent: true})
		}
		// The connection went down while pinging: the reconnect window decides.
		return false
	default:
		if r.downSince.IsZero() {
			r.downSince = time.Now() // so that the run polls while the ping is out
		}
		return false
	}
}

// notAllowed skips change i, with everything that depends on it, when it needs an
// API operation the server already denied; it reports whether it did.
func (r *runner) notAllowed(i int, dependants map[int][]int) bool {
	for _, op := range ops(r.p.Changes[i]) {
		d := r.denied[op]
		if d == nil {
			continue
		}
		s := r.res.Steps[i]
		s.Status, s.Err = StatusSkipped, fmt.Errorf("not sent: %w (as for %s)", d.err, d.first)
		d.more++
		r.prog.finished++ // counted, not printed: run prints one line per denied kind
		for _, dep := range dependants[i] {
			r.skip(dep, i, dependants)
		}
		return true
	}
	return false
}

// stopped reports whether the run is halted, or Stop was closed or ctx ended, and
// says so once.
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

// halt stops the run for reason: nothing new starts.
func (r *runner) halt(reason error) {
	if r.halted {
		return
	}
	r.halted = true
	r.res.Stopped = reason
	r.failed()
	r.prog.quiet = true // the reason and the counts are said once, at the end
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

// blocker returns a dependency of change i that was not done, or -1. It is called for
// earlier steps only, which are finished.
func (r *runner) blocker(i int) int {
	for _, j := range r.deps[i] {
		if st := r.res.Steps[j].Status; st == StatusFailed || st == StatusSkipped || st == StatusUnknown {
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
	switch b.Status {
	case StatusSkipped:
		s.Err = fmt.Errorf("depends on %s, which was skipped", b.Address)
	case StatusUnknown:
		s.Err = fmt.Errorf("depends on %s, whose outcome is unknown", b.Address)
	default:
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
