package schema

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func TestWriteDiagnostics(t *testing.T) {
	t.Parallel()
	l := NewLoader()
	_, diags := l.Load([]string{"testdata/invalid/unknown_attribute.hcl"}, Vars{})
	var b strings.Builder
	WriteDiagnostics(&b, l.SourceFiles(), diags, false)
	want := `testdata/invalid/unknown_attribute.hcl:6:3: error: Unsupported argument; An argument named "max_agee" is not expected in a stream block. Did you mean "max_age"?
    max_agee = "1h" # ERROR: Unsupported argument; An argument named "max_agee" is not expected in a stream block. Did you mean "max_age"?
    ^^^^^^^^
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	WriteDiagnostics(&b, nil, hcl.Diagnostics{
		{Severity: hcl.DiagWarning, Summary: "Stream not declared", Detail: "declare it"},
		{Severity: hcl.DiagError, Summary: "Bad", Subject: &hcl.Range{Filename: "--var x"}},
	}, true)
	want = "\x1b[33m\x1b[1mwarning\x1b[0m: Stream not declared; declare it\n--var x: \x1b[31m\x1b[1merror\x1b[0m: Bad\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
