package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// BenchmarkPlanEnvironments measures a no-change plan of 300 streams on each of four
// servers: one plan over four environments (run four at a time) next to four plans of
// one environment each, run one after the other, and one environment alone. The
// servers are reached directly, and then through proxies that delay each direction by
// 5ms, as remote servers are: the environments run at the same time overlap their
// waits.
//
//	go test ./cmd/natsplan -run '^$' -bench PlanEnvironments -benchtime 5x
func BenchmarkPlanEnvironments(b *testing.B) {
	for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
		b.Run(fmt.Sprintf("delay %s", delay), func(b *testing.B) { benchPlanEnvironments(b, delay) })
	}
}

func benchPlanEnvironments(b *testing.B, delay time.Duration) {
	const envs, streams = 4, 300
	var objects strings.Builder
	for i := range streams {
		fmt.Fprintf(&objects, "stream \"S%03d\" {\n  subjects = [\"s%03d.>\"]\n}\n", i, i)
	}
	head := "natsplan {\n  project = \"shop\"\n}\n\n"
	vars := map[string]string{"HOME": b.TempDir(), "XDG_CONFIG_HOME": b.TempDir()}
	var all strings.Builder
	all.WriteString(head)
	for i := range envs {
		s := testsrv.Start(b, func(o *embedded.Options) { o.Name = fmt.Sprintf("srv-%d", i) })
		vars[fmt.Sprintf("E%d_URL", i)] = s.ClientURL()
		if delay > 0 {
			vars[fmt.Sprintf("E%d_URL", i)] = testsrv.StartProxy(b, s.ClientURL(), delay).URL
		}
		fmt.Fprintf(&all, "environment \"e%d\" {\n  servers = env(\"E%d_URL\")\n}\n\n", i, i)
		single := b.TempDir()
		writeFile(b, single, head+objects.String())
		if code, errOut := runWith(vars, map[string]string{"NATS_URL": s.ClientURL()}, "apply", "--auto-approve", single); code != 0 {
			b.Fatalf("apply: exit %d\n%s", code, errOut)
		}
	}
	all.WriteString(objects.String())
	multi := b.TempDir()
	writeFile(b, multi, all.String())
	single := b.TempDir()
	writeFile(b, single, head+objects.String())
	b.Run("4 environments in one plan", func(b *testing.B) {
		for b.Loop() {
			if code, errOut := runWith(vars, nil, "plan", "--detailed-exitcode", multi); code != 0 {
				b.Fatalf("exit %d\n%s", code, errOut)
			}
		}
	})
	b.Run("4 plans one after the other", func(b *testing.B) {
		for b.Loop() {
			for i := range envs {
				if code, errOut := runWith(vars, map[string]string{"NATS_URL": vars[fmt.Sprintf("E%d_URL", i)]}, "plan", "--detailed-exitcode", single); code != 0 {
					b.Fatalf("exit %d\n%s", code, errOut)
				}
			}
		}
	})
	b.Run("1 environment", func(b *testing.B) {
		for b.Loop() {
			if code, errOut := runWith(vars, nil, "plan", "--detailed-exitcode", "--env", "e0", multi); code != 0 {
				b.Fatalf("exit %d\n%s", code, errOut)
			}
		}
	})
}

func writeFile(b *testing.B, dir, src string) {
	b.Helper()
	if err := os.WriteFile(filepath.Join(dir, "shop.hcl"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
}

// runWith runs natsplan in-process with vars and extra as its environment.
func runWith(vars, extra map[string]string, args ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := run(args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func(k string) string {
		if v, ok := extra[k]; ok {
			return v
		}
		return vars[k]
	})
	return code, errOut.String()
}
