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
	// StatusFailed means the server refused the change or did not answer.
	StatusFailed Status = "failed"
	// StatusSkipped means a change this one depends on failed or was skipped.
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
}

// Counts is the number of changes in each status.
type Counts struct {
	Done, Failed, Skipped, NotStarted, Refused int
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
