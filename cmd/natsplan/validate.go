package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/plan/render"
	"github.com/natsplan/natsplan/preflight"
	"github.com/natsplan/natsplan/schema"
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
With environment blocks, every environment's model is built and checked.
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
	f.loader = schema.NewLoader()
	envs, diags, err := f.loader.LoadEnvironments(ctx, o.Paths, schema.Vars{Args: f.Global.Vars, Files: f.Global.VarFiles}, nil)
	if err != nil {
		return err
	}
	for _, e := range envs {
		diags = append(diags, e.Diags...)
	}
	f.printDiags(diags)
	if diags.HasErrors() || len(envs) == 0 {
		return silentExit(exitError)
	}
	if envs[0].Model.Project == "" {
		// Any object declared without a natsplan block is a diagnostic above, so
		// nothing at all is declared: empty files, comments or variables only.
		return &exitErr{Code: exitError, Err: emptyConfigError(o.Paths, envs[0].Model.Files)}
	}
	if f.Global.Embedded != "" {
		warnEmbeddedMemory(f.IO.ErrOut, envs[0].Model)
	}
	// Each environment's model is validated; findings every environment has are
	// reported once, the others name their environment.
	each := make([][]*finding.Finding, len(envs))
	for i, e := range envs {
		if each[i], err = validateFindings(ctx, e.Model); err != nil {
			return err
		}
	}
	findings := envFindings(envs, each)
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
		desired := envs[0].Model
		if envs[0].Env == nil {
			fmt.Fprintf(f.IO.Out, "Valid: %d files, %d streams, %d consumers.\n", len(desired.Files), len(desired.Streams), len(desired.Consumers))
			return nil
		}
		parts := make([]string, len(envs))
		for i, e := range envs {
			parts[i] = fmt.Sprintf("%s (%d streams, %d consumers)", e.Env.Name, len(e.Model.Streams), len(e.Model.Consumers))
		}
		fmt.Fprintf(f.IO.Out, "Valid: %d files, %d environments: %s.\n", len(desired.Files), len(envs), strings.Join(parts, ", "))
	}
	return nil
}

// envFindings merges the findings of several environments: a finding every one of
// them has is kept once, the others name their environment in their message.
// Without environments (one model, Env nil) the findings are returned as they are.
func envFindings(envs []*schema.EnvModel, each [][]*finding.Finding) []*finding.Finding {
	if len(envs) == 1 {
		return each[0]
	}
	count := func(fs []*finding.Finding) map[finding.Finding]int {
		m := map[finding.Finding]int{}
		for _, x := range fs {
			m[*x]++
		}
		return m
	}
	shared := count(each[0])
	for _, fs := range each[1:] {
		c := count(fs)
		for k, n := range shared {
			shared[k] = min(n, c[k])
		}
	}
	var out, own []*finding.Finding
	for i, fs := range each {
		used := map[finding.Finding]int{}
		for _, x := range fs {
			if used[*x] < shared[*x] {
				used[*x]++
				if i == 0 {
					out = append(out, x)
				}
				continue
			}
			named := *x
			named.Message = fmt.Sprintf("In environment %q: %s", envs[i].Env.Name, x.Message)
			own = append(own, &named)
		}
	}
	return append(out, own...)
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
