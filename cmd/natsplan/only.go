package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// onlyFlag adds --only to plan or apply: every plan the command computes (apply's
// second one under the lock too) keeps only the matched changes and what they need.
func onlyFlag(c *cobra.Command, f *Factory) {
	c.Flags().StringArrayVar(&f.only, "only", nil, "plan only the objects whose `ADDRESS` matches and what they need "+
		"(repeatable; * matches any run of characters, dots included, ? one): a partial plan")
	c.RegisterFlagCompletionFunc("only", completeOnly)
}

// completeOnly offers the addresses of the objects the configuration on the command
// line declares (the current folder without PATH arguments); none for a saved plan or
// a configuration that does not load.
func completeOnly(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if planFileArg(args) != "" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	m, diags := schema.Load(pathsOrDefault(args), schema.Vars{})
	if m == nil || diags.HasErrors() {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return plan.Addresses(m, model.New()), cobra.ShellCompDirectiveNoFileComp
}

// onlyUsage turns a --only pattern that matches nothing into a usage error.
func onlyUsage(err error) error {
	if oe := (*plan.OnlyError)(nil); errors.As(err, &oe) {
		return usageErr("%s", oe.Error())
	}
	return err
}

// onlyWithSavedPlan refuses --only with a saved plan, which is applied exactly as
// reviewed.
func onlyWithSavedPlan(f *Factory, file string) error {
	if len(f.only) == 0 {
		return nil
	}
	return usageErr("--only can not be used with a saved plan: %s is applied exactly as it was reviewed; "+
		"to apply part of it, plan again with --only and --out, review that plan, and apply it", file)
}
