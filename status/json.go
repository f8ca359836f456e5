package status

import (
	"encoding/json"
	"io"

	"github.com/natsplan/natsplan/plan/render"
)

// JSON writes r as one JSON document with the commands' one JSON writer, or compact
// (one line, for a stream of samples under --watch). Subjects are written as they are:
// no HTML escaping.
func JSON(w io.Writer, r *Report, compact bool) error {
	doc := r.withLists()
	if !compact {
		return render.WriteJSON(w, doc)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// withLists is a copy of r whose lists are empty rather than nil, so the document
// always has them ([] rather than null).
func (r *Report) withLists() *Report {
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
	return &doc
}
