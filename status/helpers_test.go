package status_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/seed"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/schema"
	"github.com/natsplan/natsplan/status"
)

// env is one test's server, the model the files declare, created on it as apply
// sends it, and a JetStream client to play the workers.
type env struct {
	t       *testing.T
	s       *embedded.Server
	api     *jsapi.Client
	js      jetstream.JetStream
	desired *model.Model
	ctx     context.Context
}

func setup(t *testing.T, src string) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, diags := schema.Load([]string{path}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	api := jsapi.New(nc, "", 5*time.Second)
	if err := seed.Create(ctx, api, m); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, s: s, api: api, js: e2js(t, s), desired: m, ctx: ctx}
}

// e2js is a worker's JetStream client on its own connection.
func e2js(t *testing.T, s *embedded.Server) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func (e *env) publish(subjects ...string) {
	e.t.Helper()
	for _, subj := range subjects {
		if _, err := e.js.Publish(e.ctx, subj, []byte(subj)); err != nil {
			e.t.Fatalf("publish %s: %v", subj, err)
		}
	}
}

func (e *env) consumer(stream, name string) jetstream.Consumer {
	e.t.Helper()
	c, err := e.js.Consumer(e.ctx, stream, name)
	if err != nil {
		e.t.Fatalf("consumer %s/%s: %v", stream, name, err)
	}
	return c
}

// fetch pulls n messages from stream/name with one fetch of batch that waits up to
// wait, and returns them unacknowledged; the fetch stays parked for the rest.
func (e *env) fetch(stream, name string, batch, n int, wait time.Duration) []jetstream.Msg {
	e.t.Helper()
	b, err := e.consumer(stream, name).Fetch(batch, jetstream.FetchMaxWait(wait))
	if err != nil {
		e.t.Fatal(err)
	}
	var out []jetstream.Msg
	for m := range b.Messages() {
		out = append(out, m)
		if len(out) == n {
			break
		}
	}
	if len(out) != n {
		e.t.Fatalf("fetch %s/%s: got %d messages, want %d (%v)", stream, name, len(out), n, b.Error())
	}
	return out
}

// drain runs one acking worker per declared consumer, fetching batch at a time, until
// a fetch comes back empty on every one of them.
func (e *env) drain(batch int) {
	e.t.Helper()
	var wg sync.WaitGroup
	for _, k := range e.desired.ConsumerKeys() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := e.js.Consumer(e.ctx, k.Stream, k.Name)
			if err != nil {
				e.t.Error(err)
				return
			}
			for {
				b, err := c.Fetch(batch, jetstream.FetchMaxWait(300*time.Millisecond))
				if err != nil {
					e.t.Error(err)
					return
				}
				n := 0
				for m := range b.Messages() {
					n++
					if err := m.Ack(); err != nil {
						e.t.Error(err)
					}
				}
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// report reads the server once and evaluates the sample.
func (e *env) report(th status.Thresholds) *status.Report {
	e.t.Helper()
	s, err := status.Read(e.ctx, e.api, e.desired, observe.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	return status.Evaluate(e.desired, s, nil, th)
}

// eventually evaluates until ok holds on two reads in a row that agree on the
// counters and findings, and returns the last report: the server counts messages into
// num_pending and parks pull requests a moment after the client call returns.
func (e *env) eventually(th status.Thresholds, ok func(*status.Report) bool) *status.Report {
	e.t.Helper()
	var r *status.Report
	last := ""
	for range 100 {
		r = e.report(th)
		if ok(r) {
			key := fingerprint(r)
			if key == last {
				return r
			}
			last = key
		} else {
			last = ""
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r
}

// fingerprint is what two reads of a settled server agree on.
func fingerprint(r *status.Report) string {
	var b strings.Builder
	for _, c := range r.Consumers {
		fmt.Fprintf(&b, "%s %d %d %d %d;", c.Name, c.NumPending, c.NumAckPending, c.NumRedelivered, c.NumWaiting)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%s %s;", f.Code, f.Address)
	}
	return b.String()
}

func codes(r *status.Report) map[finding.Code][]*status.Finding {
	out := map[finding.Code][]*status.Finding{}
	for _, f := range r.Findings {
		out[f.Code] = append(out[f.Code], f)
	}
	return out
}

func has(code finding.Code) func(*status.Report) bool {
	return func(r *status.Report) bool { return len(codes(r)[code]) > 0 }
}

func consumerRow(r *status.Report, stream, name string) *status.Consumer {
	for _, c := range r.Consumers {
		if c.Stream == stream && c.Name == name {
			return c
		}
	}
	return nil
}
