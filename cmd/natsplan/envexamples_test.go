package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvExamplesConverge applies every example with environment blocks the way its
// comment and the README run it, with --embedded (one in-process server per
// environment), then requires that plan finds nothing to change in any environment
// and that a second apply has nothing to do.
func TestEnvExamplesConverge(t *testing.T) {
	dirs := envExampleDirs(t)
	if len(dirs) == 0 {
		t.Fatal("no example with environment blocks: examples/environments is missing")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			store := t.TempDir()
			code, out, errOut := envCLI(t, nil, "apply", "--auto-approve", "--embedded", store, dir)
			if code != 0 || !strings.Contains(out, "Apply complete") {
				t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
			}
			code, out, errOut = envCLI(t, nil, "plan", "--detailed-exitcode", "--embedded", store, dir)
			if code != 0 {
				t.Fatalf("plan after apply: exit %d, want 0 (no changes in any environment)\n%s\n%s", code, out, errOut)
			}
			code, out, errOut = envCLI(t, nil, "apply", "--auto-approve", "--embedded", store, dir)
			if code != 0 || strings.Contains(out, "Apply complete") {
				t.Fatalf("second apply: exit %d, want nothing to do\n%s\n%s", code, out, errOut)
			}
		})
	}
}
