package main

import (
	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/planfile"
)

func newCmdShow(f *Factory) *cobra.Command {
	var format Format
	c := &cobra.Command{
		Use:   "show PLANFILE",
		Short: "Render a saved plan",
		Long: `show renders a plan written by 'plan --out FILE' as text, JSON or markdown, the plan of
one server or the plans of several environments alike. It needs no server.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, formatText, formatJSON, formatMarkdown); err != nil {
				return err
			}
			p, m, err := planfile.ReadFileAny(args[0])
			if err != nil {
				return err
			}
			if m != nil {
				return f.renderMulti(f.IO.Out, m, format)
			}
			return f.renderPlan(f.IO.Out, p, format)
		},
	}
	formatFlag(c, &format, formatText, formatJSON, formatMarkdown)
	return c
}
