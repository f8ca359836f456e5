package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/plan/render"
	"github.com/natsplan/natsplan/preflight"
)

type validateOptions struct {
	Paths  []string
	Format Format
}

func newCmdValidate(f *Factory) *cobra.Command {
	o := &validateOptions{}
	c := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Parse, type-check and run every static invariant; no server needed",
		Long: `validate reads the files, checks every attribute, and runs the invariants that need no
server (the concurrency rules, partitioning, overlapping subjects among declared streams),
and sends every declared stream and consumer, as a create, to a private in-process
nats-server, so that what the server's own validation refuses is an error here too.
It exits 0 when the configuration is valid and 1 when any error was found.`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Paths = pathsOrDefault(args)
			if err := checkFormat(o.Format, formatText, formatJSON); err != nil {
				return err
			}
			return runValidate(c.Context(), f, o)
		},
	}
	formatFlag(c, &o.Format, formatText, formatJSON)
	return c
}

func runValidate(ctx context.Context, f *Factory, o *validateOptions) error {
	desired, err := f.Load(ctx, o.Paths)
	if err != nil {
		return err
	}
	findings, err := validateFindings(ctx, desired)
	if err != nil {
		return err
	}
	if o.Format == formatJSON {
		if err := render.FindingsJSON(f.IO.Out, findings); err != nil {
			return err
		}
	} else if err := render.Findings(f.IO.ErrOut, findings, f.ErrColor()); err != nil {
		return err
	}
	if finding.HasErrors(findings) {
		return silentExit(exitError)
	}
	if o.Format != formatJSON {
		fmt.Fprintf(f.IO.Out, "Valid: %d files, %d streams, %d consumers.\n", len(desired.Files), len(desired.Streams), len(desired.Consumers))
	}
	return nil
}

// validateFindings plans every declared object as a create on an empty account, as
// plan.Validate does, and proves those creates against the server's own validation on
// a private server: with no target there are no account limits or cluster size to
// check, and nothing live to recreate.
func validateFindings(ctx context.Context, desired *model.Model) ([]*finding.Finding, error) {
	empty := model.New()
	p, err := plan.ComputeContext(ctx, desired, empty, plan.Options{})
	if err != nil {
		return nil, err
	}
	res, err := preflight.Check(ctx, p, desired, empty)
	if err != nil {
		return nil, err
	}
	return append(p.Findings, res.Findings...), nil
}
