package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// stream is a stream change; cfg is the config JSON without the name.
func stream(a plan.Action, name string, step int, cfg string, deps ...string) *plan.Change {
	return &plan.Change{
		Address: "stream." + name, Kind: model.KindStream, Name: name, Action: a, Step: step,
		After: withField(cfg, "name", name), DependsOn: deps,
	}
}

// consumer is a consumer change; cfg is the config JSON without the durable name.
func consumer(a plan.Action, strm, name string, step int, cfg string, deps ...string) *plan.Change {
	return &plan.Change{
		Address: "consumer." + strm + "." + name, Kind: model.KindConsumer, Name: name, Stream: strm,
		Action: a, Step: step, After: withField(cfg, "durable_name", name), DependsOn: deps,
	}
}

// withField sets key to value in the JSON object cfg; "" is a delete (no config).
func withField(cfg, key, value string) json.RawMessage {
	if cfg == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(cfg), &m); err != nil {
		panic(err)
	}
	m[key] = value
	b, _ := json.Marshal(m)
	return b
}

// mustRun runs p and fails the test on a refusal or start error.
func mustRun(t *testing.T, c *jsapi.Client, p *plan.Plan, o Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), c, p, o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(res.Steps) != len(p.Changes) {
		t.Fatalf("result has %d steps, plan %d changes", len(res.Steps), len(p.Changes))
	}
	return res
}

// statuses maps each address to its status.
func statuses(res *Result) map[string]Status {
	m := map[string]Status{}
	for _, s := range res.Steps {
		m[s.Address] = s.Status
	}
	return m
}

// seed sends raw stream and consumer configs, failing the test on any error.
func seedStream(t *testing.T, c *jsapi.Client, name, cfg string) {
	t.Helper()
	if _, err := c.CreateStream(context.Background(), name, withField(cfg, "name", name)); err != nil {
		t.Fatal(err)
	}
}

func seedConsumer(t *testing.T, c *jsapi.Client, strm, name, cfg string) {
	t.Helper()
	if _, err := c.WriteConsumer(context.Background(), strm, name, withField(cfg, "durable_name", name), jsapi.ConsumerCreate); err != nil {
		t.Fatal(err)
	}
}

func streamInfo(t *testing.T, c *jsapi.Client, name string) *server.StreamInfo {
	t.Helper()
	si, err := c.StreamInfo(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return si
}

func consumerInfo(t *testing.T, c *jsapi.Client, strm, name string) *server.ConsumerInfo {
	t.Helper()
	ci, err := c.ConsumerInfo(context.Background(), strm, name)
	if err != nil {
		t.Fatal(err)
	}
	return ci
}

// snapshot is every stream and consumer config on the server, keyed by address, to
// prove a refused run changed nothing.
func snapshot(t *testing.T, c *jsapi.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	page, err := c.ListStreams(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, si := range page.Streams {
		b, _ := json.Marshal(si.Config)
		out["stream."+si.Config.Name] = fmt.Sprintf("%s msgs=%d", b, si.State.Msgs)
		cp, err := c.ListConsumers(ctx, si.Config.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ci := range cp.Consumers {
			b, _ := json.Marshal(ci.Config)
			out["consumer."+si.Config.Name+"."+ci.Name] = string(b)
		}
	}
	return out
}

// lines is a progress writer that is safe to read while Run writes, and can call a
// function when a line containing a marker is written.
type lines struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	onMark func()
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.onMark != nil && strings.Contains(string(p), l.marker) {
		l.onMark()
		l.onMark = nil
	}
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lineIndex returns the index of the first progress line starting with prefix, or -1.
func lineIndex(out, prefix string) int {
	for i, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}
