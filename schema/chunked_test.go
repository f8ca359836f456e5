package schema

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// wholeAndChunked parses src both ways and requires the same body and diagnostics
// whenever the chunked parse takes it; it reports whether it did.
func wholeAndChunked(t *testing.T, name string, src []byte) bool {
	t.Helper()
	whole, wd := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	f, cd, ok := parseInChunks(src, name)
	if !ok {
		return false
	}
	if wd.HasErrors() {
		t.Fatalf("%s: chunked parse took a file the whole parse refuses: %v", name, wd)
	}
	wb, cb := whole.Body.(*hclsyntax.Body), f.Body.(*hclsyntax.Body)
	if len(wb.Blocks) != len(cb.Blocks) || len(wb.Attributes) != len(cb.Attributes) {
		t.Fatalf("%s: %d blocks and %d attributes chunked, want %d and %d", name, len(cb.Blocks), len(cb.Attributes), len(wb.Blocks), len(wb.Attributes))
	}
	for i := range wb.Blocks {
		if !reflect.DeepEqual(wb.Blocks[i], cb.Blocks[i]) {
			t.Fatalf("%s: block %d (%s at %s) differs chunked", name, i, wb.Blocks[i].Type, wb.Blocks[i].DefRange())
		}
	}
	if !reflect.DeepEqual(wb, cb) {
		t.Fatalf("%s: body differs chunked: ranges %v / %v, end %v / %v", name, cb.SrcRange, wb.SrcRange, cb.EndRange, wb.EndRange)
	}
	if fmt.Sprint(wd) != fmt.Sprint(cd) || string(f.Bytes) != string(src) {
		t.Fatalf("%s: diagnostics %v chunked, want %v", name, cd, wd)
	}
	return true
}

// TestChunkedParseIsTheWholeParse: every HCL file of the repository (examples and test
// data of every package), joined into large files in many orders, parses in pieces to
// exactly the tree the whole parse gives, positions included; and a file whose only
// cut points lie inside a heredoc or a comment, or that sets one top-level attribute
// in two pieces, or that does not parse, is left to the whole parse.
func TestChunkedParseIsTheWholeParse(t *testing.T) {
	var files [][]byte
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".hcl") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos); !diags.HasErrors() && plainText(src) {
			files = append(files, src)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found %d parseable HCL files in the repository, want many", len(files))
	}
	took := 0
	for start := range min(len(files), 40) {
		var b strings.Builder
		for i := 0; b.Len() < 6*chunkBytes; i++ {
			src := files[(start+i*7)%len(files)]
			b.Write(src)
			if len(src) > 0 && src[len(src)-1] != '\n' {
				b.WriteByte('\n')
			}
			b.WriteString("\n")
		}
		if wholeAndChunked(t, fmt.Sprintf("joined%d.hcl", start), []byte(b.String())) {
			took++
		}
	}
	if took == 0 {
		t.Fatal("no joined file was parsed in pieces")
	}

	block := func(i int) string {
		return fmt.Sprintf("stream \"S%d\" {\n  subjects = [\"s%d.>\"]\n  description = \"}\"\n}\n\n", i, i)
	}
	var big strings.Builder
	for i := 0; big.Len() < 4*chunkBytes; i++ {
		big.WriteString(block(i))
	}
	if !wholeAndChunked(t, "plain.hcl", []byte(big.String())) {
		t.Fatal("a large file of plain blocks was not parsed in pieces")
	}
	// Cut points inside a heredoc and inside a comment: only wrong cuts are offered.
	filler := strings.Repeat("# filler line of a comment that makes the piece large enough\n", chunkBytes/50)
	for name, src := range map[string]string{
		"heredoc.hcl": "stream \"H\" {\n  description = <<EOT\n" + filler + "}\nstream \"X\" {\n" + filler + "EOT\n}\n",
		"comment.hcl": "/*\n" + filler + "}\nstream \"X\" {\n" + filler + "*/\nstream \"H\" {\n}\n",
		"dup.hcl":     "a = 1\n" + filler + "x {\n}\n" + "b = 1\n" + filler + "}\nx {\n}\na = 2\n" + filler,
		"broken.hcl":  filler + "x {\n}\n" + filler + "}\ny {\n" + filler,
	} {
		if _, _, ok := parseInChunks([]byte(src), name); ok {
			t.Errorf("%s was parsed in pieces; only the whole parse may take it", name)
		}
		if len(topLevelCuts([]byte(src))) == 0 {
			t.Errorf("%s offers no cut, so it does not test a wrong one", name)
		}
	}
}
