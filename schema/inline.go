package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// inlineBodies maps a block written on one line with comma-separated arguments,
// `workers { count = 4, fetch_batch = 50 }`, to its body read as an object. Plain
// HCL allows only one argument in a one-line block; natsplan also accepts this
// form, which the design's examples use.
type inlineBodies map[*hclsyntax.Block]*hclsyntax.ObjectConsExpr

// parseConfig parses a configuration file, accepting one-line blocks with commas.
// It keeps every position exact: the bodies of such blocks are blanked with spaces
// for the HCL parser and parsed separately as object expressions at their place.
// With evaluate set, number literals too large to evaluate are refused (see checkNumbers).
func parseConfig(src []byte, filename string, inline inlineBodies, evaluate bool) (*hcl.File, hcl.Diagnostics) {
	if diags := checkText(src, filename); diags.HasErrors() {
		return nil, diags
	}
	// Most files are plain HCL, and lexing them first costs as much as parsing them.
	// HCL itself refuses a body with commas, so a file that parses has no one-line
	// block with commas; a file of printable ASCII with no digit followed by e or E
	// has no exponent to refuse and no invisible character to warn about. Anything
	// else takes the long way.
	if !evaluate || plainText(src) {
		if f, diags, ok := parseInChunks(src, filename); ok {
			return f, diags
		}
		if f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos); !diags.HasErrors() {
			return f, diags
		}
	}
	return parseTokens(src, filename, inline, evaluate)
}

// parseTokens is parseConfig without the shortcut: lex, check the tokens, then parse.
func parseTokens(src []byte, filename string, inline inlineBodies, evaluate bool) (*hcl.File, hcl.Diagnostics) {
	toks, diags := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	var warnings hcl.Diagnostics
	if evaluate && !diags.HasErrors() {
		if diags := checkNumbers(toks); diags.HasErrors() {
			return &hcl.File{Bytes: src, Body: hcl.EmptyBody()}, diags
		}
		warnings = invisibleChars(toks)
	}
	f, diags := parseLexed(src, filename, inline, toks, diags)
	return f, append(diags, warnings...)
}

// parseLexed is parseConfig after the checks of the tokens.
func parseLexed(src []byte, filename string, inline inlineBodies, toks hclsyntax.Tokens, diags hcl.Diagnostics) (*hcl.File, hcl.Diagnostics) {
	var spans []braceSpan
	if !diags.HasErrors() {
		spans = commaBlocks(toks)
	}
	if len(spans) == 0 {
		return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	}
	blanked := append([]byte(nil), src...)
	for _, s := range spans {
		for i := s.open.End.Byte; i < s.close.Start.Byte; i++ {
			blanked[i] = ' '
		}
	}
	f, diags := hclsyntax.ParseConfig(blanked, filename, hcl.InitialPos)
	if diags.HasErrors() || f == nil {
		return f, diags
	}
	f.Bytes = src
	byOpen := map[int]*hclsyntax.Block{}
	var walk func(*hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for _, blk := range b.Blocks {
			byOpen[blk.OpenBraceRange.Start.Byte] = blk
			walk(blk.Body)
		}
	}
	walk(f.Body.(*hclsyntax.Body))
	for _, s := range spans {
		blk := byOpen[s.open.Start.Byte]
		if blk == nil {
			continue
		}
		expr, ds := hclsyntax.ParseExpression(src[s.open.Start.Byte:s.close.End.Byte], filename, s.open.Start)
		diags = append(diags, ds...)
		if oc, ok := expr.(*hclsyntax.ObjectConsExpr); ok && !ds.HasErrors() {
			inline[blk] = oc
		}
	}
	return f, diags
}

// braceSpan is the pair of braces around a one-line block body with commas.
type braceSpan struct{ open, close hcl.Range }

// commaBlocks finds one-line block bodies that separate arguments with commas.
func commaBlocks(toks hclsyntax.Tokens) []braceSpan {
	type frame struct {
		open          hclsyntax.Token
		body          bool // a block body, rather than an expression bracket
		comma, broken bool // a comma, or a newline, directly inside
	}
	var stack []*frame
	var spans []braceSpan
	var line []hclsyntax.TokenType // tokens since the start of the statement
	inBody := func() bool { return len(stack) == 0 || stack[len(stack)-1].body }
	for _, t := range toks {
		newline := t.Type == hclsyntax.TokenNewline ||
			t.Type == hclsyntax.TokenComment && len(t.Bytes) > 0 && t.Bytes[len(t.Bytes)-1] == '\n'
		switch {
		case newline:
			if len(stack) > 0 {
				stack[len(stack)-1].broken = true
			}
			if inBody() {
				line = line[:0]
			}
			continue
		case t.Type == hclsyntax.TokenOBrace && inBody() && isBlockHeader(line):
			stack = append(stack, &frame{open: t, body: true})
			line = line[:0]
			continue
		case t.Type == hclsyntax.TokenOBrace || t.Type == hclsyntax.TokenOBrack || t.Type == hclsyntax.TokenOParen ||
			t.Type == hclsyntax.TokenTemplateInterp || t.Type == hclsyntax.TokenTemplateControl:
			stack = append(stack, &frame{open: t})
		case t.Type == hclsyntax.TokenCBrace || t.Type == hclsyntax.TokenCBrack || t.Type == hclsyntax.TokenCParen ||
			t.Type == hclsyntax.TokenTemplateSeqEnd:
			if len(stack) == 0 {
				return nil // unbalanced: let the parser report it
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.body && top.comma && !top.broken {
				spans = append(spans, braceSpan{open: top.open.Range, close: t.Range})
			}
			if top.body {
				line = line[:0]
				continue
			}
		case t.Type == hclsyntax.TokenComma && len(stack) > 0 && stack[len(stack)-1].body:
			stack[len(stack)-1].comma = true
			line = line[:0]
			continue
		}
		line = append(line, t.Type)
	}
	return spans
}

// maxExponent bounds the decimal exponent of number literals. Turning 1e99999999 into
// text or an integer takes minutes; no JetStream value needs more than 20 digits.
const maxExponent = 1000

// checkNumbers refuses number literals whose magnitude no field could hold, before
// the HCL parser spends minutes expanding them.
func checkNumbers(toks hclsyntax.Tokens) hcl.Diagnostics {
	for _, t := range toks {
		if t.Type != hclsyntax.TokenNumberLit {
			continue
		}
		lit := strings.ToLower(string(t.Bytes))
		_, exp, ok := strings.Cut(lit, "e")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimLeft(exp, "+")); err != nil || n > maxExponent || n < -maxExponent {
			r := t.Range
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Number out of range",
				Detail: fmt.Sprintf("%s has an exponent beyond ±%d; write the value in range.", t.Bytes, maxExponent), Subject: &r}}
		}
	}
	return nil
}

// plainText reports whether src is printable ASCII, tabs and line ends, with no digit
// directly followed by e or E: then no number literal has an exponent and no
// character is invisible (see invisibleChars). It errs towards no ("s1e" in a name).
func plainText(src []byte) bool {
	for i, b := range src {
		switch {
		case b == '\t' || b == '\n' || b == '\r':
		case b < 0x20 || b > 0x7e:
			return false
		case (b == 'e' || b == 'E') && i > 0 && src[i-1] >= '0' && src[i-1] <= '9':
			return false
		}
	}
	return true
}

// isBlockHeader reports whether the tokens before a brace are a block's type and
// labels: an identifier followed by identifiers or quoted strings.
func isBlockHeader(line []hclsyntax.TokenType) bool {
	if len(line) == 0 || line[0] != hclsyntax.TokenIdent {
		return false
	}
	for i := 1; i < len(line); i++ {
		switch line[i] {
		case hclsyntax.TokenIdent, hclsyntax.TokenOQuote, hclsyntax.TokenQuotedLit, hclsyntax.TokenCQuote:
		default:
			return false
		}
	}
	return true
}
