package plan

import (
	"context"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// Validate runs every check that needs no server: the invariants, and the plan-time
// checks among the declared objects (overlapping subjects, refused combinations). It
// plans against an empty server, so its findings are exactly those plan would report
// for a fresh account.
func Validate(desired *model.Model) []*finding.Finding {
	fs, _ := ValidateContext(context.Background(), desired) // a background context never ends
	return fs
}

// ValidateContext is Validate that stops soon after ctx ends, and then returns ctx's
// error and no findings.
func ValidateContext(ctx context.Context, desired *model.Model) ([]*finding.Finding, error) {
	if desired == nil {
		return nil, nil
	}
	p, err := ComputeContext(ctx, desired, model.New(), Options{})
	if err != nil {
		return nil, err // only cancellation: both models are set
	}
	return p.Findings, nil
}
