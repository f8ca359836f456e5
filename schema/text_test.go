package schema

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestNotText: a file that is not UTF-8 text gives one error at its first bad byte,
// not one per stray byte, and the printed diagnostic echoes no raw bytes.
func TestNotText(t *testing.T) {
	t.Parallel()
	garbage := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.IntN(256))
	}
	garbage[0] = 0xff // so the first bad byte is known
	cases := []struct {
		name      string
		src       []byte
		line, col int
		what      string
	}{
		{"binary garbage", garbage, 1, 1, "the byte 0xff"},
		{"latin-1", []byte("stream \"ORDERS\" {\n  description = \"caf\xe9\"\n}\n"), 2, 21, "the byte 0xe9"},
		{"a NUL byte", []byte("stream \"ORDERS\" {\n\x00}\n"), 2, 1, "a NUL byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "x.hcl")
			if err := os.WriteFile(file, c.src, 0o600); err != nil {
				t.Fatal(err)
			}
			l := NewLoader()
			_, diags := l.Load([]string{file}, Vars{})
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %d:\n%s", len(diags), render(diags))
			}
			d := diags[0]
			if d.Severity != hcl.DiagError || d.Summary != "Not UTF-8 text" || !strings.Contains(d.Detail, c.what) {
				t.Errorf("diagnostic %s; %s", d.Summary, d.Detail)
			}
			if d.Subject == nil || d.Subject.Start.Line != c.line || d.Subject.Start.Column != c.col {
				t.Errorf("at %v, want line %d column %d", d.Subject, c.line, c.col)
			}
			var b strings.Builder
			WriteDiagnostics(&b, l.SourceFiles(), diags, false)
			if out := b.String(); !isPrintable(out) {
				t.Errorf("the diagnostic echoes raw bytes:\n%q", out)
			}
			if _, diags := Format(c.src, file); len(diags) != 1 {
				t.Errorf("fmt: want one diagnostic, got %d", len(diags))
			}
			// The same for a --var-file.
			conf := filepath.Join(t.TempDir(), "main.hcl")
			if err := os.WriteFile(conf, []byte("natsplan {\n  project = \"p\"\n}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, diags := Load([]string{conf}, Vars{Files: []string{file}}); len(diags) != 1 || diags[0].Summary != "Not UTF-8 text" {
				t.Errorf("--var-file: want one not-UTF-8 diagnostic, got:\n%s", render(diags))
			}
		})
	}
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r == '\ufffd' || r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return strings.ToValidUTF8(s, "") == s
}

// TestInvisibleCharacters: a raw invisible character in a name, a subject or any
// string is a warning naming its code point at its own line and column; the escape
// of the same character is visible and passes.
func TestInvisibleCharacters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		r    rune
		code string
	}{
		{"zero width space", '\u200b', "U+200B (ZERO WIDTH SPACE)"},
		{"no-break space", '\u00a0', "U+00A0 (NO-BREAK SPACE)"},
		{"narrow no-break space", '\u202f', "U+202F (NARROW NO-BREAK SPACE)"},
		{"word joiner", '\u2060', "U+2060 (WORD JOINER)"},
		{"byte order mark", '\ufeff', "U+FEFF (ZERO WIDTH NO-BREAK SPACE)"},
		{"soft hyphen", '\u00ad', "U+00AD (SOFT HYPHEN)"},
		{"right-to-left override", '\u202e', "U+202E (a Unicode format character)"},
		{"en space", '\u2002', "U+2002 (a Unicode space)"},
		{"hangul filler", '\u3164', "U+3164 (HANGUL FILLER)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, where := range []struct {
				src       string
				line, col int
			}{
				{fmt.Sprintf("natsplan { project = \"p\" }\nstream \"ORD%cERS\" {\n  subjects = [\"orders.>\"]\n}\n", c.r), 2, 12},
				{fmt.Sprintf("natsplan { project = \"p\" }\nstream \"ORDERS\" {\n  subjects = [\"orders.%c>\"]\n}\n", c.r), 3, 23},
			} {
				file := filepath.Join(t.TempDir(), "x.hcl")
				if err := os.WriteFile(file, []byte(where.src), 0o600); err != nil {
					t.Fatal(err)
				}
				_, diags := Load([]string{file}, Vars{})
				var warns hcl.Diagnostics
				for _, d := range diags {
					if d.Summary == "Invisible character" {
						warns = append(warns, d)
					}
				}
				if len(warns) != 1 {
					t.Fatalf("want one warning, got:\n%s", render(diags))
				}
				w := warns[0]
				if w.Severity != hcl.DiagWarning || !strings.Contains(w.Detail, c.code) {
					t.Errorf("warning %s; %s: want %s", w.Summary, w.Detail, c.code)
				}
				if w.Subject.Start.Line != where.line || w.Subject.Start.Column != where.col {
					t.Errorf("at %d:%d, want %d:%d", w.Subject.Start.Line, w.Subject.Start.Column, where.line, where.col)
				}
			}
		})
	}
	// A value in a --var-file is warned about the same way.
	dir := t.TempDir()
	conf, vars := filepath.Join(dir, "main.hcl"), filepath.Join(dir, "prod.tfvars")
	if err := os.WriteFile(conf, []byte("natsplan { project = \"p\" }\nvariable \"name\" { type = string }\nstream \"S\" {\n  subjects = [var.name]\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vars, []byte("name = \"orders\u200b.>\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, diags := Load([]string{conf}, Vars{Files: []string{vars}}); !strings.Contains(render(diags), "prod.tfvars:1:15: warning: Invisible character; U+200B") {
		t.Errorf("--var-file: no warning at its place:\n%s", render(diags))
	}
	// The escape is visible in review: no warning.
	file := filepath.Join(t.TempDir(), "x.hcl")
	src := "natsplan { project = \"p\" }\nstream \"ORDERS\" {\n  subjects    = [\"orders.>\"]\n  description = \"a\\u00a0b\"\n}\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, diags := Load([]string{file}, Vars{}); len(diags) > 0 {
		t.Errorf("an escape is warned about:\n%s", render(diags))
	}
}
