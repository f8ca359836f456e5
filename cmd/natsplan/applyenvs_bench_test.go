package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// BenchmarkApplyAcrossEnvironments applies 20 stream updates to each of three
// environments, each server 20ms (one way) away behind a proxy: in one apply, the
// environments prepared and executed in parallel, against three applies of one
// environment each (--env), one after the other. Each iteration flips max_age, so
// every apply has the same 60 updates to make.
//
//	go test ./cmd/natsplan -run '^$' -bench ApplyAcrossEnvironments -benchtime 5x
func BenchmarkApplyAcrossEnvironments(b *testing.B) {
	const streams = 20
	names := []string{"dev", "staging", "prod"}
	urls := map[string]string{}
	for _, n := range names {
		s := testsrv.Start(b, func(o *embedded.Options) { o.Name = "srv-" + n })
		urls[n] = testsrv.LatencyProxy(b, s.ClientURL(), 20*time.Millisecond)
	}
	dirs := make([]string, 2)
	for i, age := range []string{"1h", "2h"} {
		var c strings.Builder
		c.WriteString("natsplan {\n  project = \"shop\"\n}\n")
		for _, n := range names {
			fmt.Fprintf(&c, "environment %q {\n  servers = %q\n}\n", n, urls[n])
		}
		for j := range streams {
			fmt.Fprintf(&c, "stream \"S%d\" {\n  subjects = [\"s%d.>\"]\n  max_age  = %q\n}\n", j, j, age)
		}
		dirs[i] = b.TempDir()
		if err := os.WriteFile(filepath.Join(dirs[i], "shop.hcl"), []byte(c.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := map[string]string{"HOME": b.TempDir(), "XDG_CONFIG_HOME": b.TempDir()}
	apply := func(args ...string) {
		code := run(append([]string{"apply", "--auto-approve"}, args...), &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
			func(k string) string { return env[k] })
		if code != 0 {
			b.Fatalf("apply %v: exit %d", args, code)
		}
	}
	apply(dirs[0]) // create everything once
	flip := 1
	b.Run("one apply, in parallel", func(b *testing.B) {
		for b.Loop() {
			apply(dirs[flip])
			flip = 1 - flip
		}
	})
	b.Run("one apply per environment, in turn", func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				apply("--env", n, dirs[flip])
			}
			flip = 1 - flip
		}
	})
}
