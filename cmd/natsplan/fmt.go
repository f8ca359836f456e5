package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/schema"
)

type fmtOptions struct {
	Paths []string
	Check bool
	Diff  bool
}

func newCmdFmt(f *Factory) *cobra.Command {
	o := &fmtOptions{}
	c := &cobra.Command{
		Use:   "fmt [--check] [--diff] [PATH...]",
		Short: "Rewrite files in the canonical format",
		Long: `fmt rewrites every .hcl file in the canonical format. With --check it changes nothing
and exits 3 when a file would change (for CI); --diff prints what would change.`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Paths = pathsOrDefault(args)
			return runFmt(f, o)
		},
	}
	c.Flags().BoolVar(&o.Check, "check", false, "change nothing; exit 3 when a file is not formatted")
	c.Flags().BoolVar(&o.Diff, "diff", false, "print the changes as a unified diff")
	return c
}

func runFmt(f *Factory, o *fmtOptions) error {
	files, skipped, err := schema.Files(o.Paths)
	if err != nil {
		return err
	}
	f.printDiags(schema.SkippedDiagnostics(skipped))
	type result struct {
		name     string
		src, out []byte
		mode     os.FileMode
	}
	var results []result
	failed := false
	// Format everything before writing anything, so bad input never leaves a partial rewrite.
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		out, diags := schema.Format(src, name)
		if diags.HasErrors() {
			f.printDiags(diags)
			failed = true
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return err
		}
		results = append(results, result{name, src, out, st.Mode().Perm()})
	}
	if failed {
		return silentExit(exitError)
	}
	changed := 0
	for _, r := range results {
		if bytes.Equal(r.src, r.out) {
			continue
		}
		changed++
		if o.Diff {
			if _, err := f.IO.Out.Write(diff.Diff(r.name, r.src, r.name+" (formatted)", r.out)); err != nil {
				return fmt.Errorf("write the diff of %s: %w", r.name, err)
			}
		} else if o.Check {
			fmt.Fprintln(f.IO.Out, r.name)
		}
		if o.Check {
			continue
		}
		if err := writeFileAtomic(r.name, r.out, r.mode); err != nil {
			return err
		}
		if !o.Diff {
			fmt.Fprintln(f.IO.Out, r.name)
		}
	}
	if o.Check && changed > 0 {
		return silentExit(exitFormat)
	}
	return nil
}

// writeFileAtomic replaces name with data through a temporary file in the same folder,
// so a crash never leaves a half-written file. A symbolic link is kept: the file it
// points to is the one replaced. Errors name the path the user gave, not the
// temporary file.
func writeFileAtomic(name string, data []byte, mode os.FileMode) error {
	if err := replaceFile(name, data, mode); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("write %s: the folder %s does not exist: create it, or give another path", name, filepath.Dir(name))
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func replaceFile(name string, data []byte, mode os.FileMode) error {
	if target, err := filepath.EvalSymlinks(name); err == nil {
		name = target
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
