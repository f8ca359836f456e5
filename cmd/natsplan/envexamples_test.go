package main

import (
	"os"
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

// TestEnvFilesOnlyCommands: partition and permissions answer from the files, and the
// answer may depend on an environment's values: examples/environments has 2 lanes in
// dev and 4 in staging. One answer is printed once when every environment agrees; when
// they differ, --env must pick one.
func TestEnvFilesOnlyCommands(t *testing.T) {
	dir := "../../examples/environments"
	// payments.a.paid lands in lane 0 with 2 lanes and with 4; payments.c.paid does not.
	code, out, errOut := envCLI(t, nil, "partition", "payments.a.paid", dir)
	if code != 0 || out != "0\n" {
		t.Fatalf("agreeing environments: exit %d, out %q\n%s", code, out, errOut)
	}
	code, out, errOut = envCLI(t, nil, "partition", "payments.c.paid", dir)
	if code != exitError || out != "" || !strings.Contains(errOut, "differs between environments (dev | staging): pick one with --env NAME") {
		t.Fatalf("differing environments: exit %d, out %q\n%s", code, out, errOut)
	}
	for env, want := range map[string]string{"dev": "0\n", "staging": "2\n"} {
		if code, out, errOut = envCLI(t, nil, "partition", "payments.c.paid", "--env", env, dir); code != 0 || out != want {
			t.Errorf("--env %s: exit %d, out %q, want %q\n%s", env, code, out, want, errOut)
		}
	}
	// Permissions name every lane: 2 in dev, 4 in staging.
	code, out, errOut = envCLI(t, nil, "permissions", dir)
	if code != exitError || !strings.Contains(errOut, "permissions differs between environments") {
		t.Fatalf("permissions across environments: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = envCLI(t, nil, "permissions", "--env", "staging", dir)
	if code != 0 || !strings.Contains(out, "settlement-3") {
		t.Fatalf("permissions --env staging: exit %d\n%s\n%s", code, out, errOut)
	}
	// The JetStream domain of an environment decides the API subjects.
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "p.hcl"), []byte(`natsplan {
  project = "p"
}
environment "leaf" {
  servers   = "nats://127.0.0.1:4222"
  js_domain = "leaf1"
}
stream "S" {
  subjects = ["s.>"]
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = envCLI(t, nil, "permissions", "--service", "natsplan-plan", cfg)
	if code != 0 || !strings.Contains(out, "$JS.leaf1.API.") {
		t.Fatalf("permissions in a domain: exit %d\n%s\n%s", code, out, errOut)
	}
}
