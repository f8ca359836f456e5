package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
)

// proc is one whole-process run: wall time from start to exit, and peak RSS.
type proc struct {
	took time.Duration
	cpu  time.Duration // user + system
	rss  int64         // bytes
}

func (p proc) String() string {
	return fmt.Sprintf("%s (CPU %s), %s RSS", round(p.took), round(p.cpu), mib(p.rss))
}

// best keeps the faster of two runs (a zero p is no run yet).
func (p proc) best(q proc) proc {
	if p.took == 0 || q.took < p.took {
		return q
	}
	return p
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// runProc runs a command to its end and measures it. want is the exit code it must
// end with. The command runs under a fresh process of this harness (-measure), which
// times it and reads its peak RSS: Linux carries the peak RSS of the process that
// starts a command into the command's own, so measured from this process (which holds
// a server), every command would seem at least as big as the harness.
func runProc(self string, want int, name string, args ...string) (proc, error) {
	cmd := exec.Command(self, append([]string{"-measure", "--", name}, args...)...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		return proc{}, fmt.Errorf("measure %s %v: %w: %s", filepath.Base(name), args, err, errs.Bytes())
	}
	var m measured
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		return proc{}, fmt.Errorf("measure %s %v: %w", filepath.Base(name), args, err)
	}
	if m.Code != want {
		return proc{}, fmt.Errorf("%s %v: exit %d, want %d: %s", filepath.Base(name), args, m.Code, want, m.Output)
	}
	return proc{took: time.Duration(m.Took), cpu: time.Duration(m.CPU), rss: m.RSS}, nil
}

// measured is what -measure prints: the command's wall and CPU (user + system) time in
// nanoseconds, its peak RSS in bytes, its exit code and the start of its output.
type measured struct {
	Took   int64  `json:"took"`
	CPU    int64  `json:"cpu"`
	RSS    int64  `json:"rss"`
	Code   int    `json:"code"`
	Output string `json:"output"`
}

// measure runs args as a command and prints what it measured as JSON (-measure).
func measure(args []string) error {
	if len(args) == 0 {
		return errors.New("-measure: no command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out := &limitedBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return err
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return json.NewEncoder(os.Stdout).Encode(measured{Took: int64(took), CPU: int64(cpu), RSS: rss, Code: code, Output: string(out.b)})
}

// limitedBuffer keeps the first max bytes written to it, for error messages.
type limitedBuffer struct {
	b   []byte
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// buildNatsplan builds the natsplan command into dir, from the module this harness
// belongs to.
func buildNatsplan(dir string) (string, error) {
	return build(dir, "natsplan", "github.com/natsplan/natsplan/cmd/natsplan")
}

// buildHarness builds this harness into dir, for its -raw modes run as processes of
// their own from a benchmark.
func buildHarness(dir string) (string, error) {
	return build(dir, "bench", "github.com/natsplan/natsplan/bench")
}

func build(dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	return bin, nil
}

// rawProcess is the harness run as a process of its own (-raw read|create): an
// independent raw reader or creator, the whole-process floor. It connects to url and
// reads or creates the n streams × 2 consumers at parallelism par.
func rawProcess(mode, url string, n, par int) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	js := jsapi.New(nc, "", 30*time.Second)
	switch mode {
	case "read":
		return rawReadAll(context.Background(), js, n, par)
	case "create":
		return rawCreateAll(context.Background(), js, n, par)
	}
	return fmt.Errorf("-raw %q: want read or create", mode)
}

// processes measures natsplan and the raw floors as whole processes against the
// server at url: process start, connect, load and exit included. It expects what
// natsplan applied to be on the server and leaves it so.
type processes struct {
	natsplan, self, url, dir string
	n, par                   int
	// js deletes everything between the create runs.
	js *jsapi.Client
}

// round runs plan and the raw read, then the raw create and apply, each once.
func (p processes) round(ctx context.Context) (plan, read, apply, create proc, err error) {
	np := []string{"--no-context", "-s", p.url, "--timeout", "30s"}
	n, par := strconv.Itoa(p.n), strconv.Itoa(p.par)
	if plan, err = runProc(p.self, 0, p.natsplan, append([]string{"plan", "--detailed-exitcode"}, append(np, p.dir)...)...); err != nil {
		return
	}
	if read, err = runProc(p.self, 0, p.self, "-raw", "read", "-url", p.url, "-n", n, "-raw-parallelism", par); err != nil {
		return
	}
	if err = deleteAll(ctx, p.js, p.n, 64); err != nil {
		return
	}
	if create, err = runProc(p.self, 0, p.self, "-raw", "create", "-url", p.url, "-n", n, "-raw-parallelism", par); err != nil {
		return
	}
	if err = deleteAll(ctx, p.js, p.n, 64); err != nil {
		return
	}
	apply, err = runProc(p.self, 0, p.natsplan, append([]string{"apply", "--auto-approve"}, append(np, p.dir)...)...)
	return
}
