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
// 1ms (servers in the same region) and by 5ms (another region).
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
			var best3, best1 proc
			for b.Loop() {
				p3, err := timedRun(bin, home, env, "plan", "--detailed-exitcode", multi)
				if err != nil {
					b.Fatal(err)
				}
				p1, err := timedRun(bin, home, env, "plan", "--detailed-exitcode", "--env", "e0", multi)
				if err != nil {
					b.Fatal(err)
				}
				best3, best1 = best3.best(p3), best1.best(p1)
			}
			b.ReportMetric(float64(best3.took.Milliseconds()), "ms-3-envs")
			b.ReportMetric(float64(best1.took.Milliseconds()), "ms-1-env")
			b.ReportMetric(float64(best3.took)/float64(best1.took), "ratio")
			// natsplan's own CPU (user + system) in the best runs: with the servers
			// on the same cores, a ratio near 3 means the run was bound by CPU.
			b.ReportMetric(float64(best3.cpu.Milliseconds()), "cpu-ms-3-envs")
			b.ReportMetric(float64(best1.cpu.Milliseconds()), "cpu-ms-1-env")
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
