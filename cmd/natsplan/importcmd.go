package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/emit"
	"github.com/natsplan/natsplan/observe"
)

type importOptions struct {
	Streams []string
	Out     string
	Project string
}

func newCmdImport(f *Factory) *cobra.Command {
	o := &importOptions{}
	c := &cobra.Command{
		Use:   "import [--stream GLOB]... [--out FILE|-]",
		Short: "Write HCL for live objects, with only the values that differ from the defaults",
		Long: `import reads streams, consumers, KV buckets and object stores from the server and writes
the HCL that declares them, leaving out every value the server fills in by itself. Planning
the result shows no changes except adopting objects that carry no natsplan mark yet.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runImport(c.Context(), f, o)
		},
	}
	c.Flags().StringArrayVar(&o.Streams, "stream", nil, "import streams, buckets and their consumers matching `GLOB` (repeatable; default all)")
	c.Flags().StringVar(&o.Out, "out", "-", "write to `FILE` (- for stdout)")
	c.Flags().StringVar(&o.Project, "project", "", "project name for the natsplan block (default: the objects' owner, if they have one)")
	return c
}

func runImport(ctx context.Context, f *Factory, o *importOptions) error {
	sess, err := f.Session(ctx)
	if err != nil {
		return err
	}
	live, err := observe.Read(ctx, sess.JS, observe.Options{})
	if err != nil {
		return err
	}
	src, err := emit.Import(live, emit.Options{Streams: o.Streams, Project: o.Project})
	if err != nil {
		return err
	}
	if o.Out == "-" || o.Out == "" {
		_, err = f.IO.Out.Write(src)
		return err
	}
	if err := writeFileAtomic(o.Out, src, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Wrote %s.\n", o.Out)
	return nil
}
