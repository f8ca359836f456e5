package schema

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// BenchmarkLoad loads the bench harness's configuration shape without a server:
// 1,000 streams × 2 consumers, 100 streams per file.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	for file := range 10 {
		var s strings.Builder
		if file == 0 {
			s.WriteString("natsplan {\n  project = \"bench\"\n}\n\n")
		}
		for i := file * 100; i < (file+1)*100; i++ {
			fmt.Fprintf(&s, "stream \"S%05d\" {\n  subjects = [\"s%d.>\"]\n  max_age  = \"1h\"\n}\n\n", i, i)
			for _, c := range []string{"a", "b"} {
				fmt.Fprintf(&s, "consumer \"S%05d\" %q {\n  ack_policy      = \"explicit\"\n  max_ack_pending = 100\n}\n\n", i, c)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.hcl", file)), []byte(s.String()), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if m, diags := Load([]string{dir}, Vars{}); diags.HasErrors() || len(m.Consumers) != 2000 {
			b.Fatalf("load: %v", diags)
		}
	}
}

// BenchmarkLoadEnvironments compares building three environments' models of 1,000
// streams × 2 consumers (the files parsed once, decoded three times, in parallel)
// with LoadContext of the same configuration without environments.
func BenchmarkLoadEnvironments(b *testing.B) {
	dir := writeEnvBenchConfig(b)
	b.Run("one model, LoadContext", func(b *testing.B) {
		for b.Loop() {
			m, diags, err := NewLoader().LoadContext(context.Background(), []string{dir}, Vars{})
			if err != nil || diags.HasErrors() || len(m.Consumers) != 2000 {
				b.Fatalf("load: %v %v", err, diags)
			}
		}
	})
	envs := writeBenchEnvironments(b)
	b.Run("three environments, LoadEnvironments", func(b *testing.B) {
		for b.Loop() {
			got, diags, err := NewLoader().LoadEnvironments(context.Background(), []string{dir, envs}, Vars{}, nil)
			if err != nil || diags.HasErrors() || len(got) != 3 || got[2].Model.Streams["S00000"].Config.Replicas != 5 {
				b.Fatalf("load: %v %v", err, diags)
			}
		}
	})
}

// writeEnvBenchConfig writes BenchmarkLoadEnvironments's configuration, 1,000
// streams × 2 consumers in ten files whose streams' replicas are var.replicas, and
// returns its folder.
func writeEnvBenchConfig(b *testing.B) string {
	dir := b.TempDir()
	for file := range 10 {
		var s strings.Builder
		if file == 0 {
			s.WriteString("natsplan {\n  project = \"bench\"\n}\n\nvariable \"replicas\" {\n  default = 1\n}\n\n")
		}
		for i := file * 100; i < (file+1)*100; i++ {
			fmt.Fprintf(&s, "stream \"S%05d\" {\n  subjects     = [\"s%d.>\"]\n  max_age      = \"1h\"\n  num_replicas = var.replicas\n}\n\n", i, i)
			for _, c := range []string{"a", "b"} {
				fmt.Fprintf(&s, "consumer \"S%05d\" %q {\n  ack_policy      = \"explicit\"\n  max_ack_pending = 100\n}\n\n", i, c)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.hcl", file)), []byte(s.String()), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// writeBenchEnvironments writes three environment blocks (dev, staging, prod) that
// set var.replicas to 1, 3 and 5, and returns the file's name.
func writeBenchEnvironments(b *testing.B) string {
	envs := filepath.Join(b.TempDir(), "environments.hcl")
	src := "environment \"dev\" {}\nenvironment \"staging\" {\n  variables = { replicas = 3 }\n}\nenvironment \"prod\" {\n  variables = { replicas = 5 }\n}\n"
	if err := os.WriteFile(envs, []byte(src), 0o600); err != nil {
		b.Fatal(err)
	}
	return envs
}

// BenchmarkDecode is the part of loading that is done once per environment: the
// configuration of BenchmarkLoadEnvironments is parsed once, then each of its three
// environments' models is built from it, one after the other.
func BenchmarkDecode(b *testing.B) {
	dir := writeEnvBenchConfig(b)
	envs := writeBenchEnvironments(b)
	ctx := context.Background()
	files, srcs, _, diags, err := readConfig(ctx, []string{dir, envs})
	if err != nil || diags.HasErrors() {
		b.Fatalf("read: %v %v", err, diags)
	}
	p, err := NewLoader().parse(ctx, files, srcs)
	if err != nil || p.diags.HasErrors() || len(p.envs) != 3 {
		b.Fatalf("parse: %v %v", err, p.diags)
	}
	for b.Loop() {
		for i, eb := range p.envs {
			m, ds := decode(ctx, p, Vars{}, eb, map[string]*hcl.File{})
			if ds.HasErrors() || len(m.Consumers) != 2000 || m.Streams["S00000"].Config.Replicas != 1+2*i {
				b.Fatalf("decode: %v", ds)
			}
		}
	}
}
