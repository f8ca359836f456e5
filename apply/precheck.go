package apply

import "github.com/natsplan/natsplan/plan"

// Check reports whether Run would refuse p under o, without sending anything, so the
// command line can refuse before it asks for confirmation. It returns a *RefusedError.
func Check(p *plan.Plan, o Options) error {
	if reasons := refusals(p, o); len(reasons) > 0 {
		return &RefusedError{Reasons: reasons}
	}
	return nil
}
