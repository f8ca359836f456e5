package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/emit"
	"github.com/natsplan/natsplan/model"
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
	imp, err := importFrom(ctx, f, o)
	if err != nil {
		return err
	}
	if o.Out == "-" || o.Out == "" {
		_, err = f.IO.Out.Write(imp.src)
		return err
	}
	if err := writeFileAtomic(o.Out, imp.src, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Wrote %s.\n", o.Out)
	return nil
}

// imported is one environment's import: the HCL, and the target it was read from.
type imported struct {
	// env is the environment's name; empty without environments.
	env    string
	target *model.Target
	src    []byte
	// where is what was tried when no server answered (for the heading); err is why
	// there is no HCL.
	where string
	err   error
}

// importFrom reads the server of f (one environment's factory) and writes the HCL
// that declares what it holds.
func importFrom(ctx context.Context, f *Factory, o *importOptions) (*imported, error) {
	sess, err := f.Session(ctx)
	if err != nil {
		return nil, err
	}
	live, err := observe.Read(ctx, sess.JS, observe.Options{})
	if err != nil {
		return nil, err
	}
	src, err := emit.Import(live, emit.Options{Streams: o.Streams, Project: o.Project})
	if err != nil {
		return nil, err
	}
	return &imported{target: live.Target, src: src}, nil
}

// writeImports writes the imports of several environments to w in the order given:
// each HCL document headed by a comment naming the environment and its target, a
// blank line between them. An environment that failed has its heading and, as a
// comment, why, so the output stays HCL.
func writeImports(w io.Writer, imps []*imported) error {
	var b bytes.Buffer
	for i, imp := range imps {
		if i > 0 {
			b.WriteString("\n")
		}
		id := imp.target.Identity()
		if id == "" {
			id = imp.where
		}
		if id == "" {
			id = "not reached"
		}
		fmt.Fprintf(&b, "# environment %q (%s)\n", imp.env, id)
		if imp.err != nil {
			fmt.Fprintf(&b, "# not imported: %s\n", strings.ReplaceAll(imp.err.Error(), "\n", "\n# "))
			continue
		}
		b.Write(imp.src)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// checkImportOut refuses --out FILE when more than one environment is selected: one
// file holds one environment's objects.
func checkImportOut(o *importOptions, selected []string) error {
	if len(selected) <= 1 || o.Out == "-" || o.Out == "" {
		return nil
	}
	return usageErr("--out %s writes one environment's objects, and %d are selected (%s): pick one with --env NAME, or leave out --out to write them all to stdout, each headed by its environment",
		o.Out, len(selected), strings.Join(selected, ", "))
}
