package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// TestImport: objects made with nats.go, imported, plan as adoptions only; once
// adopted, a fresh import plans as no change at all. --stream selects, --out writes
// a file fmt --check accepts.
func TestImport(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"},
		MaxAge: 72 * time.Hour, MaxBytes: 1 << 30, Storage: jetstream.FileStorage, Duplicates: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "audit",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxDeliver: 10, FilterSubject: "orders.*.created"}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LOGS", Subjects: []string{"logs.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "sessions", History: 5, TTL: time.Hour, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "assets", MaxBytes: 512 << 20, Compression: true}); err != nil {
		t.Fatal(err)
	}
	all := []string{"consumer.ORDERS.audit", "kv.sessions", "object_store.assets", "stream.LOGS", "stream.ORDERS"}

	cases := []struct {
		name    string
		streams []string
		want    []string // addresses the import declares
	}{
		{"everything", nil, all},
		{"a stream glob with its consumers", []string{"ORD*"}, []string{"consumer.ORDERS.audit", "stream.ORDERS"}},
		{"kv by address", []string{"kv.*"}, []string{"kv.sessions"}},
		{"two globs", []string{"LOGS", "assets"}, []string{"object_store.assets", "stream.LOGS"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "imported.hcl")
			args := []string{"import", "--project", "shop", "--out", file}
			for _, g := range c.streams {
				args = append(args, "--stream", g)
			}
			mustCLI(t, url, args...)
			if code, out, errOut := cli(t, url, "fmt", "--check", "--diff", file); code != 0 {
				t.Fatalf("fmt --check of the import: exit %d\n%s\n%s", code, out, errOut)
			}
			_, p := planJSON(t, url, dir)
			if p.HasErrors() {
				t.Fatalf("plan of the import has errors: %+v", p.Findings)
			}
			var got []string
			for _, ch := range p.Changes {
				if ch.Action != plan.ActAdopt {
					t.Errorf("%s: %s, want only adopt", ch.Address, ch.Action)
				}
				for _, f := range ch.Fields {
					if !strings.HasPrefix(f.Path, "metadata") {
						t.Errorf("%s: adopting changes %s, want only the ownership mark", ch.Address, f.Path)
					}
				}
				got = append(got, ch.Address)
			}
			sort.Strings(got)
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("adopted (-want +got):\n%s", d)
			}
			for _, o := range p.Unmanaged {
				for _, w := range c.want {
					if o.Address == w {
						t.Errorf("%s is imported and unmanaged", w)
					}
				}
			}
		})
	}

	// Adopt everything; then an import written to stdout plans as no change.
	dir := t.TempDir()
	mustCLI(t, url, "import", "--project", "shop", "--out", filepath.Join(dir, "all.hcl"))
	mustCLI(t, url, "apply", "--auto-approve", dir)
	out := mustCLI(t, url, "import")
	if !strings.HasPrefix(strings.TrimSpace(out), "natsplan {") || !strings.Contains(out, `project = "shop"`) {
		t.Fatalf("the import of owned objects does not name their project:\n%s", out)
	}
	again := writeConfig(t, map[string]string{"again.hcl": out})
	if code, p := planJSON(t, url, again); code != 0 || len(p.Changes) != 0 {
		t.Fatalf("plan of a re-import: exit %d, %d changes, want none", code, len(p.Changes))
	}

	code, out, errOut := cli(t, url, "import", "--stream", "NOPE*")
	if code != exitError || !strings.Contains(errOut, "NOPE*") {
		t.Fatalf("import of a glob that matches nothing: exit %d, want 1 naming it\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(again, "imported.hcl")); err == nil {
		t.Fatal("a failed import wrote a file")
	}
}
