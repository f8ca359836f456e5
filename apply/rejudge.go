package apply

import (
	"context"
	"fmt"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
)

// Rejudge is what Run does before sending anything, for a caller that wants to show the
// result first: it returns p with its data-loss findings judged against the server's
// state now. Run judges again regardless.
func Rejudge(ctx context.Context, c *jsapi.Client, p *plan.Plan) (*plan.Plan, error) {
	return rejudge(ctx, c, p)
}

// rejudge reads the state of every object a change of p can lose data of and returns p
// with the data-loss findings judged against it (plan.DataLoss, the judgement the plan
// itself was made with). A fresh finding replaces the plan's finding of the same code and
// address; the plan's other findings stay, so a loss the plan showed is refused even if
// the state no longer proves it.
func rejudge(ctx context.Context, c *jsapi.Client, p *plan.Plan) (*plan.Plan, error) {
	streams := plan.StateNeeded(p)
	if len(streams) == 0 {
		return p, nil
	}
	live, err := observe.ReadState(ctx, c, streams, plan.ConsumersNeeded(p))
	if err != nil {
		return nil, fmt.Errorf("apply: read the server again to check for data loss (nothing was changed): %w", err)
	}
	fresh := plan.DataLoss(p, live)
	if len(fresh) == 0 {
		return p, nil
	}
	key := func(f *finding.Finding) string { return string(f.Code) + " " + f.Address }
	replaced := map[string]bool{}
	for _, f := range fresh {
		replaced[key(f)] = true
	}
	out := *p
	out.Findings = nil
	for _, f := range p.Findings {
		if !replaced[key(f)] {
			out.Findings = append(out.Findings, f)
		}
	}
	out.Findings = append(out.Findings, fresh...)
	return &out, nil
}
