package schema

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestInvalid loads every file in testdata/invalid alone. Each marks its offending
// line with "# ERROR: <text>"; the load must give exactly one error, on that line,
// whose "summary; detail" contains the text.
func TestInvalid(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/invalid/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 25 {
		t.Fatalf("only %d invalid cases", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".hcl"), func(t *testing.T) {
			line, want := errorMarker(t, file)
			_, diags := Load([]string{file}, Vars{})
			var errs hcl.Diagnostics
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("want exactly one error, got %d:\n%s", len(errs), render(diags))
			}
			d := errs[0]
			if d.Subject == nil || d.Subject.Start.Line != line || d.Subject.Filename != file {
				t.Errorf("error at %v, want %s:%d:\n%s", d.Subject, file, line, render(diags))
			}
			if got := d.Summary + "; " + d.Detail; !strings.Contains(got, want) {
				t.Errorf("error %q does not contain %q", got, want)
			}
		})
	}
}

// errorMarker finds the single "# ERROR:" line of file.
func errorMarker(t *testing.T, file string) (int, string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line, found, want := 0, 0, ""
	for sc.Scan() {
		line++
		if _, text, ok := strings.Cut(sc.Text(), "# ERROR: "); ok {
			found, want = line, strings.TrimSpace(text)
		}
	}
	if found == 0 {
		t.Fatalf("%s has no # ERROR: marker", file)
	}
	return found, want
}

func render(diags hcl.Diagnostics) string {
	var b strings.Builder
	WriteDiagnostics(&b, nil, diags, false)
	return b.String()
}
