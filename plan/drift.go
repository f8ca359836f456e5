package plan

import "sort"

// DriftStatus is what happened to an object behind natsplan's back.
type DriftStatus string

// Drift statuses.
const (
	// DriftChanged: owned, and the live config differs from the files.
	DriftChanged DriftStatus = "changed"
	// DriftMissing: declared, and gone from the server.
	DriftMissing DriftStatus = "missing"
	// DriftOrphaned: owned by this project, and no longer declared.
	DriftOrphaned DriftStatus = "orphaned"
)

// DriftReport is what changed outside natsplan.
type DriftReport struct {
	Target    Target    `json:"target"`
	Drift     []*Drift  `json:"drift"`
	Unmanaged []*Object `json:"unmanaged"`
	// Foreign lists the undeclared objects another project's mark names: that
	// project's, so not drift. Listed only when asked for; always counted.
	Foreign []*Object `json:"foreign,omitempty"`
	Summary struct {
		Changed   int `json:"changed"`
		Missing   int `json:"missing"`
		Orphaned  int `json:"orphaned"`
		Unmanaged int `json:"unmanaged"`
		Foreign   int `json:"foreign"`
	} `json:"summary"`
}

// InSync reports whether the report found nothing; other projects' objects are theirs.
func (r *DriftReport) InSync() bool { return len(r.Drift) == 0 && len(r.Unmanaged) == 0 }

// Drifted derives the drift report from a plan: an update of an owned object is a
// change made behind natsplan's back, also when the plan can not undo it (a blocked
// change); a create is an object that went missing; an
// owned object no longer declared is orphaned. Adoptions are not drift (the object was
// never natsplan's). Unmanaged objects are the plan's: Compute already hid the ones the
// natsplan block's ignore patterns name. Objects marked by another project are
// foreign, not unmanaged: listed when showForeign, counted always.
func Drifted(p *Plan, showForeign bool) *DriftReport {
	r := &DriftReport{Target: p.Target, Drift: []*Drift{}, Unmanaged: []*Object{}}
	for _, c := range p.Changes {
		var status DriftStatus
		switch c.Action {
		case ActUpdate, ActReplace:
			status = DriftChanged
			r.Summary.Changed++
		case ActCreate:
			status = DriftMissing
			r.Summary.Missing++
		case ActDelete:
			status = DriftOrphaned
			r.Summary.Orphaned++
		default:
			continue
		}
		r.Drift = append(r.Drift, &Drift{Address: c.Address, Kind: c.Kind, Status: status, Fields: c.Fields, Blocked: c.Blocked})
	}
	for _, o := range p.Unmanaged {
		// Objects marked by this project are never unmanaged (they are orphaned), so
		// an owner here is another project.
		if o.Owner == "" {
			r.Unmanaged = append(r.Unmanaged, o)
			continue
		}
		r.Summary.Foreign++
		if showForeign {
			r.Foreign = append(r.Foreign, o)
		}
	}
	r.Summary.Unmanaged = len(r.Unmanaged)
	sort.SliceStable(r.Drift, func(i, j int) bool { return r.Drift[i].Address < r.Drift[j].Address })
	return r
}
