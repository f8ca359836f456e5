package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// syncBuffer is a buffer a process writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStatusWatchInterruptedMidSample: the first Ctrl-C ends status --watch by its
// last whole sample, also when it comes while a sample is being read (here the server
// is held silent by a proxy, so the sample can not finish): the sample in flight is
// dropped, and the exit code is that of the last whole one (0: healthy), not 130.
func TestStatusWatchInterruptedMidSample(t *testing.T) {
	bin := natsplanBinary(t)
	for _, tc := range []struct {
		name string
		args func(url string) ([]string, []string)
	}{
		{"one server", func(url string) ([]string, []string) {
			return []string{"status", "--watch", "100ms", "../../examples/orders"}, []string{"NATS_URL=" + url}
		}},
		{"environments", func(url string) ([]string, []string) {
			dir := t.TempDir()
			src, err := os.ReadFile("../../examples/orders/orders.hcl")
			if err != nil {
				t.Fatal(err)
			}
			blocks := "\nenvironment \"one\" {\n  servers = env(\"ONE_URL\")\n}\n"
			if err := os.WriteFile(filepath.Join(dir, "orders.hcl"), append(src, blocks...), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"status", "--watch", "100ms", dir}, []string{"ONE_URL=" + url}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			if code, out, errOut := cli(t, s.ClientURL(), "apply", "--auto-approve", "../../examples/orders"); code != 0 {
				t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
			}
			proxy := testsrv.StartProxy(t, s.ClientURL(), 0)
			args, env := tc.args(proxy.URL)
			var stdout, stderr syncBuffer
			cmd := exec.Command(bin, args...)
			cmd.Env = append([]string{"HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "NO_COLOR=1"}, env...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// Two whole samples, then the server falls silent: the next sample hangs.
			for strings.Count(stdout.String(), "Healthy") < 2 {
				select {
				case err := <-exited:
					t.Fatalf("status ended on its own (%v)\n%s\n%s", err, stdout.String(), stderr.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			proxy.Stall()
			defer proxy.Resume()
			time.Sleep(300 * time.Millisecond) // past the next tick: a sample is in flight
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			var werr error
			select {
			case werr = <-exited:
			case <-time.After(time.Minute): // a hang guard, not a speed check
				_ = cmd.Process.Kill()
				t.Fatalf("status --watch kept running after Ctrl-C\n%s", stderr.String())
			}
			var ee *exec.ExitError
			if werr != nil && errors.As(werr, &ee) {
				t.Fatalf("exit %d, want 0 (the last whole sample was healthy)\nstdout:\n%s\nstderr:\n%s", ee.ExitCode(), stdout.String(), stderr.String())
			} else if werr != nil {
				t.Fatal(werr)
			}
		})
	}
}
