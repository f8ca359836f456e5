package plan

import "github.com/natsplan/natsplan/model"

// Validate runs every check that needs no server: the invariants, and the plan-time
// checks among the declared objects (overlapping subjects, refused combinations). It
// plans against an empty server, so its findings are exactly those plan would report
// for a fresh account.
func Validate(desired *model.Model) []*Finding {
	if desired == nil {
		return nil
	}
	p, _ := Compute(desired, model.New(), Options{}) // errors only on nil models
	return p.Findings
}
