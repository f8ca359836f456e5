package main

import (
	"sort"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/internal/connect"
	"github.com/natsplan/natsplan/schema"
)

// completeContexts offers the saved nats contexts for --context.
func (f *Factory) completeContexts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	o := connect.Options{}
	o.FromEnv(f.getenv)
	return connect.ContextNames(o.ConfigDir), cobra.ShellCompDirectiveNoFileComp
}

// completeMappings offers the subject_mapping names of the configuration the command
// line names so far (PATH arguments after SUBJECT, else the current folder). A
// configuration that does not load offers none, and prints nothing.
func completeMappings(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	var paths []string
	if len(args) > 1 {
		paths = args[1:]
	}
	m, diags := schema.Load(pathsOrDefault(paths), schema.Vars{})
	if m == nil || diags.HasErrors() {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(m.Mappings))
	for name := range m.Mappings {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, cobra.ShellCompDirectiveNoFileComp
}
