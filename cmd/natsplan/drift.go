package main

import (
	"context"
	"fmt"

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

Exit codes: 0 in sync; 2 drift found; 1 error.`,
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
	return c
}

func runDrift(ctx context.Context, f *Factory, o *driftOptions) error {
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
