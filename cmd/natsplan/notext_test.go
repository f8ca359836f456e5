package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestNotText: binary garbage named .hcl is one "not UTF-8 text" error in validate,
// plan and fmt, and no raw byte of it reaches the terminal.
func TestNotText(t *testing.T) {
	dir := t.TempDir()
	garbage := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range garbage {
		garbage[i] = byte(rng.IntN(256))
	}
	file := filepath.Join(dir, "garbage.hcl")
	if err := os.WriteFile(file, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", file}, {"fmt", file}, {"fmt", "--check", dir}} {
		code, out, errOut := cli(t, "nats://127.0.0.1:1", args...)
		if code != exitError || out != "" {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
		if n := strings.Count(errOut, "error"); n != 1 || !strings.Contains(errOut, "Not UTF-8 text") {
			t.Errorf("%v: want one not-UTF-8 error, got %d errors:\n%s", args, n, errOut)
		}
		if !utf8.ValidString(errOut) || strings.ContainsFunc(errOut, func(r rune) bool { return r < 0x20 && r != '\n' }) {
			t.Errorf("%v: raw bytes on stderr: %q", args, errOut)
		}
	}
}
