package render

import (
	"fmt"
	"io"

	"github.com/natsplan/natsplan/internal/finding"
)

// Findings writes findings the way compilers write diagnostics, one per line,
// "file:line:col: error NP101: message [address]", so editors and CI annotate the line.
func Findings(w io.Writer, fs []*finding.Finding, color bool) error {
	t := &textWriter{color: color}
	for _, f := range fs {
		col := ansiRed
		switch f.Severity {
		case finding.SevWarning:
			col = ansiYel
		case finding.SevInfo:
			col = ansiBold
		}
		prefix := f.Range
		if prefix == "" {
			prefix = "natsplan"
		}
		t.line("%s: %s: %s [%s]", prefix, t.paint(col, fmt.Sprintf("%s %s", f.Severity, f.Code)), f.Message, f.Address)
		if f.Overridable != "" {
			t.line("    (apply --%s accepts it)", f.Overridable)
		}
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

// FindingsJSON writes the findings of validate as one JSON document.
func FindingsJSON(w io.Writer, fs []*finding.Finding) error {
	doc := struct {
		Valid    bool               `json:"valid"`
		Findings []*finding.Finding `json:"findings"`
	}{Valid: true, Findings: fs}
	if doc.Findings == nil {
		doc.Findings = []*finding.Finding{}
	}
	for _, f := range fs {
		if f.Severity == finding.SevError {
			doc.Valid = false
		}
	}
	return WriteJSON(w, doc)
}
