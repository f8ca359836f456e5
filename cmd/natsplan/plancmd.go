package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/plan/render"
	"github.com/natsplan/natsplan/planfile"
	"github.com/natsplan/natsplan/preflight"
	"github.com/natsplan/natsplan/schema"
)

type planOptions struct {
	Paths            []string
	Out              string
	Format           Format
	DetailedExitcode bool
}

func newCmdPlan(f *Factory) *cobra.Command {
	o := &planOptions{}
	c := &cobra.Command{
		Use:   "plan [PATH...]",
		Short: "Read the server, diff it against the files, check the invariants, print the plan",
		Long: `plan reads every stream and consumer of the account, normalises both sides the way the
server does, and prints exactly what apply would do: creates, in-place updates, adoptions
of unmarked objects, consumer replaces where lifecycle allows, and deletes of objects this
project owns. Changes the server would refuse are errors that explain the way out.

With environment blocks (docs/environments.md), plan runs every environment, or those
--env selects, each against its own server, and prints one section per environment.

Exit codes: 0 ok; 1 error (including any error finding, or any environment that failed);
with --detailed-exitcode, 2 when the plan (of any environment) has changes.`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Paths = pathsOrDefault(args)
			if err := checkFormat(o.Format, formatText, formatJSON, formatMarkdown); err != nil {
				return err
			}
			return runPlan(c.Context(), f, o)
		},
	}
	c.Flags().StringVar(&o.Out, "out", "", "also write the plan document to `FILE` (for apply FILE)")
	formatFlag(c, &o.Format, formatText, formatJSON, formatMarkdown)
	c.Flags().BoolVar(&o.DetailedExitcode, "detailed-exitcode", false, "exit 2 when the plan has changes")
	onlyFlag(c, f)
	envFlag(c, f)
	return c
}

func runPlan(ctx context.Context, f *Factory, o *planOptions) error {
	runs, err := f.environments(ctx, o.Paths)
	if err != nil {
		return err
	}
	if runs != nil {
		return runPlanEnvs(ctx, f, o, runs)
	}
	p, _, err := f.computePlan(ctx, o.Paths)
	if err != nil {
		return err
	}
	if o.Out != "" {
		if err := writePlanFile(o.Out, p); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "Saved the plan to %s: apply it with `natsplan apply %s`.\n", o.Out, o.Out)
	}
	if err := f.renderPlan(f.IO.Out, p, o.Format); err != nil {
		return err
	}
	switch {
	case p.HasErrors():
		return silentExit(exitError)
	case o.DetailedExitcode && p.HasChanges():
		return silentExit(exitChanges)
	}
	return nil
}

// runPlanEnvs plans every environment and prints them as one document.
func runPlanEnvs(ctx context.Context, f *Factory, o *planOptions, runs []*envRun) error {
	if err := forEachEnv(ctx, runs, func(ctx context.Context, r *envRun) error {
		p, _, err := r.F.computePlan(ctx, o.Paths)
		r.Plan = p
		return err
	}); err != nil {
		return err
	}
	m := multiPlan(runs)
	if o.Out != "" {
		data, err := planfile.MarshalMulti(m)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(o.Out, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "Saved the plans of %d environment(s) to %s: apply them with `natsplan apply %s`.\n", len(runs), o.Out, o.Out)
	}
	if err := f.renderMulti(f.IO.Out, m, o.Format); err != nil {
		return err
	}
	err := envExit(runs, func(r *envRun) bool { return o.DetailedExitcode && r.Plan.HasChanges() })
	if code, _ := exitCodeOf(err); code != exitError {
		for _, r := range runs {
			if r.Plan.HasErrors() {
				return silentExit(exitError)
			}
		}
	}
	return err
}

// multiPlan is the document of the runs' plans, in their order: a failed environment's
// is a plan with its error and no changes. Each carries its environment's name and
// connection settings (references, never a secret).
func multiPlan(runs []*envRun) *plan.Multi {
	version := buildVersion().Version
	m := &plan.Multi{FormatVersion: plan.FormatVersion, NatsplanVersion: version}
	for _, r := range runs {
		p := r.Plan
		if r.Err != nil || p == nil {
			p = &plan.Plan{FormatVersion: plan.FormatVersion, NatsplanVersion: version, Error: r.errText()}
			r.Plan = p
		}
		p.Environment = r.Name()
		conn := r.Env.Connection
		p.Connection = &conn
		m.Environments = append(m.Environments, p)
	}
	return m
}

// renderMulti writes a plan of several environments in format.
func (f *Factory) renderMulti(w io.Writer, m *plan.Multi, format Format) error {
	switch format {
	case formatJSON:
		return render.MultiJSON(w, m)
	case formatMarkdown:
		return render.MultiMarkdown(w, m)
	}
	return render.MultiText(w, m, render.TextOptions{Color: f.Color()})
}

func (f *Factory) renderPlan(w io.Writer, p *plan.Plan, format Format) error {
	switch format {
	case formatJSON:
		return render.JSON(w, p)
	case formatMarkdown:
		return render.Markdown(w, p)
	}
	return render.Text(w, p, render.TextOptions{Color: f.Color()})
}

// computePlan loads the files, reads the server, checks the target guard, and computes
// the plan: everything plan and drift share.
func (f *Factory) computePlan(ctx context.Context, paths []string) (*plan.Plan, *model.Model, error) {
	desired, live, err := f.loadAndRead(ctx, paths)
	if err != nil {
		return nil, nil, err
	}
	p, err := f.planWith(ctx, desired, live)
	return p, desired, err
}

// loadAndRead loads the files and reads the server at the same time: neither depends on
// the other.
func (f *Factory) loadAndRead(ctx context.Context, paths []string) (desired, live *model.Model, err error) {
	type read struct {
		live *model.Model
		err  error
	}
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan read, 1)
	go func() {
		live, err := f.readLive(readCtx)
		done <- read{live, err}
	}()
	desired, err = f.load(ctx, paths, true)
	if err != nil {
		cancel() // the diagnostics are what to fix: don't wait for a slow server
	}
	r := <-done
	if err != nil {
		return nil, nil, err
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return desired, r.live, nil
}

// planAgainst reads the server and computes the plan for desired.
func (f *Factory) planAgainst(ctx context.Context, desired *model.Model) (*plan.Plan, error) {
	live, err := f.readLive(ctx)
	if err != nil {
		return nil, err
	}
	return f.planWith(ctx, desired, live)
}

// readLive connects (on first use) and reads every stream and consumer.
func (f *Factory) readLive(ctx context.Context) (*model.Model, error) {
	sess, err := f.Session(ctx)
	if err != nil {
		return nil, err
	}
	return observe.Read(ctx, sess.JS, observe.Options{})
}

// planWith checks the target guard before trusting what was read, computes the plan,
// and proves its creates and updates against the server's own validation (preflight).
func (f *Factory) planWith(ctx context.Context, desired, live *model.Model) (*plan.Plan, error) {
	if err := plan.CheckTarget(desired.Expect, live.Target); err != nil {
		return nil, err
	}
	liveStreams := map[string]bool{}
	for name := range live.Streams {
		liveStreams[name] = true
	}
	diags := schema.CheckConsumerStreams(desired, liveStreams)
	f.printDiags(diags)
	if diags.HasErrors() {
		return nil, silentExit(exitError)
	}
	p, err := plan.ComputeContext(ctx, desired, live, plan.Options{Version: buildVersion().Version, Only: f.only})
	if err != nil {
		return nil, onlyUsage(err)
	}
	if err := f.preflight(ctx, p, desired, live); err != nil {
		return nil, err
	}
	return p, nil
}

// preflight sends the plan's creates and updates to a private server and adds its
// refusals to the plan's findings. A plan with nothing to check starts no server.
func (f *Factory) preflight(ctx context.Context, p *plan.Plan, desired, live *model.Model) error {
	res, err := preflight.Check(ctx, p, desired, live)
	if err != nil {
		return err
	}
	p.Findings = append(p.Findings, res.Findings...)
	if len(res.Unchecked) > 0 && !p.HasErrors() {
		fmt.Fprintf(f.IO.ErrOut, "Warning: %d change(s) could not be checked against the server's validation before apply:\n  %s\n",
			len(res.Unchecked), strings.Join(res.Unchecked, "\n  "))
	}
	return nil
}
