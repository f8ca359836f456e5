package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testConfigs lists every configuration under testdata, valid and invalid.
func testConfigs(t testing.TB) []string {
	t.Helper()
	valid, err := filepath.Glob("testdata/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	invalid, err := filepath.Glob("testdata/invalid/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return append(valid, invalid...)
}

func TestFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
	}{
		{"aligns and indents",
			"stream \"S\" {\nsubjects = [\"a.>\"]\n    max_age=\"1h\"\n}\n\n\n",
			"stream \"S\" {\n  subjects = [\"a.>\"]\n  max_age  = \"1h\"\n}\n"},
		{"adds final newline", "natsplan {\n  project = \"p\"\n}", "natsplan {\n  project = \"p\"\n}\n"},
		{"keeps comments and order", "# top\nkv \"b\" {\n  ttl = \"1h\" # one hour\n  history = 5\n}\n",
			"# top\nkv \"b\" {\n  ttl     = \"1h\" # one hour\n  history = 5\n}\n"},
		{"one-line block with commas", "kv \"s\"   { history = 5, ttl = \"1h\" }\n", "kv \"s\" { history = 5, ttl = \"1h\" }\n"},
		{"empty", "\n\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, diags := Format([]byte(c.in), "x.hcl")
			if diags.HasErrors() {
				t.Fatal(render(diags))
			}
			if string(got) != c.want {
				t.Errorf("Format =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
	if _, diags := Format([]byte("stream \"S\" {\n"), "bad.hcl"); !diags.HasErrors() {
		t.Error("invalid HCL formatted without diagnostics")
	}
}

// TestFormatIdempotent formats every test configuration twice.
func TestFormatIdempotent(t *testing.T) {
	t.Parallel()
	for _, f := range testConfigs(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		once, diags := Format(src, f)
		if diags.HasErrors() {
			if strings.Contains(f, "syntax_error") {
				continue
			}
			t.Fatalf("%s: %s", f, render(diags))
		}
		twice, _ := Format(once, f)
		if string(once) != string(twice) {
			t.Errorf("%s: formatting is not idempotent:\n%s\n---\n%s", f, once, twice)
		}
	}
}
