package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/apply"
	"github.com/natsplan/natsplan/internal/connect"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/lock"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/plan/render"
	"github.com/natsplan/natsplan/planfile"
)

type applyOptions struct {
	Paths         []string
	PlanFile      string
	AutoApprove   bool
	AllowDelete   bool
	AllowDataLoss bool
	AllowReorder  bool
	Parallelism   int
	LockTimeout   time.Duration
	// FailFast: with environments, one refused environment applies nothing anywhere,
	// and one failing stops the others from starting anything new.
	FailFast bool
}

func newCmdApply(f *Factory) *cobra.Command {
	o := &applyOptions{}
	c := &cobra.Command{
		Use:   "apply [PATH... | PLANFILE]",
		Short: "Plan, confirm, and execute; or execute exactly a saved plan",
		Long: `apply computes the plan (or reads a saved one), shows it, asks for confirmation on a
terminal (or takes --auto-approve), and executes it in order with bounded parallelism.

Deletes need --allow-delete. A change that loses stored messages (deleting a stream that
holds messages, lowering a limit below what is stored, limits -> interest, narrowing or
deleting a consumer of an interest stream) or deletes consumers this project does not own
with their stream also needs --allow-data-loss. Those losses are judged again against the
server's state just before anything is sent. Repartitioning while lanes still hold
messages needs --allow-reorder. Given a plan file written by 'plan --out'
(its only argument), apply re-reads every object the plan touches and refuses when anything
changed since, or when the target differs; when no --server, $NATS_URL or context names a
server, it connects to the plan's target.

With environment blocks (docs/environments.md), apply prepares every environment, or
those --env selects, each on its own server and under its own lock, shows every plan,
asks once, executes them in parallel and reports each. A refused environment does not
stop the others unless --fail-fast, which then applies nothing anywhere; with it, a
failure while executing also stops the other environments from starting anything new.
A saved plan of several environments applies each part on its saved connection.

Exit codes: 0 applied (or nothing to do); 1 when a step failed or the plan was refused
(with environments: when any environment was refused, failed or not started).`,
		RunE: func(c *cobra.Command, args []string) error {
			if pf := planFileArg(args); pf != "" {
				if len(args) > 1 {
					return usageErr("%s is a saved plan, which must be the only argument: `natsplan apply %s` applies exactly what it holds, without reading the configuration", pf, pf)
				}
				if err := onlyWithSavedPlan(f, pf); err != nil {
					return err
				}
				o.PlanFile = pf
			} else {
				if len(args) == 1 {
					if err := neitherPlanNorHCL(args[0]); err != nil {
						return err
					}
				}
				o.Paths = pathsOrDefault(args)
			}
			if o.Parallelism < 0 {
				return usageErr("--parallelism must be 1 or more (0 for the default)")
			}
			return runApply(c.Context(), f, o)
		},
	}
	c.Flags().BoolVar(&o.AutoApprove, "auto-approve", false, "apply without asking (CI)")
	c.Flags().BoolVar(&o.AllowDelete, "allow-delete", false, "allow deleting objects this project owns (and consumer replaces)")
	c.Flags().BoolVar(&o.AllowDataLoss, "allow-data-loss", false, "allow changes that lose stored messages or consumers this project does not own (NP301, NP302)")
	c.Flags().BoolVar(&o.AllowReorder, "allow-reorder", false, "allow repartitioning while lanes still hold messages (NP204): per-key order breaks for them")
	c.Flags().IntVar(&o.Parallelism, "parallelism", apply.DefaultParallelism, "changes in flight at once within a step (0 also means the default)")
	envFlag(c, f)
	c.Flags().BoolVar(&o.FailFast, "fail-fast", false, "with environments: apply nothing anywhere when one is refused, and stop the others when one fails")
	c.Flags().DurationVar(&o.LockTimeout, "lock-timeout", time.Minute, "how long to wait for the apply lock, when the natsplan block enables it")
	onlyFlag(c, f)
	return c
}

// planFileArg is the argument that names a saved plan, if any: a file holding a JSON
// object, or any .json file (a configuration is never JSON, so a broken plan file is
// reported as a plan, not as an HCL syntax error).
func planFileArg(args []string) string {
	for _, a := range args {
		if planfile.IsPlanFile(a) || strings.HasSuffix(a, ".json") {
			return a
		}
	}
	return ""
}

func runApply(ctx context.Context, f *Factory, o *applyOptions) error {
	if !o.AutoApprove && !f.IO.StdinTTY {
		// Fail before reading anything: in CI a prompt would hang or silently say no.
		return &exitErr{Code: exitError, Err: errNoTTY}
	}
	var (
		a   *preparedApply
		err error
	)
	if o.PlanFile != "" {
		saved, multi, rerr := planfile.ReadFileAny(o.PlanFile)
		if rerr != nil {
			return &exitErr{Code: exitError, Err: rerr}
		}
		if multi != nil {
			envs, err := f.savedEnvApplies(o, multi)
			if err != nil {
				return err
			}
			return applyAcross(ctx, f, o, envs)
		}
		if len(f.Global.Envs) > 0 {
			return usageErr("--env selects environments, but %s is the saved plan of one server: apply it without --env", o.PlanFile)
		}
		// Without --server, $NATS_URL or a context naming a server, the plan's own
		// target is the server, not 127.0.0.1; the target check still applies.
		f.defaultServer = connect.WithoutUserInfo(saved.Target.URL)
		a, err = f.prepareSaved(ctx, o, o.PlanFile, saved)
	} else {
		runs, eerr := f.environments(ctx, o.Paths)
		if eerr != nil {
			return eerr
		}
		if runs != nil {
			return applyAcross(ctx, f, o, liveEnvApplies(o, runs))
		}
		desired, live, lerr := f.loadAndRead(ctx, o.Paths)
		if lerr != nil {
			return lerr
		}
		a, err = f.prepareDesired(ctx, o, desired, live)
	}
	if err != nil {
		return err
	}
	defer a.release(context.WithoutCancel(ctx))
	if err := a.render(f.IO.Out, f.Color()); err != nil {
		return err
	}
	if a.Refused != nil {
		// Refuse before asking: a plan that can not run needs no confirmation.
		return &exitErr{Code: exitError, Err: a.Refused}
	}
	if !a.Plan.HasChanges() {
		return nil
	}
	if err := f.confirmApply(ctx, o); err != nil {
		return err
	}
	f.writing.Store(true)
	res, err := a.execute(ctx)
	f.writing.Store(false)
	if err != nil {
		return err
	}
	line, failure := outcome(res)
	if line != "" {
		fmt.Fprintln(f.IO.Out, line)
	}
	return failure
}

// preparedApply is one environment's apply up to the confirmation: its plan computed
// (or read and proven) under its lock, and the options to run it with. The phases of
// runApply are its methods, so that every environment of a configuration is prepared,
// executed and released with its own Factory (connection, lock, fence).
type preparedApply struct {
	f    *Factory
	Plan *plan.Plan
	Opts apply.Options
	// Refused is why apply will not run Plan (apply.Check's refusal): the plan is
	// rendered, then the refusal is the outcome; nothing was written, and no lock is
	// held when it was refused before the lock was taken.
	Refused error
	lease   *lock.Lease
}

// applyOptionsFor is the apply.Options of o for f's environment: progress on f's
// stderr, stopped by f's Stop.
func (f *Factory) applyOptionsFor(o *applyOptions) apply.Options {
	return apply.Options{
		Parallelism: o.Parallelism, AllowDelete: o.AllowDelete, AllowDataLoss: o.AllowDataLoss, AllowReorder: o.AllowReorder,
		Progress: f.IO.ErrOut, TTY: f.IO.StderrTTY, Stop: f.Stop,
	}
}

// prepareDesired plans desired against live (read by the caller, with f's
// connection), refuses what apply would not run, takes the lock the files ask for,
// and plans again under it.
//
// Static errors (diagnostics, error findings, deletes without the flag) refuse the
// plan before anything is written, the lock's bucket included: "nothing was changed"
// must be true. With a lock, the server is read again once it is held, so that the
// plan applied is the plan computed under the lock.
func (f *Factory) prepareDesired(ctx context.Context, o *applyOptions, desired, live *model.Model) (*preparedApply, error) {
	a := &preparedApply{f: f, Opts: f.applyOptionsFor(o)}
	p, err := f.planWith(ctx, desired, live)
	if err != nil {
		return nil, err
	}
	a.Plan = p
	if a.Refused = apply.Check(p, a.Opts); a.Refused != nil {
		return a, nil
	}
	if p.Lock == nil { // Compute built it from the files' lock {} block
		return a, nil
	}
	if err := a.takeLock(ctx, p.Lock, o.LockTimeout); err != nil {
		return nil, err
	}
	if a.Plan, err = f.planAgainst(ctx, desired); err != nil {
		a.release(context.WithoutCancel(ctx))
		return nil, err
	}
	a.Refused = apply.Check(a.Plan, a.Opts)
	return a, nil
}

// prepareSaved proves the saved plan p (read from the file name) still holds on f's
// server, under the lock it names, and judges its data loss again.
func (f *Factory) prepareSaved(ctx context.Context, o *applyOptions, name string, p *plan.Plan) (*preparedApply, error) {
	a := &preparedApply{f: f, Opts: f.applyOptionsFor(o), Plan: p}
	if a.Refused = apply.Check(p, a.Opts); a.Refused != nil {
		return a, nil
	}
	if p.Lock != nil {
		if err := a.takeLock(ctx, p.Lock, o.LockTimeout); err != nil {
			return nil, err
		}
	}
	var err error
	if a.Plan, err = f.verifySavedPlan(ctx, name, p); err != nil {
		a.release(context.WithoutCancel(ctx))
		return nil, err
	}
	a.Refused = apply.Check(a.Plan, a.Opts)
	return a, nil
}

// takeLock takes the apply lock spec names and fences the apply's writes with it.
func (a *preparedApply) takeLock(ctx context.Context, spec *plan.LockSpec, wait time.Duration) error {
	lease, err := a.f.lock(ctx, spec, wait)
	if err != nil {
		return err
	}
	a.lease = lease
	a.Opts.Fence = lease.Fence
	return nil
}

// render writes the plan as text.
func (a *preparedApply) render(w io.Writer, color bool) error {
	return render.Text(w, a.Plan, render.TextOptions{Color: color})
}

// confirmApply asks once, unless --auto-approve, whether to apply what was rendered.
func (f *Factory) confirmApply(ctx context.Context, o *applyOptions) error {
	if o.AutoApprove {
		return nil
	}
	yes, err := f.confirm(ctx)
	if err != nil {
		return err
	}
	if !yes {
		return &exitErr{Code: exitError, Err: fmt.Errorf("apply cancelled: nothing was changed")}
	}
	return nil
}

// execute runs the plan on the environment's connection. The error is for an apply
// that could not start (nothing was changed); what became of each change is in the
// Result.
func (a *preparedApply) execute(ctx context.Context) (*apply.Result, error) {
	f := a.f
	sess, err := f.Session(ctx)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("apply: nothing was changed: %w", err)
	}
	opts := a.Opts
	opts.ReconnectWindow = reconnectWindow(sess.JS.Timeout) // --timeout or $NATS_TIMEOUT
	// Requests in flight finish after the first Ctrl-C: apply's context does not end
	// with ctx; the closed Stop channel starts nothing new. The caller sets f.writing
	// around it (once for all environments), which changes what Ctrl-C says.
	return apply.Run(context.WithoutCancel(ctx), sess.JS, a.Plan, opts)
}

// release gives back the lock, if one is held; it is safe to call more than once.
func (a *preparedApply) release(ctx context.Context) {
	if a == nil || a.lease == nil {
		return
	}
	a.f.release(ctx, a.lease)
	a.lease = nil
}

// outcome is the closing line of an executed apply and its failure, if any: an apply
// stopped because the server went away says so in one line (the failure, no summary
// line); a stopped or failed one exits 1.
func outcome(res *apply.Result) (string, error) {
	var unreachable *apply.UnreachableError
	if errors.As(res.Stopped, &unreachable) {
		// One line: why it stopped and where things stand.
		return "", &exitErr{Code: exitError, Err: fmt.Errorf("%v: %s; run plan when it is back to see what is left", unreachable, standing(res))}
	}
	if res.Stopped != nil {
		return summary(res), &exitErr{Code: exitError, Err: res.Stopped}
	}
	if !res.OK() {
		return summary(res), silentExit(exitError)
	}
	return summary(res), nil
}

// reconnectWindow is how long apply waits for a lost connection: twice the request
// timeout, so that a server restarting within seconds does not fail the apply, and a
// server that is gone stops it soon.
func reconnectWindow(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return apply.DefaultReconnectWindow
	}
	return 2 * timeout
}

// neitherPlanNorHCL refuses a single file argument that is not named .hcl and parses
// neither as a saved plan (IsPlanFile said so) nor as HCL: an error page saved by a
// failed download, a truncated artifact.
func neitherPlanNorHCL(path string) error {
	if strings.HasSuffix(path, ".hcl") {
		return nil // an HCL file: its diagnostics say what is wrong
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil // Load reports it
	}
	if _, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos); diags.HasErrors() {
		return &exitErr{Code: exitError, Err: fmt.Errorf("%s is neither a natsplan plan file (written by plan --out) nor an HCL configuration (%s): "+
			"if it came from an earlier CI step, that step (or the artifact download) failed", path, diags.Errs()[0])}
	}
	return nil
}

// lock takes the apply lock named by spec, waiting up to wait for another holder.
func (f *Factory) lock(ctx context.Context, spec *plan.LockSpec, wait time.Duration) (*lock.Lease, error) {
	sess, err := f.Session(ctx)
	if err != nil {
		return nil, err
	}
	// The session's domain: the flag's, or the context's or environment's js_domain.
	o := lock.Options{Bucket: spec.Bucket, Wait: wait, Domain: sess.Domain}
	if spec.TTL != "" {
		if o.TTL, err = time.ParseDuration(spec.TTL); err != nil {
			return nil, fmt.Errorf("apply lock: bad ttl %q in the plan: %w", spec.TTL, err)
		}
	}
	fmt.Fprintf(f.IO.ErrOut, "Taking the apply lock of project %s...\n", spec.Project)
	// The lock's requests go through nats.go's KV: a denied one fails at once too.
	bucket := spec.Bucket
	if bucket == "" {
		bucket = lock.DefaultBucket
	}
	wctx, done := sess.JS.Denials.Watch(ctx, sess.JS.Prefix+".STREAM.CREATE.KV_"+bucket, "$KV."+bucket+"."+spec.Project)
	lease, err := lock.Acquire(wctx, sess.NC, spec.Project, o)
	done()
	if pe := jsapi.Denied(wctx); pe != nil {
		err = fmt.Errorf("apply lock %s/%s: %w", bucket, spec.Project, pe)
	}
	if err != nil {
		return nil, &exitErr{Code: exitError, Err: err}
	}
	return lease, nil
}

// release gives the apply lock back. A failed release is not the apply's failure, but
// the lock then stays held until its ttl runs out, which the next apply waits for: say so.
func (f *Factory) release(ctx context.Context, lease *lock.Lease) {
	if err := lease.Release(ctx); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "warning: %v\nThe apply lock stays held until its ttl (%s) runs out: the next apply waits for it or times out.\n", err, lease.TTL())
	}
}

// confirm asks on the terminal whether to apply; an interruption ends the wait with
// ctx's error.
func (f *Factory) confirm(ctx context.Context) (bool, error) {
	fmt.Fprint(f.IO.ErrOut, "\nDo you want to apply these changes? Only 'yes' will be accepted: ")
	answer := make(chan string, 1)
	go func() {
		// Left blocked on the terminal when interrupted; the process is ending.
		line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		return strings.TrimSpace(line) == "yes", nil
	case <-ctx.Done():
		return false, fmt.Errorf("apply: nothing was changed: %w", ctx.Err())
	}
}

// verifySavedPlan proves a saved plan still holds: same target, and every object it
// touches unchanged since planning. A stale plan is never applied.
func (f *Factory) verifySavedPlan(ctx context.Context, name string, p *plan.Plan) (*plan.Plan, error) {
	sess, err := f.Session(ctx)
	if err != nil {
		return nil, err
	}
	streams, consumers := p.Touched()
	live, err := observe.ReadObjects(ctx, sess.JS, streams, consumers)
	if err != nil {
		return nil, err
	}
	problems := plan.Verify(p, live)
	if len(problems) > 0 && plan.AlreadyApplied(p, live) {
		return nil, &exitErr{Code: exitError, Err: fmt.Errorf("the saved plan %s was already applied: every object it touches is already as it leaves them, so nothing was changed; run plan again to see what is left to do", name)}
	}
	if len(problems) > 0 {
		return nil, &exitErr{Code: exitError, Err: fmt.Errorf("refusing the saved plan %s:\n  %s\nRun plan again and review the new plan", name, strings.Join(problems, "\n  "))}
	}
	// Lanes drained at planning time may hold messages again: NP204 is judged now,
	// on every lane of the repartitioned streams (untouched lanes too).
	if streams := plan.Repartitioned(p); len(streams) > 0 {
		only := map[string]bool{}
		for _, s := range streams {
			only[s] = true
		}
		lanes, err := observe.Read(ctx, sess.JS, observe.Options{ConsumersOf: func(s string) bool { return only[s] }})
		if err != nil {
			return nil, err
		}
		p.Findings = append(p.Findings, plan.RecheckDrained(p, lanes)...)
	}
	// What the plan loses depends on what the server holds now, which the hashes do not
	// cover: show and check that before asking.
	return apply.Rejudge(ctx, sess.JS, p)
}

func writePlanFile(name string, p *plan.Plan) error {
	data, err := planfile.Marshal(p)
	if err != nil {
		return err
	}
	return writeFileAtomic(name, data, 0o644)
}

// summary is the closing line of apply.
func summary(r *apply.Result) string {
	n := r.Counts()
	if r.OK() {
		if n.Done == 1 {
			return "Apply complete: 1 change done."
		}
		return fmt.Sprintf("Apply complete: %d changes done.", n.Done)
	}
	return "Apply incomplete: " + standing(r) + "."
}

// standing counts the changes by what became of them.
func standing(r *apply.Result) string {
	n := r.Counts()
	unknown := ""
	if a := r.Addresses(apply.StatusUnknown); len(a) > 0 {
		// Few (at most the changes in flight at once), and the ones to check by hand.
		const shown = 5
		if len(a) > shown {
			a = append(a[:shown], fmt.Sprintf("and %d more", len(a)-shown))
		}
		unknown = " (" + strings.Join(a, ", ") + ")"
	}
	return fmt.Sprintf("%d done, %d failed, %d outcome unknown%s, %d skipped (not sent because of an earlier failure), %d not started",
		n.Done, n.Failed, n.Unknown, unknown, n.Skipped, n.NotStarted)
}
