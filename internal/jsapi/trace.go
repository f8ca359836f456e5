package jsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Tracer writes every request and its reply, for --trace. Requests run in parallel,
// so each line carries the request's number and is written whole.
type Tracer struct {
	mu  sync.Mutex
	w   io.Writer
	seq atomic.Int64
}

// NewTracer returns a tracer writing to w.
func NewTracer(w io.Writer) *Tracer { return &Tracer{w: w} }

// request writes a request and returns its number.
func (t *Tracer) request(subject string, body []byte) int64 {
	n := t.seq.Add(1)
	t.write(fmt.Sprintf(">>> #%d %s %s\n", n, subject, redact(body)))
	return n
}

// reply writes the reply to request n, or the error that ended it.
func (t *Tracer) reply(n int64, subject string, took time.Duration, body []byte, err error) {
	took = took.Round(time.Microsecond)
	if err != nil {
		t.write(fmt.Sprintf("<<< #%d %s (%s) error: %v\n", n, subject, took, err))
		return
	}
	t.write(fmt.Sprintf("<<< #%d %s (%s) %s\n", n, subject, took, redact(body)))
}

func (t *Tracer) write(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	io.WriteString(t.w, s)
}

// secretKeys are JSON fields whose values a trace never shows.
var secretKeys = map[string]bool{
	"password": true, "pass": true, "token": true, "auth_token": true, "jwt": true,
	"user_jwt": true, "seed": true, "user_seed": true, "nkey": true, "sig": true, "creds": true,
}

// redact is body as one compact line, with the values of secret-looking fields
// replaced; a body that is not JSON is shown as its length.
func redact(body []byte) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return "(empty)"
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Sprintf("(%d bytes, not JSON)", len(body))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(scrub(v)); err != nil {
		return fmt.Sprintf("(%d bytes)", len(body))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func scrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if secretKeys[strings.ToLower(k)] {
				x[k] = "[redacted]"
				continue
			}
			x[k] = scrub(val)
		}
	case []any:
		for i := range x {
			x[i] = scrub(x[i])
		}
	}
	return v // maps and slices are scrubbed in place
}
