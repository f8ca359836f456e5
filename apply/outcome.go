package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// minRereadTimeout is the least time a re-read of a change whose request timed out
// gets: a server too slow to answer a write in --timeout is often still busy with it,
// and a re-read that times out too leaves the outcome unknown.
const minRereadTimeout = 5 * time.Second

// DefaultReconnectWindow is how long apply waits for a lost connection to come back
// when Options leave it unset, before it stops and reports what is done.
const DefaultReconnectWindow = 10 * time.Second

// UnreachableError is Result.Stopped when the connection stayed down for the whole
// reconnect window.
type UnreachableError struct {
	Down time.Duration
	// Silent is set when the connection stayed up but the server answered nothing,
	// not even a ping (a stalled process, a network that drops packets).
	Silent bool
}

func (e *UnreachableError) Error() string {
	if e.Silent {
		return fmt.Sprintf("the server stopped answering (a request timed out, then a ping had no answer for %s)", e.Down.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("the server is unreachable (no connection for %s)", e.Down.Round(100*time.Millisecond))
}

// partialError is a change that sent part of its requests: a replace whose delete was
// done, or a consumer written whose pause was not. It is never retried or called "not sent".
type partialError struct{ err error }

func (e *partialError) Error() string { return e.err.Error() }
func (e *partialError) Unwrap() error { return e.err }

// verdict classifies the error of a change.
type verdict int

const (
	verdictFailed   verdict = iota
	verdictUnsent           // nothing was sent: the connection was down
	verdictFenced           // nothing was sent: the fence refused (the lock is lost)
	verdictDenied           // the server denied the publish: nothing was carried out
	verdictTimedOut         // no answer: the outcome is unknown until re-read
)

func classify(err error) verdict {
	var partial *partialError
	isPartial := errors.As(err, &partial)
	var fenced *jsapi.FencedError
	switch {
	case errors.As(err, &fenced) && !isPartial:
		return verdictFenced
	case jsapi.IsPermissionDenied(err):
		return verdictDenied
	case !isPartial && (errors.Is(err, nats.ErrReconnectBufExceeded) || errors.Is(err, nats.ErrConnectionReconnecting)):
		return verdictUnsent
	case timedOut(err):
		return verdictTimedOut
	}
	return verdictFailed
}

// deniedOp is the API operation of a denied subject: STREAM.CREATE for
// $JS.API.STREAM.CREATE.X (or $JS.<domain>.API.STREAM.CREATE.X).
func deniedOp(err error) (string, *jsapi.PermissionError) {
	var pe *jsapi.PermissionError
	if !errors.As(err, &pe) {
		return "", nil
	}
	toks := strings.Split(pe.Subject, ".")
	for i, t := range toks {
		if t == "API" && i+2 < len(toks) {
			return toks[i+1] + "." + toks[i+2], pe
		}
	}
	return pe.Subject, pe
}

// ops are the API operations a change sends.
func ops(ch *plan.Change) []string {
	if ch.Kind == model.KindConsumer {
		switch ch.Action {
		case plan.ActDelete:
			return []string{"CONSUMER.DELETE"}
		case plan.ActReplace:
			return []string{"CONSUMER.DELETE", "CONSUMER.CREATE"}
		}
		return []string{"CONSUMER.CREATE"}
	}
	switch ch.Action {
	case plan.ActCreate:
		return []string{"STREAM.CREATE"}
	case plan.ActDelete:
		return []string{"STREAM.DELETE"}
	}
	return []string{"STREAM.UPDATE"}
}

// reread reads the object of a change whose request timed out and says whether the
// change was carried out: the object is gone for a delete, or present with every
// value the change sent. An error means it could not tell.
func reread(ctx context.Context, c *jsapi.Client, ch *plan.Change) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, max(c.Timeout, minRereadTimeout))
	defer cancel()
	var live any
	if ch.Kind == model.KindConsumer {
		info, err := c.ConsumerInfo(ctx, ch.Stream, ch.Name)
		if err != nil {
			return false, err
		}
		if info != nil {
			live = info.Config
		}
	} else {
		info, err := c.StreamInfo(ctx, ch.Name)
		if err != nil {
			return false, err
		}
		if info != nil {
			live = info.Config
		}
	}
	if ch.Action == plan.ActDelete {
		return live == nil, nil
	}
	if live == nil {
		return false, nil
	}
	b, err := json.Marshal(live)
	if err != nil {
		return false, err
	}
	return plan.Holds(ch.After, b)
}

func (r *runner) finish(o outcome) Status {
	s := r.res.Steps[o.i]
	s.Duration = o.d
	if o.err == nil {
		s.Status, s.Err = StatusDone, nil
		r.prog.done(s)
		return s.Status
	}
	switch classify(o.err) {
	case verdictUnsent:
		r.prog.unstarted(s)
		return StatusNotStarted
	case verdictFenced:
		var fe *jsapi.FencedError
		errors.As(o.err, &fe)
		s.Status, s.Err = StatusNotStarted, o.err
		r.prog.unstarted(s)
		r.halt(fe.Err)
		return s.Status
	case verdictDenied:
		s.Status, s.Err = StatusFailed, o.err
		op, pe := deniedOp(o.err)
		if d := r.denied[op]; d != nil {
			// Sent before the first denial came back: counted, not printed.
			d.more++
			r.prog.landed(s)
			r.prog.finished++
			return s.Status
		}
		r.denied[op] = &deniedKind{err: pe, first: s.Address}
		r.deniedKeys = append(r.deniedKeys, op)
	case verdictTimedOut:
		// Said when it is read back, or at the end if it never is. Nothing new is
		// sent until the server answers a ping (runner.answering).
		r.silent = true
		s.Status, s.Err = StatusUnknown, fmt.Errorf("no answer in time, the server may have carried it out: %w", o.err)
		r.prog.landed(s)
		r.prog.finished++
		return s.Status
	default:
		s.Status, s.Err = StatusFailed, o.err
	}
	r.prog.done(s)
	return s.Status
}

// readBack is what a re-read found of a change whose request timed out.
type readBack struct {
	i    int
	done bool
	err  error // the re-read failed: the outcome stays unknown
}

// resolve re-reads the objects of the changes whose requests timed out and settles
// each as done, failed (not carried out) or unknown (the re-read failed too). A change
// not carried out is failed only if it was already sent twice; runStep sends it again
// otherwise.
func (r *runner) resolve(ctx context.Context, unknown []int) []readBack {
	answers := make(chan readBack, len(unknown))
	sem := make(chan struct{}, r.par)
	for _, i := range unknown {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			done, err := reread(ctx, r.c, r.p.Changes[i])
			answers <- readBack{i, done, err}
		}()
	}
	out := make([]readBack, 0, len(unknown))
	for range unknown {
		a := <-answers
		out = append(out, a)
		s := r.res.Steps[a.i]
		switch {
		case a.err != nil:
			s.Err = fmt.Errorf("%w; reading it back failed too: %v", s.Err, a.err)
		case a.done:
			s.Status, s.Err = StatusDone, nil
		case !r.resent[a.i]:
			r.prog.line(fmt.Sprintf("read back: %s: not carried out; sending it again", s.Address))
			continue
		default:
			s.Status, s.Err = StatusFailed, fmt.Errorf("%w; read back, it was not carried out", s.Err)
			r.failed()
		}
		r.prog.resolved(s)
	}
	return out
}
