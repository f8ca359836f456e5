package groups_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/seed"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/schema"
)

// env is one test's server and the model created on it.
type env struct {
	t   *testing.T
	s   *embedded.Server
	nc  *nats.Conn
	js  jetstream.JetStream
	m   *model.Model
	ctx context.Context
}

// setup loads paths (or src when given), creates every stream and consumer of the
// expanded model on a fresh server, as apply would send them, and returns the env.
func setup(t *testing.T, src string, paths ...string) *env {
	t.Helper()
	if src != "" {
		path := filepath.Join(t.TempDir(), "config.hcl")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = []string{path}
	}
	m, diags := schema.Load(paths, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	api := jsapi.New(nc, "", 5*time.Second)
	if err := seed.Create(ctx, api, m); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, s: s, nc: nc, js: js, m: m, ctx: ctx}
}

// publish publishes subjects, each with its own subject as the payload, in order on
// one connection, so the stream stores them in that order, and waits for every ack.
func (e *env) publish(subjects []string) {
	e.t.Helper()
	for _, subj := range subjects {
		if _, err := e.js.PublishAsync(subj, []byte(subj)); err != nil {
			e.t.Fatal(err)
		}
	}
	select {
	case <-e.js.PublishAsyncComplete():
	case <-e.ctx.Done():
		e.t.Fatal("publish acks not received")
	}
}

// worker is one worker process: its own connection, pulling from the named durables.
type worker struct {
	js jetstream.JetStream
}

func (e *env) worker() *worker {
	e.t.Helper()
	nc := testsrv.Connect(e.t, e.s)
	js, err := jetstream.New(nc)
	if err != nil {
		e.t.Fatal(err)
	}
	return &worker{js: js}
}

// pull runs one pull loop on durable until ctx ends: fetch batch messages, hand each
// to handle, which acks. It reports fetch errors other than the end of the test.
func (w *worker) pull(ctx context.Context, t *testing.T, wg *sync.WaitGroup, stream, durable string, batch int,
	handle func(jetstream.Msg)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := w.js.Consumer(ctx, stream, durable)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("consumer %s: %v", durable, err)
			}
			return
		}
		for ctx.Err() == nil {
			b, err := c.Fetch(batch, jetstream.FetchMaxWait(250*time.Millisecond))
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("fetch %s: %v", durable, err)
				}
				return
			}
			for m := range b.Messages() {
				handle(m)
			}
		}
	}()
}

func consumerKey(stream, name string) model.ConsumerKey {
	return model.ConsumerKey{Stream: stream, Name: name}
}

// created returns n order-created subjects for distinct customers.
func created(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("orders.c%d.created", i)
	}
	return out
}
