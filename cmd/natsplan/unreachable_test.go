package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// markWriter calls onMark once, from inside Write, when a line containing marker is
// written.
type markWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	onMark func()
	at     int // the length of the output when the marker was written
}

func (w *markWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.onMark != nil && strings.Contains(string(p), w.marker) {
		w.at = w.buf.Len()
		w.onMark()
		w.onMark = nil
	}
	return n, err
}

// after is what was written after the marker.
func (w *markWriter) after() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()[w.at:]
}

// TestApplyServerGoesAway: the server goes away in the middle of an apply. Nothing new
// is sent while the connection is down; when it comes back within the reconnect
// window (twice --timeout) the apply completes, and when it does not the apply stops
// with one line saying the server is unreachable and what is done, unknown and not
// started.
func TestApplyServerGoesAway(t *testing.T) {
	cases := []struct {
		name     string
		back     time.Duration // 0: never
		wantCode int
	}{
		{"back within the window", 300 * time.Millisecond, 0},
		{"gone", 0, exitError},
	}
	var src strings.Builder
	src.WriteString("natsplan {\n  project = \"shop\"\n}\n")
	for i := range 8 {
		fmt.Fprintf(&src, "stream \"S%d\" {\n  subjects = [\"s%d.>\"]\n}\n", i, i)
		fmt.Fprintf(&src, "consumer \"S%d\" \"c\" {\n  ack_policy = \"explicit\"\n}\n", i)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			proxy := testsrv.StartProxy(t, s.ClientURL(), 0)
			dir := writeConfig(t, map[string]string{"shop.hcl": src.String()})
			errOut := &markWriter{marker: "stream.S2: created", onMark: func() {
				proxy.Cut()
				if tc.back > 0 {
					time.AfterFunc(tc.back, proxy.Restore)
				}
			}}
			var out bytes.Buffer
			env := map[string]string{"NATS_URL": proxy.URL, "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
			code := run([]string{"apply", "--auto-approve", "--timeout", "1s", "--parallelism", "1", dir},
				&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: errOut}, func(k string) string { return env[k] })
			if code != tc.wantCode {
				t.Fatalf("apply: exit %d, want %d\n%s\n%s", code, tc.wantCode, out.String(), errOut.buf.String())
			}
			if tc.wantCode == 0 {
				if !strings.Contains(out.String(), "Apply complete: 16 changes done.") {
					t.Errorf("apply did not complete\n%s\n%s", out.String(), errOut.buf.String())
				}
				if code, out, errOut := cli(t, s.ClientURL(), "plan", "--detailed-exitcode", dir); code != 0 {
					t.Errorf("plan after the apply: exit %d, want 0 (no changes)\n%s\n%s", code, out, errOut)
				}
				return
			}
			// Besides the start of the change in flight when the server went away,
			// one line.
			after := strings.TrimSpace(errOut.after())
			var lines []string
			for _, l := range strings.Split(after, "\n") {
				if !strings.HasSuffix(l, ": creating...") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "Error: the server is unreachable (no connection for 2") ||
				!strings.Contains(lines[0], "3 done,") || !strings.Contains(lines[0], "outcome unknown") || !strings.Contains(lines[0], "not started") {
				t.Errorf("after the server went away, want one line saying so with the counts; got:\n%s", after)
			}
			if strings.Contains(out.String(), "Apply incomplete") {
				t.Errorf("the counts are said twice\n%s", out.String())
			}
		})
	}
}

// TestApplySlowServer: the server becomes slower than --timeout in the middle of an
// apply. Its requests time out although it carries them out; apply reads each object
// back, reports it done, runs what depends on it, and completes.
func TestApplySlowServer(t *testing.T) {
	s := testsrv.Start(t)
	proxy := testsrv.StartProxy(t, s.ClientURL(), 0)
	var src strings.Builder
	src.WriteString("natsplan {\n  project = \"shop\"\n}\n")
	for i := range 4 {
		fmt.Fprintf(&src, "stream \"S%d\" {\n  subjects = [\"s%d.>\"]\n}\n", i, i)
		fmt.Fprintf(&src, "consumer \"S%d\" \"c\" {\n  ack_policy = \"explicit\"\n}\n", i)
	}
	dir := writeConfig(t, map[string]string{"shop.hcl": src.String()})
	// From the first change on, a round trip takes 400ms, above the 250ms timeout.
	errOut := &markWriter{marker: ": creating...", onMark: func() { proxy.SetDelay(200 * time.Millisecond) }}
	var out bytes.Buffer
	env := map[string]string{"NATS_URL": proxy.URL, "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	code := run([]string{"apply", "--auto-approve", "--timeout", "250ms", dir},
		&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: errOut}, func(k string) string { return env[k] })
	if code != 0 || !strings.Contains(out.String(), "Apply complete: 8 changes done.") {
		t.Fatalf("apply: exit %d, want 0 with every change done\n%s\n%s", code, out.String(), errOut.buf.String())
	}
	if n := strings.Count(errOut.buf.String(), "read back: "); n != 8 {
		t.Errorf("%d changes read back, want all 8 (every request timed out)\n%s", n, errOut.buf.String())
	}
	if code, out, errOut := cli(t, s.ClientURL(), "plan", "--detailed-exitcode", dir); code != 0 {
		t.Errorf("plan after the apply: exit %d, want 0 (no changes)\n%s\n%s", code, out, errOut)
	}
}
