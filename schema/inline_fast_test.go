package schema

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// describeParse renders what a parse produced: the diagnostics, every block and
// attribute with its range, and which blocks were parsed as one-line bodies.
func describeParse(f *hcl.File, diags hcl.Diagnostics, inline inlineBodies) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "diag %v %s %s %v\n", d.Severity, d.Summary, d.Detail, d.Subject)
	}
	if f == nil {
		return b.String() + "no file\n"
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return b.String() + "no body\n"
	}
	var walk func(body *hclsyntax.Body, depth int)
	walk = func(body *hclsyntax.Body, depth int) {
		for _, a := range sortedSyntaxAttrs(body.Attributes) {
			fmt.Fprintf(&b, "%*sattr %s %v %v\n", depth, "", a.Name, a.SrcRange, a.Expr.Range())
		}
		for _, blk := range body.Blocks {
			_, one := inline[blk]
			fmt.Fprintf(&b, "%*sblock %s %q %v inline=%v\n", depth, "", blk.Type, blk.Labels, blk.Range(), one)
			walk(blk.Body, depth+2)
		}
	}
	walk(body, 0)
	return b.String()
}

// agree parses src with and without the shortcut and returns the difference.
func agree(src []byte) string {
	fast, slow := inlineBodies{}, inlineBodies{}
	f1, d1 := parseConfig(src, "x.hcl", fast, true)
	longWay := func() (*hcl.File, hcl.Diagnostics) {
		if diags := checkText(src, "x.hcl"); diags.HasErrors() {
			return nil, diags // before the shortcut too
		}
		return parseTokens(src, "x.hcl", slow, true)
	}
	f2, d2 := longWay()
	return cmp.Diff(describeParse(f2, d2, slow), describeParse(f1, d1, fast))
}

// shortcutSeeds are inputs near the edges of the shortcut: commas in one-line blocks,
// in brackets that span lines, in for expressions; exponents in and out of range.
var shortcutSeeds = []string{
	"kv \"s\" { history = 5, ttl = \"1h\" }\n",
	"kv \"s\" { history = 5 }\n",
	"x { a = [\n1], b = 2 }\n",
	"x {\n  a = { for k, v in {a = 1, b = 2} : k => v }\n}\n",
	"x { a = {p = 1, q = 2} }\n",
	"stream \"S\" {\n  max_msgs = 1e5\n}\n",
	"stream \"S\" {\n  max_msgs = 1e99999999\n}\n",
	"stream \"S1e\" {\n  subjects = [\"a\", \"b\"]\n}\n",
	"x { a = 1, }\n",
	"x {\n  a = 1,\n}\n",
	"natsplan { project = \"p\" }\nstream \"A\" { subjects = [\"a.>\"], max_age = \"1d\" }\n",
	"stream \"ORDERS\u200b\" {\n  subjects = [\"a.>\"]\n}\n",
	"stream \"ORDERS\u00a0\" {\n  subjects = [\"a\x01b\"]\n}\n",
	"stream \"ORDERS\x7f\" {\n  subjects = [\"a\"]\n}\n",
}

// TestParseShortcutAgrees proves the one-parse shortcut returns what the long way
// does, on every configuration in the repository and on the edge cases above.
func TestParseShortcutAgrees(t *testing.T) {
	t.Parallel()
	inputs := map[string][]byte{}
	for i, s := range shortcutSeeds {
		inputs[fmt.Sprint("seed ", i)] = []byte(s)
	}
	for _, root := range []string{"testdata", "../examples"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".hcl") {
				return err
			}
			src, err := os.ReadFile(path)
			inputs[path] = src
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(inputs) < 20 {
		t.Fatalf("only %d inputs found", len(inputs))
	}
	for name, src := range inputs {
		if d := agree(src); d != "" {
			t.Errorf("%s: the shortcut differs (-long +shortcut):\n%s", name, d)
		}
	}
}

// FuzzParseShortcut checks the shortcut against the long way on any input.
func FuzzParseShortcut(f *testing.F) {
	for _, s := range shortcutSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if d := agree(src); d != "" {
			t.Errorf("the shortcut differs (-long +shortcut):\n%s", d)
		}
	})
}
