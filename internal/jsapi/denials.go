package jsapi

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// PermissionError is a request the server refused to route because the user may not
// publish to its subject. The server does not answer such a request; it reports the
// violation on the connection, and Denials turns that into this error at once.
type PermissionError struct {
	Subject string
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("permission denied for %s: the user needs publish permission on %s (or on the subject itself)", e.Subject, wildcardFor(e.Subject))
}

// wildcardFor is the permission that covers every request of the subject's kind:
// $JS.API.STREAM.CREATE.X needs $JS.API.STREAM.CREATE.>.
func wildcardFor(subject string) string {
	toks := strings.Split(subject, ".")
	for i, t := range toks {
		if t == "API" && i+3 < len(toks) {
			return strings.Join(toks[:i+3], ".") + ".>"
		}
	}
	return subject
}

// IsPermissionDenied reports whether err is a *PermissionError.
func IsPermissionDenied(err error) bool {
	var pe *PermissionError
	return errors.As(err, &pe)
}

// Denials matches the server's permission violations to the requests that are waiting
// for a reply on the denied subject, so that they fail at once instead of timing out.
// Install Handle as the connection's error handler.
type Denials struct {
	mu      sync.Mutex
	waiting map[string]map[*denialWaiter]struct{}
	other   func(error)
}

type denialWaiter struct{ cancel context.CancelCauseFunc }

// NewDenials returns a Denials that hands every other asynchronous error (and a
// violation no request waits for) to other; nil drops them.
func NewDenials(other func(error)) *Denials {
	return &Denials{waiting: map[string]map[*denialWaiter]struct{}{}, other: other}
}

// violation is the server's -ERR for a denied publish, as nats.go passes it on.
var violation = regexp.MustCompile(`(?i)permissions violation for publish to "([^"]+)"`)

// Handle is a nats.ErrHandler.
func (d *Denials) Handle(_ *nats.Conn, _ *nats.Subscription, err error) {
	if m := violation.FindStringSubmatch(err.Error()); m != nil {
		d.mu.Lock()
		ws := d.waiting[m[1]]
		for w := range ws {
			w.cancel(&PermissionError{Subject: m[1]})
		}
		matched := len(ws) > 0
		d.mu.Unlock()
		if matched {
			return
		}
	}
	if d.other != nil {
		d.other(err)
	}
}

// Watch returns a context that is cancelled with a *PermissionError (see
// context.Cause) when a publish to one of subjects is denied, and a func to stop
// watching. It is for requests sent by other clients of the connection (nats.go's
// KV, used by the apply lock); Client's own requests are watched already.
func (d *Denials) Watch(ctx context.Context, subjects ...string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &denialWaiter{cancel: cancel}
	d.mu.Lock()
	for _, s := range subjects {
		if d.waiting[s] == nil {
			d.waiting[s] = map[*denialWaiter]struct{}{}
		}
		d.waiting[s][w] = struct{}{}
	}
	d.mu.Unlock()
	return ctx, func() {
		d.mu.Lock()
		for _, s := range subjects {
			delete(d.waiting[s], w)
			if len(d.waiting[s]) == 0 {
				delete(d.waiting, s)
			}
		}
		d.mu.Unlock()
		cancel(nil)
	}
}

// Denied returns the *PermissionError a context from Watch was cancelled with, or nil.
func Denied(ctx context.Context) *PermissionError {
	var pe *PermissionError
	if errors.As(context.Cause(ctx), &pe) {
		return pe
	}
	return nil
}

// RawRequest sends body to subject, a request outside the JetStream API (not traced),
// and returns the reply. When the client has Denials, a denied publish fails at once
// with a *PermissionError.
func (c *Client) RawRequest(ctx context.Context, subject string, body []byte) (*nats.Msg, error) {
	return c.watched(ctx, subject, body, c.NC.RequestWithContext)
}

// watched sends a request with send, failing it at once with a *PermissionError when
// the client has Denials and the publish is denied.
func (c *Client) watched(ctx context.Context, subject string, body []byte,
	send func(context.Context, string, []byte) (*nats.Msg, error)) (*nats.Msg, error) {
	if c.Denials == nil {
		return send(ctx, subject, body)
	}
	wctx, done := c.Denials.Watch(ctx, subject)
	defer done()
	msg, err := send(wctx, subject, body)
	if err != nil {
		if pe := Denied(wctx); pe != nil {
			return nil, pe
		}
	}
	return msg, err
}
