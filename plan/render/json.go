package render

import (
	"fmt"
	"io"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
)

// JSON writes the plan document (docs/commands/plan.md, "The plan document") as exactly one JSON document. Empty
// lists are written as [] so consumers never see null.
func JSON(w io.Writer, p *plan.Plan) error {
	if err := WriteJSON(w, jsonPlan(p)); err != nil {
		return fmt.Errorf("write json plan: %w", err)
	}
	return nil
}

// jsonPlan is p as the JSON document writes it: the format version set, empty lists [].
func jsonPlan(p *plan.Plan) *plan.Plan {
	p.FillDesiredHash() // on p, not only on the copy written
	doc := *p
	if doc.FormatVersion == "" {
		doc.FormatVersion = plan.FormatVersion
	}
	if doc.Changes == nil {
		doc.Changes = []*plan.Change{}
	}
	if doc.Findings == nil {
		doc.Findings = []*finding.Finding{}
	}
	if doc.Drift == nil {
		doc.Drift = []*plan.Drift{}
	}
	if doc.Unmanaged == nil {
		doc.Unmanaged = []*plan.Object{}
	}
	return &doc
}
