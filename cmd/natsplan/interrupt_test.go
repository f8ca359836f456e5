package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/ctxtest"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// natsplanBinary is a path that runs natsplan as its own process: the test binary
// runs the natsplan command when called by that name (TestMain).
func natsplanBinary(t *testing.T) string {
	t.Helper()
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "natsplan")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// cpuTicks is the CPU time a process has used, in clock ticks (/proc/PID/stat).
func cpuTicks(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may hold spaces; the fields after it are fixed.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, err1 := strconv.Atoi(fields[11])
	stime, err2 := strconv.Atoi(fields[12])
	return utime + stime, errors.Join(err1, err2)
}

// TestInterruptExits130 runs natsplan as its own process on a configuration far too
// large to finish quickly, sends one SIGINT or SIGTERM once the process is busy, and
// requires exit 130 with nothing done: no result printed, nothing written to the
// server, no "requests in flight" (there are none). Busy is measured in CPU used, not
// in time waited.
func TestInterruptExits130(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see that the process is busy")
	}
	if testing.Short() {
		t.Skip("writes and loads a large configuration")
	}
	bin := natsplanBinary(t)
	dir := ctxtest.WriteLargeConfig(t, 8, 1500)
	// The same configuration in two environments on the same server: loaded once,
	// built twice, planned in parallel.
	envDir := ctxtest.WriteLargeConfig(t, 8, 1500)
	envBlocks := "environment \"blue\" {\n  servers = env(\"BLUE_URL\")\n}\n\nenvironment \"green\" {\n  servers = env(\"GREEN_URL\")\n}\n"
	if err := os.WriteFile(filepath.Join(envDir, "environments.hcl"), []byte(envBlocks), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := testsrv.Start(t)
	for _, tc := range []struct {
		name string
		args []string
		sig  syscall.Signal
		// busy is the CPU, in clock ticks, the process has used when it is
		// interrupted: 0.2s by default, while it loads.
		busy int
	}{
		{"validate SIGINT", []string{"validate", dir}, syscall.SIGINT, 0},
		{"validate SIGTERM", []string{"validate", dir}, syscall.SIGTERM, 0},
		{"plan SIGTERM", []string{"plan", dir}, syscall.SIGTERM, 0},
		// Interrupted while planning: nothing is in flight yet, so nothing is written.
		{"apply SIGINT", []string{"apply", "--auto-approve", dir}, syscall.SIGINT, 0},
		{"plan environments SIGINT", []string{"plan", envDir}, syscall.SIGINT, 0},
		{"apply environments SIGTERM", []string{"apply", "--auto-approve", envDir}, syscall.SIGTERM, 0},
		// 2.5s of CPU: past loading and building both environments' models, while
		// the environments are planned in parallel.
		{"plan environments planning SIGINT", []string{"plan", envDir}, syscall.SIGINT, 250},
		{"apply environments planning SIGINT", []string{"apply", "--auto-approve", envDir}, syscall.SIGINT, 250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = append(os.Environ(), "NATS_URL="+srv.ClientURL(), "BLUE_URL="+srv.ClientURL(), "GREEN_URL="+srv.ClientURL(), "NO_COLOR=1")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// Busy: a fifth of a second of CPU, far past starting up and installing
			// the signal handler, far short of the work.
			threshold := tc.busy
			if threshold == 0 {
				threshold = 20
			}
			for busy := false; !busy; {
				select {
				case err := <-exited:
					t.Fatalf("natsplan ended before it was interrupted (%v): the configuration is too small\n%s", err, stderr.String())
				case <-time.After(10 * time.Millisecond):
				}
				ticks, err := cpuTicks(cmd.Process.Pid)
				if err != nil {
					t.Fatal(err)
				}
				busy = ticks >= threshold
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var werr error
			select {
			case werr = <-exited:
			case <-time.After(2 * time.Minute): // a hang guard, not a speed check
				_ = cmd.Process.Kill()
				t.Fatalf("natsplan kept running after %v\n%s", tc.sig, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(werr, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("exit: %v, want exit status %d\nstderr:\n%s", werr, exitInterrupted, stderr.String())
			}
			if got := stderr.String(); !strings.Contains(got, "Interrupted.") || strings.Contains(got, "in flight") ||
				strings.Contains(got, "Error:") {
				t.Errorf("stderr = %q, want only the interruption", got)
			}
			if stdout.Len() != 0 {
				t.Errorf("an interrupted command printed a result:\n%s", stdout.String())
			}
			jsz, err := srv.Jsz(&server.JSzOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if jsz.Streams != 0 {
				t.Errorf("after an interrupted command the server holds %d streams", jsz.Streams)
			}
		})
	}
}
