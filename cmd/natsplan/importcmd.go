package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/emit"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
)

type importOptions struct {
	// Paths are the files whose environment blocks say where to import from; none
	// (and no --env): the server the connection flags name.
	Paths   []string
	Streams []string
	Out     string
	Project string
}

func newCmdImport(f *Factory) *cobra.Command {
	o := &importOptions{}
	c := &cobra.Command{
		Use:   "import [PATH...] [--env NAME]... [--stream GLOB]... [--out FILE|-]",
		Short: "Write HCL for live objects, with only the values that differ from the defaults",
		Long: `import reads streams, consumers, KV buckets and object stores from the server and writes
the HCL that declares them, leaving out every value the server fills in by itself. Planning
the result shows no changes except adopting objects that carry no natsplan mark yet.

With PATHs (or --env), import reads the files only for their environment blocks
(docs/environments.md) and imports from every environment, or those --env selects: one
HCL document per environment on stdout, each headed by a comment naming it. --out FILE
then takes exactly one environment.`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Paths = args
			return runImport(c.Context(), f, o)
		},
	}
	c.Flags().StringArrayVar(&o.Streams, "stream", nil, "import streams, buckets and their consumers matching `GLOB` (repeatable; default all)")
	c.Flags().StringVar(&o.Out, "out", "-", "write to `FILE` (- for stdout)")
	c.Flags().StringVar(&o.Project, "project", "", "project name for the natsplan block (default: the objects' owner, if they have one)")
	envFlag(c, f)
	return c
}

func runImport(ctx context.Context, f *Factory, o *importOptions) error {
	if len(o.Paths) > 0 || len(f.Global.Envs) > 0 {
		paths := pathsOrDefault(o.Paths)
		runs, err := f.environments(ctx, paths)
		if err != nil {
			return err
		}
		if runs == nil {
			// Load says what is wrong with the files, if anything.
			if _, err := f.Load(ctx, paths); err != nil {
				return err
			}
			return usageErr("%s declares no environment blocks, and import reads files only for them: drop the PATHs to import from the server the connection flags name",
				strings.Join(paths, ", "))
		}
		return runImportEnvs(ctx, f, o, runs)
	}
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
	// err is why there is no HCL.
	err error
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

// runImportEnvs imports from several environments in parallel, each on its own
// connection, and writes their HCL to stdout in declaration order, each headed by its
// environment; with one environment, --out FILE writes its HCL alone, as without
// environments. An environment that could not be read makes the command exit 1 after
// the others are written.
func runImportEnvs(ctx context.Context, f *Factory, o *importOptions, runs []*envRun) error {
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.Name()
	}
	if err := checkImportOut(o, names); err != nil {
		return err
	}
	imps := make(map[*envRun]*imported, len(runs))
	var mu sync.Mutex
	if err := forEachEnv(ctx, runs, func(ctx context.Context, r *envRun) error {
		imp, err := importFrom(ctx, r.F, o)
		if err != nil {
			return err
		}
		mu.Lock()
		imps[r] = imp
		mu.Unlock()
		return nil
	}); err != nil {
		return err
	}
	list := make([]*imported, len(runs))
	for i, r := range runs {
		list[i] = imps[r]
		if r.Err != nil {
			list[i] = &imported{err: errors.New(r.errText())}
		}
		list[i].env = r.Name()
	}
	if o.Out != "-" && o.Out != "" {
		// checkImportOut let exactly one environment through.
		if runs[0].Err != nil {
			return envExit(runs, nil)
		}
		if err := writeFileAtomic(o.Out, list[0].src, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "Wrote %s (environment %s).\n", o.Out, runs[0].Name())
		return nil
	}
	if err := writeImports(f.IO.Out, list); err != nil {
		return err
	}
	return envExit(runs, nil)
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
			id = "not reached"
		}
		fmt.Fprintf(&b, "# environment %q (%s)\n", imp.env, id)
		if imp.err != nil {
			fmt.Fprintf(&b, "# not imported: %s\n", strings.ReplaceAll(imp.err.Error(), "\n", "\n# "))
			continue
		}
		b.Write(imp.src)
		if len(imp.src) > 0 && imp.src[len(imp.src)-1] != '\n' {
			b.WriteByte('\n') // an import of nothing is one comment line without one
		}
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
