package schema

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// checkText refuses a file that is not text with one diagnostic at the first bad
// byte, instead of one syntax error per stray byte of a binary file.
func checkText(src []byte, filename string) hcl.Diagnostics {
	bad := -1
	what := ""
	if i := bytes.IndexByte(src, 0); i >= 0 {
		bad, what = i, "a NUL byte"
	}
	for i := 0; i < len(src) && (bad < 0 || i < bad); {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n <= 1 {
			bad, what = i, fmt.Sprintf("the byte 0x%02x", src[i])
			break
		}
		i += n
	}
	if bad < 0 {
		return nil
	}
	pos := posAt(src, bad)
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Not UTF-8 text",
		Detail: fmt.Sprintf("%s is not a UTF-8 text file (%s at line %d, column %d): natsplan reads .hcl files as UTF-8 text. Is it the file you meant?",
			filename, what, pos.Line, pos.Column),
		Subject: &hcl.Range{Filename: filename, Start: pos, End: hcl.Pos{Line: pos.Line, Column: pos.Column + 1, Byte: pos.Byte + 1}},
	}}
}

// posAt is the position of byte offset off in src; columns count characters.
func posAt(src []byte, off int) hcl.Pos {
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return hcl.Pos{Line: line, Column: 1 + utf8.RuneCount(src[start:off]), Byte: off}
}

// invisibleChars warns about characters that look like nothing, or like a plain
// space, inside names, strings and identifiers: "ORDERS\u200b" and "ORDERS" are two
// names that read the same in review. An escape ("\u200b") is visible and is not
// warned about; only the raw character is.
func invisibleChars(toks hclsyntax.Tokens) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenQuotedLit, hclsyntax.TokenStringLit, hclsyntax.TokenIdent:
		default:
			continue
		}
		col := t.Range.Start.Column
		for i, r := range string(t.Bytes) {
			if name, ok := invisible(r); ok {
				pos := hcl.Pos{Line: t.Range.Start.Line, Column: col, Byte: t.Range.Start.Byte + i}
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  "Invisible character",
					Detail: fmt.Sprintf("U+%04X (%s) in %q looks like nothing in review, so this name reads like another: delete it, or write it as the escape \\u%04X if it is meant.",
						r, name, t.Bytes, r),
					Subject: &hcl.Range{Filename: t.Range.Filename, Start: pos, End: hcl.Pos{Line: pos.Line, Column: col + 1, Byte: pos.Byte + utf8.RuneLen(r)}},
				})
			}
			if r == '\n' {
				col = 1 // heredocs span lines; no other token does
			} else {
				col++
			}
		}
	}
	return diags
}

// invisibleNames names the invisible characters met most often (pasted from chat,
// documents or web pages); the rest are named by their class.
var invisibleNames = map[rune]string{
	0x00A0: "NO-BREAK SPACE",
	0x00AD: "SOFT HYPHEN",
	0x180E: "MONGOLIAN VOWEL SEPARATOR",
	0x200B: "ZERO WIDTH SPACE",
	0x200C: "ZERO WIDTH NON-JOINER",
	0x200D: "ZERO WIDTH JOINER",
	0x200E: "LEFT-TO-RIGHT MARK",
	0x200F: "RIGHT-TO-LEFT MARK",
	0x202F: "NARROW NO-BREAK SPACE",
	0x2060: "WORD JOINER",
	0x3000: "IDEOGRAPHIC SPACE",
	0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
	0x115F: "HANGUL CHOSEONG FILLER",
	0x1160: "HANGUL JUNGSEONG FILLER",
	0x3164: "HANGUL FILLER",
	0xFFA0: "HALFWIDTH HANGUL FILLER",
}

// invisible reports whether r shows as nothing or as a plain space, and its name:
// Unicode format characters (Cf), spaces other than the ASCII one (Zs, Zl, Zp),
// control characters other than tab and line ends, and the fillers.
func invisible(r rune) (string, bool) {
	if name, ok := invisibleNames[r]; ok {
		return name, true
	}
	switch {
	case r == ' ' || r == '\t' || r == '\n' || r == '\r':
		return "", false
	case unicode.Is(unicode.Cf, r):
		return "a Unicode format character", true
	case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		return "a Unicode space", true
	case unicode.IsControl(r):
		return "a control character", true
	}
	return "", false
}
