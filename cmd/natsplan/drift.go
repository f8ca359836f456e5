package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/plan/render"
)

type driftOptions struct {
	Paths       []string
	Format      Format
	ShowForeign bool
}

func newCmdDrift(f *Factory) *cobra.Command {
	o := &driftOptions{}
	c := &cobra.Command{
		Use:   "drift [PATH...]",
		Short: "Report what changed on the server outside natsplan",
		Long: `drift compares the server with the files and reports owned objects whose config
changed (changed), declared objects gone from the server (missing), owned objects no
longer declared (orphaned), and objects neither declared nor owned (unmanaged; hide the
ones your team knows about with ignore = [...] in the natsplan block). Objects marked
by another project are that project's, not drift: they are counted, and listed with
--show-foreign. It changes nothing.

With environment blocks (docs/environments.md), drift compares every environment, or
those --env selects, each with its own server, and reports one section per environment.

Exit codes: 0 in sync; 2 drift found (in any environment); 1 error (in any environment).`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Paths = pathsOrDefault(args)
			if err := checkFormat(o.Format, formatText, formatJSON, formatMarkdown); err != nil {
				return err
			}
			return runDrift(c.Context(), f, o)
		},
	}
	formatFlag(c, &o.Format, formatText, formatJSON, formatMarkdown)
	c.Flags().BoolVar(&o.ShowForeign, "show-foreign", false, "also list the objects other projects own (never drift)")
	envFlag(c, f)
	return c
}

func runDrift(ctx context.Context, f *Factory, o *driftOptions) error {
	runs, err := f.environments(ctx, o.Paths)
	if err != nil {
		return err
	}
	if runs != nil {
		return runDriftEnvs(ctx, f, o, runs)
	}
	p, _, err := f.computePlan(ctx, o.Paths)
	if err != nil {
		return err
	}
	r := plan.Drifted(p, o.ShowForeign)
	switch o.Format {
	case formatJSON:
		err = render.DriftJSON(f.IO.Out, r)
	case formatMarkdown:
		err = render.DriftMarkdown(f.IO.Out, r)
	default:
		err = render.DriftText(f.IO.Out, r)
	}
	if err != nil {
		return err
	}
	errs := finding.Errors(p.Findings)
	if len(errs) > 0 {
		if err := render.Findings(f.IO.ErrOut, errs, f.ErrColor()); err != nil {
			return err
		}
	}
	switch {
	case !r.InSync():
		// A difference the plan can not undo (a blocked change) is drift all the same.
		if len(errs) > 0 {
			fmt.Fprintf(f.IO.ErrOut, "The plan also has %d error(s), listed above: apply refuses it until they are fixed (see natsplan plan).\n", len(errs))
		}
		return silentExit(exitChanges)
	case len(errs) > 0:
		// An object the plan could not compare (another project's, offline) may hide
		// drift: the report is incomplete.
		return &exitErr{Code: exitError, Err: fmt.Errorf("the plan has %d error(s), listed above, so the drift report is incomplete: fix them, or see natsplan plan", len(errs))}
	}
	return nil
}

// runDriftEnvs compares every environment and reports them as one document. An
// environment whose plan has errors and shows no drift failed: its report is
// incomplete; with drift, the errors are reported on its stderr lines.
func runDriftEnvs(ctx context.Context, f *Factory, o *driftOptions, runs []*envRun) error {
	reports := make(map[*envRun]*plan.DriftReport, len(runs))
	var mu sync.Mutex
	if err := forEachEnv(ctx, runs, func(ctx context.Context, r *envRun) error {
		p, _, err := r.F.computePlan(ctx, o.Paths)
		if err != nil {
			return err
		}
		r.Plan = p
		d := plan.Drifted(p, o.ShowForeign)
		mu.Lock()
		reports[r] = d
		mu.Unlock()
		errs := finding.Errors(p.Findings)
		if len(errs) == 0 {
			return nil
		}
		if err := render.Findings(r.F.IO.ErrOut, errs, false); err != nil {
			return err
		}
		if d.InSync() {
			return fmt.Errorf("the plan has %d error(s), listed on stderr, so the drift report is incomplete: fix them, or see natsplan plan --env %s", len(errs), r.Name())
		}
		fmt.Fprintf(r.F.IO.ErrOut, "The plan also has %d error(s), listed above: apply refuses it until they are fixed (see natsplan plan).\n", len(errs))
		return nil
	}); err != nil {
		return err
	}
	ds := make([]*render.EnvDrift, len(runs))
	for i, r := range runs {
		ds[i] = &render.EnvDrift{Environment: r.Name(), Error: r.errText(), DriftReport: reports[r]}
	}
	var err error
	switch o.Format {
	case formatJSON:
		err = render.DriftMultiJSON(f.IO.Out, ds)
	case formatMarkdown:
		err = render.DriftMultiMarkdown(f.IO.Out, ds)
	default:
		err = render.DriftMultiText(f.IO.Out, ds)
	}
	if err != nil {
		return err
	}
	return envExit(runs, func(r *envRun) bool { return reports[r] != nil && !reports[r].InSync() })
}
