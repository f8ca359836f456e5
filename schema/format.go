package schema

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in canonical form: hclwrite.Format (indentation, spacing and
// alignment of "=", as terraform fmt does), with trailing blank lines removed and
// exactly one final newline. Nothing is reordered, so comments stay where they are.
// Invalid HCL is not formatted; its diagnostics are returned.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	if _, diags := parseConfig(src, filename, inlineBodies{}, false); diags.HasErrors() {
		return nil, diags
	}
	out := hclwrite.Format(src)
	out = bytes.TrimRight(out, " \t\r\n")
	if len(out) == 0 {
		return []byte{}, nil
	}
	return append(out, '\n'), nil
}
