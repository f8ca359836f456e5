package schema

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// chunkBytes is about how much source a chunked parse gives the HCL parser at once.
const chunkBytes = 8 << 10

// parseInChunks parses a large file as consecutive pieces, each a run of whole
// top-level blocks, and joins their bodies into the file's. The HCL lexer collects a
// whole file's tokens in one slice that it grows as it goes; for a file of a few
// hundred blocks, growing and copying that slice was more than half of parsing (and
// parsing the largest part of a plan's own CPU). Pieces of a few kilobytes keep it
// small.
//
// A piece starts at a line that begins with a name in the first column, right after a
// line holding only "}": between top-level blocks. A line like that inside a block, a
// heredoc or a comment leaves the piece before it unclosed, which the parser refuses;
// so does anything else that is not a clean join (and a top-level attribute set in
// two pieces). Then, and for small files, ok is false and the caller parses the file
// whole, as before, with the same diagnostics. Positions are the file's: each piece is
// parsed from its own line and byte.
func parseInChunks(src []byte, filename string) (f *hcl.File, diags hcl.Diagnostics, ok bool) {
	cuts := topLevelCuts(src)
	if len(cuts) == 0 {
		return nil, nil, false
	}
	body := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}}
	pos, from := hcl.InitialPos, 0
	for k := 0; k <= len(cuts); k++ {
		to := len(src)
		if k < len(cuts) {
			to = cuts[k]
		}
		pf, ds := hclsyntax.ParseConfig(src[from:to], filename, pos)
		if ds.HasErrors() || pf == nil {
			return nil, nil, false
		}
		diags = append(diags, ds...)
		b, isSyntax := pf.Body.(*hclsyntax.Body)
		if !isSyntax {
			return nil, nil, false
		}
		for name, a := range b.Attributes {
			if _, dup := body.Attributes[name]; dup {
				return nil, nil, false
			}
			body.Attributes[name] = a
		}
		body.Blocks = append(body.Blocks, b.Blocks...)
		if k == 0 {
			body.SrcRange = b.SrcRange
		}
		body.SrcRange.End, body.EndRange = b.SrcRange.End, b.EndRange
		pos = hcl.Pos{Line: pos.Line + bytes.Count(src[from:to], []byte{'\n'}), Column: 1, Byte: to}
		from = to
	}
	return &hcl.File{Body: body, Bytes: src}, diags, true
}

// topLevelCuts returns where parseInChunks may start a piece: the start of a line that
// begins with a name character, whose previous line that is not blank is exactly "}",
// at most one cut per chunkBytes. A file under two chunks has none.
func topLevelCuts(src []byte) []int {
	if len(src) < 2*chunkBytes {
		return nil
	}
	var cuts []int
	last, closed := 0, false
	for at := 0; at < len(src); {
		end := bytes.IndexByte(src[at:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += at
		}
		line := bytes.TrimRight(src[at:end], " \t\r")
		switch {
		case len(line) == 0:
		case closed && isNameStart(line[0]) && at-last >= chunkBytes && len(src)-at >= chunkBytes/2:
			cuts = append(cuts, at)
			last, closed = at, false
		default:
			closed = len(line) == 1 && line[0] == '}'
		}
		at = end + 1
	}
	return cuts
}

func isNameStart(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}
