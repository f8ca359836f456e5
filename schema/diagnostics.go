package schema

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// ANSI colours for WriteDiagnostics.
const (
	colorRed    = "\x1b[31m"
	colorYellow = "\x1b[33m"
	colorBold   = "\x1b[1m"
	colorReset  = "\x1b[0m"
)

// WriteDiagnostics prints diags as `file:line:col: error: summary; detail`, followed
// by the source line and a caret under the offending column. files supplies the
// source (Loader.SourceFiles); a file missing from it is read from disk, and a
// diagnostic without a position prints as `error: summary; detail`. A diagnostic
// about a secret written in a file prints its position only, never the line.
func WriteDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, color bool) {
	cache := map[string][][]byte{}
	lines := func(name string) [][]byte {
		if l, ok := cache[name]; ok {
			return l
		}
		var src []byte
		if f, ok := files[name]; ok && f != nil {
			src = f.Bytes
		} else if b, err := os.ReadFile(name); err == nil {
			src = b
		}
		cache[name] = bytes.Split(src, []byte("\n"))
		return cache[name]
	}
	for _, d := range diags {
		sev, col := "error", colorRed
		if d.Severity == hcl.DiagWarning {
			sev, col = "warning", colorYellow
		}
		if color {
			sev = col + colorBold + sev + colorReset
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		if d.Subject == nil || d.Subject.Filename == "" {
			fmt.Fprintf(w, "%s: %s\n", sev, msg)
			continue
		}
		r := *d.Subject
		if r.Start.Line == 0 {
			fmt.Fprintf(w, "%s: %s: %s\n", r.Filename, sev, msg)
			continue
		}
		fmt.Fprintf(w, "%s:%d:%d: %s: %s\n", r.Filename, r.Start.Line, r.Start.Column, sev, msg)
		if _, secret := d.Extra.(secretSource); secret {
			continue // the line holds a secret: its position is enough
		}
		src := lines(r.Filename)
		if r.Start.Line > len(src) {
			continue
		}
		line := printable(strings.TrimRight(string(src[r.Start.Line-1]), "\r"))
		fmt.Fprintf(w, "  %s\n  %s\n", line, caret(line, r))
	}
}

// printable is a source line safe to echo to a terminal: bytes that are not UTF-8
// and control characters (a binary file, an escape sequence) become U+FFFD, one for
// one, so the caret below still lines up.
func printable(line string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, line) // ranging over a string yields one RuneError per byte that is not UTF-8
}

// caret underlines the range on its first line, keeping tabs so it lines up.
func caret(line string, r hcl.Range) string {
	var b strings.Builder
	start := r.Start.Column - 1
	for i, ch := range []rune(line) {
		if i >= start {
			break
		}
		if ch == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	n := 1
	if r.End.Line == r.Start.Line && r.End.Column-r.Start.Column > 1 {
		n = r.End.Column - r.Start.Column
	}
	b.WriteString(strings.Repeat("^", n))
	return b.String()
}
