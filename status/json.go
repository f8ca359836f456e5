package status

import (
	"encoding/json"
	"io"
)

// JSON writes r as one JSON document, indented unless compact (one line, for a
// stream of samples under --watch). Subjects are written as they are: no HTML escaping.
func JSON(w io.Writer, r *Report, compact bool) error {
	doc := *r
	if doc.Groups == nil {
		doc.Groups = []*Group{}
	}
	if doc.Consumers == nil {
		doc.Consumers = []*Consumer{}
	}
	if doc.DeadLetters == nil {
		doc.DeadLetters = []*DeadLetter{}
	}
	if doc.Findings == nil {
		doc.Findings = []*Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !compact {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(&doc)
}
