package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// BenchmarkEnvironments measures what one configuration with environments costs
// against one environment: a no-change `natsplan plan` of N streams × 2 consumers in
// each of three environments (one process; the environments are loaded from files
// parsed once and planned in parallel) next to the same plan of one of them
// (`--env e0`), as whole processes: start, load, connect, read, compute, render.
// Each round runs both, and the best of each is reported with their ratio.
//
// The servers run in the benchmark's process, so on one machine their work competes
// with natsplan's for the same cores, which real remote servers do not. Each case runs
// with the servers reached directly and through proxies that delay each direction by
// 1ms (servers in the same region) and by 5ms (another region). Each round also runs
// the raw floor the same way: three independent raw readers (the harness's -raw read,
// one process per server, all at once) against one, so the report shows how much of
// the ratio the servers and the shared cores impose on any reader.
//
//	go test ./bench -run '^$' -bench Environments -benchtime 3x            # N = 1,000
//	NATSPLAN_BENCH_N=200 go test ./bench -run '^$' -bench Environments -benchtime 3x
func BenchmarkEnvironments(b *testing.B) {
	const envs = 3
	n := 1000
	if v := os.Getenv("NATSPLAN_BENCH_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("NATSPLAN_BENCH_N=%q: want a positive number of streams", v)
		}
	}
	bin, err := buildNatsplan(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	harness, err := buildHarness(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	single := filepath.Join(b.TempDir(), "single")
	if err := writeConfig(single, n); err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	urls := make([]string, envs)
	for i := range envs {
		s := testsrv.Start(b, func(o *embedded.Options) {
			o.Name = fmt.Sprintf("env%d", i)
			o.DefaultMaxConsumers = -1
		})
		urls[i] = s.ClientURL()
		if out, err := natsplan(bin, home, nil, "apply", "--auto-approve", "-s", urls[i], single); err != nil {
			b.Fatalf("apply to env%d: %v\n%s", i, err, out)
		}
	}
	// The configuration with environments is the same files plus environment blocks.
	multi := filepath.Join(b.TempDir(), "multi")
	if err := writeConfig(multi, n); err != nil {
		b.Fatal(err)
	}
	var blocks strings.Builder
	for i := range envs {
		fmt.Fprintf(&blocks, "environment \"e%d\" {\n  servers = env(\"E%d_URL\")\n}\n\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(multi, "environments.hcl"), []byte(blocks.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, delay := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
		b.Run(fmt.Sprintf("n=%d/delay=%s", n, delay), func(b *testing.B) {
			env := map[string]string{}
			for i, u := range urls {
				if delay > 0 {
					u = testsrv.StartProxy(b, u, delay).URL
				}
				env[fmt.Sprintf("E%d_URL", i)] = u
			}
			var best3, best1, floor3, floor1 proc
			for b.Loop() {
				p3, err := timedRun(bin, home, env, "plan", "--detailed-exitcode", multi)
				if err != nil {
					b.Fatal(err)
				}
				p1, err := timedRun(bin, home, env, "plan", "--detailed-exitcode", "--env", "e0", multi)
				if err != nil {
					b.Fatal(err)
				}
				f3, err := rawReaders(harness, home, n, env, envs)
				if err != nil {
					b.Fatal(err)
				}
				f1, err := rawReaders(harness, home, n, env, 1)
				if err != nil {
					b.Fatal(err)
				}
				best3, best1 = best3.best(p3), best1.best(p1)
				floor3, floor1 = floor3.best(f3), floor1.best(f1)
			}
			b.ReportMetric(float64(best3.took.Milliseconds()), "ms-3-envs")
			b.ReportMetric(float64(best1.took.Milliseconds()), "ms-1-env")
			b.ReportMetric(float64(best3.took)/float64(best1.took), "ratio")
			// natsplan's own CPU (user + system) in the best runs: with the servers
			// on the same cores, a ratio near 3 means the run was bound by CPU.
			b.ReportMetric(float64(best3.cpu.Milliseconds()), "cpu-ms-3-envs")
			b.ReportMetric(float64(best1.cpu.Milliseconds()), "cpu-ms-1-env")
			// The same ratio for the raw floor: independent raw readers of the same
			// servers, one per environment, all at once, against one. What the
			// servers' own work on shared cores costs shows here too.
			b.ReportMetric(float64(floor3.took)/float64(floor1.took), "floor-ratio")
			b.ReportMetric(float64(floor3.took.Milliseconds()), "floor-ms-3-envs")
			b.ReportMetric(float64(floor1.took.Milliseconds()), "floor-ms-1-env")
		})
	}
}

// natsplan runs the binary with only env (and a private HOME, so no nats CLI context
// of the machine is read) as its environment.
func natsplan(bin, home string, env map[string]string, args ...string) ([]byte, error) {
	cmd := command(bin, home, env, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func command(bin, home string, env map[string]string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// timedRun runs a no-change plan and returns its wall and CPU time (not its RSS);
// any exit but 0 is an error, so that a plan that failed or found changes is never
// measured as fast.
func timedRun(bin, home string, env map[string]string, args ...string) (proc, error) {
	cmd := command(bin, home, env, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		return proc{}, fmt.Errorf("natsplan %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	return proc{took: took, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

// rawReaders runs k raw readers at once, the harness's -raw read as processes of
// their own at parallelism 64, reader i reading environment i's server (E<i>_URL in
// env), and returns the wall time until the last one ended and their CPU time summed.
func rawReaders(harness, home string, n int, env map[string]string, k int) (proc, error) {
	cmds := make([]*exec.Cmd, k)
	outs := make([]*bytes.Buffer, k)
	start := time.Now()
	for i := range k {
		cmds[i] = command(harness, home, nil, "-raw", "read", "-url", env[fmt.Sprintf("E%d_URL", i)], "-n", strconv.Itoa(n))
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			return proc{}, err
		}
	}
	var p proc
	var failed error
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil && failed == nil {
			failed = fmt.Errorf("raw read of environment %d: %v\n%s", i, err, outs[i].Bytes())
		}
		p.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	p.took = time.Since(start)
	return p, failed
}
