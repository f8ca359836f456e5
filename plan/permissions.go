package plan

import (
	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/permissions"
)

// permissionFindings are the permission checks of the services (NP601-NP603) and,
// against a server, the services whose derived permissions this plan changes (NP604).
func permissionFindings(desired, live *model.Model) []*finding.Finding {
	issues := permissions.Check(desired)
	if live.Target != nil {
		issues = append(issues, permissions.Changes(desired, live)...)
	}
	out := make([]*finding.Finding, 0, len(issues))
	for _, is := range issues {
		out = append(out, &finding.Finding{Code: finding.Code(is.Code), Severity: finding.Severity(is.Severity), Address: is.Address,
			Range: rangeString(is.Range), Message: is.Message})
	}
	return out
}
