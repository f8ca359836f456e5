package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// cli runs natsplan in-process against url with args and returns the exit code and output.
func cli(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"NATS_URL": url, "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	code := run(args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func(k string) string { return env[k] })
	if strings.Contains(errOut.String(), "goroutine ") || strings.Contains(errOut.String(), "panic:") {
		t.Fatalf("natsplan %v crashed:\n%s", args, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// counter counts JetStream API requests that change something on the server. Read
// it after settle.
type counter struct {
	atomic.Int64
	nc   *nats.Conn
	subs []*nats.Subscription
}

// settle counts every request the commands run so far sent: each command drains its
// connection before it returns (so the server has passed every request it sent on to
// the counter), a flush on the counter's own connection is then a barrier behind them,
// and the subscriptions are synchronous, so that every message before the barrier is
// queued, not in a callback still to run.
func (c *counter) settle(t *testing.T) {
	t.Helper()
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, sub := range c.subs {
		queued, _, err := sub.Pending()
		if err != nil {
			t.Fatal(err)
		}
		for range queued {
			m, err := sub.NextMsg(time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// Sources and mirrors make the server send its own consumer requests
			// (replies on $JSC subjects); only clients reply on inboxes.
			if strings.HasPrefix(m.Reply, nats.InboxPrefix) {
				c.Add(1)
			}
		}
	}
}

func writeCounter(t *testing.T, s *embedded.Server) *counter {
	t.Helper()
	return countWrites(t, testsrv.Connect(t, s))
}

// countWrites counts the write requests of nc's account, listening on nc.
func countWrites(t *testing.T, nc *nats.Conn) *counter {
	t.Helper()
	n := &counter{nc: nc}
	for _, subj := range []string{"$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>",
		"$JS.API.CONSUMER.CREATE.>", "$JS.API.CONSUMER.DURABLE.CREATE.>", "$JS.API.CONSUMER.DELETE.>", "$JS.API.CONSUMER.PAUSE.>"} {
		sub, err := nc.SubscribeSync(subj)
		if err != nil {
			t.Fatal(err)
		}
		n.subs = append(n.subs, sub)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return n
}

// exampleDirs are the folders of runnable configurations of one target: every
// example without environment blocks (envExampleDirs has those), and
// testdata/converge, which sets every stream and consumer field to a non-default value.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range allExampleDirs(t) {
		if !mayDeclareEnvironments([]string{dir}) {
			out = append(out, dir)
		}
	}
	return out
}

// envExampleDirs are the runnable examples with environment blocks.
func envExampleDirs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range allExampleDirs(t) {
		if mayDeclareEnvironments([]string{dir}) {
			out = append(out, dir)
		}
	}
	return out
}

func allExampleDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, dir := range append(dirs, "testdata/converge") {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		hcl, _ := filepath.Glob(filepath.Join(dir, "*.hcl"))
		if len(hcl) == 0 || filepath.Base(dir) == "invalid" {
			continue // examples/invalid holds one broken config per rule; examples/ci a workflow
		}
		out = append(out, dir)
	}
	return out
}

// TestExamplesConverge applies every example, then proves plan is empty (exit 0 with
// --detailed-exitcode) and that a second apply sends no write request.
func TestExamplesConverge(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s := testsrv.Start(t)
			url := s.ClientURL()
			writes := writeCounter(t, s)
			code, out, errOut := cli(t, url, "apply", "--auto-approve", dir)
			if code != 0 {
				t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
			}
			writes.settle(t)
			if writes.Load() == 0 {
				t.Fatal("the first apply sent no write request the counter saw: the counter is broken")
			}
			writes.Store(0)
			code, out, errOut = cli(t, url, "plan", "--detailed-exitcode", dir)
			if code != 0 {
				t.Fatalf("plan after apply: exit %d, want 0 (no changes)\n%s\n%s", code, out, errOut)
			}
			code, out, errOut = cli(t, url, "apply", "--auto-approve", dir)
			if code != 0 {
				t.Fatalf("second apply exit %d\n%s\n%s", code, out, errOut)
			}
			writes.settle(t)
			if n := writes.Load(); n != 0 {
				t.Fatalf("second apply sent %d write requests, want 0\n%s\n%s", n, out, errOut)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	hello := "../../examples/hello"
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	if err := os.WriteFile(bad, []byte("stream \"X\" {\n  max_agee = \"1h\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unformatted := filepath.Join(t.TempDir(), "u.hcl")
	if err := os.WriteFile(unformatted, []byte("natsplan {\nproject=\"x\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		{"validate ok", []string{"validate", hello}, 0, "Valid"},
		{"validate error", []string{"validate", bad}, 1, "bad.hcl:2:3"},
		{"plan with changes", []string{"plan", hello}, 0, "to create"},
		{"plan detailed", []string{"plan", "--detailed-exitcode", hello}, 2, "to create"},
		{"plan bad format", []string{"plan", "--format", "yaml", hello}, 1, "unknown --format"},
		{"apply without tty", []string{"apply", hello}, 1, "--auto-approve"},
		{"fmt check", []string{"fmt", "--check", unformatted}, 3, "u.hcl"},
		{"unknown flag", []string{"plan", "--bogus"}, 1, "unknown flag"},
		{"unknown command", []string{"frobnicate"}, 1, "unknown command"},
		{"drift with missing objects", []string{"drift", hello}, 2, "missing"},
		{"show without file", []string{"show"}, 1, "arg"},
		{"no server", []string{"plan", "-s", "nats://127.0.0.1:1", hello}, 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := cli(t, url, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			if !strings.Contains(out+errOut, c.out) {
				t.Fatalf("output lacks %q\nstdout:\n%s\nstderr:\n%s", c.out, out, errOut)
			}
		})
	}
}
