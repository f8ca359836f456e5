package apply

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/natsplan/natsplan/plan"
)

// progress writes a line per change. Plain output has a "starting" and a "finished" line
// per change; on a TTY only the finished lines stay and one status line below them is
// redrawn with what is in flight. Only the scheduler's goroutine calls it.
type progress struct {
	w        io.Writer
	tty      bool
	total    int
	finished int
	inflight []string
	// quiet drops the per-change lines once the run has halted for a reason that is
	// reported once at the end (the server is unreachable, the lock is lost).
	quiet bool
}

// verbs returns the progressive and the past form of an action.
func verbs(a plan.Action) (doing, did string) {
	switch a {
	case plan.ActCreate:
		return "creating", "created"
	case plan.ActUpdate:
		return "updating", "updated"
	case plan.ActDelete:
		return "deleting", "deleted"
	case plan.ActReplace:
		return "replacing", "replaced"
	case plan.ActAdopt:
		return "adopting", "adopted"
	}
	return string(a), string(a)
}

func newProgress(w io.Writer, tty bool, total int) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, tty: tty, total: total}
}

func (p *progress) started(s *StepResult) {
	p.inflight = append(p.inflight, s.Address)
	if p.tty {
		p.redraw()
		return
	}
	doing, _ := verbs(s.Action)
	fmt.Fprintf(p.w, "%s: %s...\n", s.Address, doing)
}

func (p *progress) done(s *StepResult) {
	p.landed(s)
	p.finished++
	if !p.quiet {
		p.line(describe(s))
	}
}

// landed takes s off the in-flight list.
func (p *progress) landed(s *StepResult) {
	for i, a := range p.inflight {
		if a == s.Address {
			p.inflight = append(p.inflight[:i], p.inflight[i+1:]...)
			break
		}
	}
}

// unstarted is a change that began but sent nothing (the connection was down, or the
// lock was lost): it may start again, or stays not_started.
func (p *progress) unstarted(s *StepResult) {
	p.landed(s)
	if p.tty {
		p.redraw()
	}
}

// resolved reports a timed-out change after its object was read back.
func (p *progress) resolved(s *StepResult) {
	p.line("read back: " + describe(s))
}

func (p *progress) skipped(s *StepResult) {
	p.finished++
	if !p.quiet {
		p.line(describe(s))
	}
}

func (p *progress) stopping() {
	p.line(fmt.Sprintf("stopping: %d change(s) in flight will finish, nothing new starts", len(p.inflight)))
}

// close clears the status line on a TTY.
func (p *progress) close() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func describe(s *StepResult) string {
	d := s.Duration.Round(time.Millisecond)
	if d == 0 {
		d = s.Duration.Round(10 * time.Microsecond)
	}
	switch s.Status {
	case StatusDone:
		_, did := verbs(s.Action)
		return fmt.Sprintf("%s: %s (%s)", s.Address, did, d)
	case StatusFailed:
		return fmt.Sprintf("%s: %s failed (%s): %v", s.Address, s.Action, d, s.Err)
	case StatusUnknown:
		return fmt.Sprintf("%s: %s outcome unknown (%s): %v", s.Address, s.Action, d, s.Err)
	}
	return fmt.Sprintf("%s: %s: %v", s.Address, s.Status, s.Err)
}

func (p *progress) line(l string) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", l)
		p.redraw()
		return
	}
	fmt.Fprintln(p.w, l)
}

func (p *progress) redraw() {
	shown := p.inflight
	if len(shown) > 3 {
		shown = shown[:3]
	}
	more := ""
	if n := len(p.inflight) - len(shown); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%d/%d] in flight: %s%s", p.finished, p.total, strings.Join(shown, ", "), more)
}
