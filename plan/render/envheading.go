package render

import (
	"fmt"

	"github.com/natsplan/natsplan/plan"
)

// EnvHeading is the heading of one environment's section: its name and the server its
// plan was made against. MultiText heads each section with it, and so does apply,
// which prints the sections itself.
func EnvHeading(p *plan.Plan, o TextOptions) string {
	t := &textWriter{color: o.Color}
	return t.paint(ansiBold, fmt.Sprintf("=== environment %s: %s", envName(p), targetIdentity(p.Target)))
}
