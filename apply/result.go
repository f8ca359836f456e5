package apply

import (
	"time"

	"github.com/natsplan/natsplan/plan"
)

// Status is what became of one change.
type Status string

// The statuses of a change.
const (
	// StatusDone means the server accepted the change.
	StatusDone Status = "done"
	// StatusFailed means the server refused the change, or did not answer and a
	// re-read showed it was not carried out.
	StatusFailed Status = "failed"
	// StatusUnknown means the server did not answer in time and the object could not
	// be re-read afterwards: the change may or may not have been carried out.
	StatusUnknown Status = "unknown"
	// StatusSkipped means the change was not sent: a change it depends on failed, was
	// skipped or has an unknown outcome, or the user may not send its kind of request.
	StatusSkipped Status = "skipped"
	// StatusNotStarted means apply was stopped before the change began.
	StatusNotStarted Status = "not_started"
	// StatusRefused means apply refused the whole plan before sending anything.
	StatusRefused Status = "refused"
)

// StepResult is the outcome of one change of the plan.
type StepResult struct {
	Address string
	Action  plan.Action
	// Step is the change's ordering step in the plan.
	Step   int
	Status Status
	// Err says why the change failed, was skipped or was refused; nil when done.
	Err      error
	Duration time.Duration
}

// Result is the outcome of a run: one StepResult per change, in plan order.
type Result struct {
	Steps []*StepResult
	// Stopped is why the run stopped early, when it did for a reason other than
	// Options.Stop: an *UnreachableError, or the Fence's error (a lost lock).
	Stopped error
}

// Counts is the number of changes in each status.
type Counts struct {
	Done, Failed, Unknown, Skipped, NotStarted, Refused int
}

// OK reports whether every change was done.
func (r *Result) OK() bool {
	for _, s := range r.Steps {
		if s.Status != StatusDone {
			return false
		}
	}
	return true
}

// Counts counts the changes by status.
func (r *Result) Counts() Counts {
	var c Counts
	for _, s := range r.Steps {
		switch s.Status {
		case StatusDone:
			c.Done++
		case StatusFailed:
			c.Failed++
		case StatusUnknown:
			c.Unknown++
		case StatusSkipped:
			c.Skipped++
		case StatusNotStarted:
			c.NotStarted++
		case StatusRefused:
			c.Refused++
		}
	}
	return c
}

func newResult(p *plan.Plan, st Status) *Result {
	r := &Result{Steps: make([]*StepResult, len(p.Changes))}
	for i, ch := range p.Changes {
		r.Steps[i] = &StepResult{Address: ch.Address, Action: ch.Action, Step: ch.Step, Status: st}
	}
	return r
}

// Addresses lists, in plan order, the addresses of the changes in status st.
func (r *Result) Addresses(st Status) []string {
	var out []string
	for _, s := range r.Steps {
		if s.Status == st {
			out = append(out, s.Address)
		}
	}
	return out
}
