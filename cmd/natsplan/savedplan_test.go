package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// savedBase is what the server holds before each saved-plan case; savedNext is what
// the plan moves it to: one in-place update of every kind of object, and one create.
const savedBase = ownedConfig + `
kv "sessions" {
  history = 2
  ttl     = "1h"
}
object_store "assets" {
  description = "images"
}
`

const savedNext = `
natsplan {
  project = "shop"
}
stream "ORDERS" {
  subjects = ["orders.>"]
  max_age  = "2h"
}
consumer "ORDERS" "audit" {
  ack_policy      = "explicit"
  max_ack_pending = 200
}
kv "sessions" {
  history = 5
  ttl     = "1h"
}
object_store "assets" {
  description = "product images"
}
stream "NEW" {
  subjects = ["new.>"]
}
`

// serverState is every stream and consumer config on the server, as JSON by name, so
// that two snapshots compare equal exactly when nothing was written in between.
func serverState(t *testing.T, js jetstream.JetStream) map[string]string {
	t.Helper()
	ctx := context.Background()
	state := map[string]string{}
	streams := js.ListStreams(ctx)
	for si := range streams.Info() {
		b, _ := json.Marshal(si.Config)
		state["stream "+si.Config.Name] = string(b)
		st, err := js.Stream(ctx, si.Config.Name)
		if err != nil {
			t.Fatal(err)
		}
		cons := st.ListConsumers(ctx)
		for ci := range cons.Info() {
			b, _ := json.Marshal(ci.Config)
			state["consumer "+si.Config.Name+"/"+ci.Name] = string(b)
		}
		if err := cons.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := streams.Err(); err != nil {
		t.Fatal(err)
	}
	return state
}

func mustCLI(t *testing.T, url string, args ...string) string {
	t.Helper()
	code, out, errOut := cli(t, url, args...)
	if code != 0 {
		t.Fatalf("natsplan %v: exit %d\n%s\n%s", args, code, out, errOut)
	}
	return out
}

func jetStream(t *testing.T, s *embedded.Server) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(testsrv.Connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// editStream changes a stream's config out of band, as another tool would.
func editStream(name string, edit func(*jetstream.StreamConfig)) func(*testing.T, jetstream.JetStream) {
	return func(t *testing.T, js jetstream.JetStream) {
		t.Helper()
		ctx := context.Background()
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		edit(&cfg)
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSavedPlanApplies: apply FILE does exactly the saved plan, even when the files
// changed after planning, and a plan afterwards is empty.
func TestSavedPlanApplies(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	dir := writeConfig(t, map[string]string{"shop.hcl": savedBase})
	mustCLI(t, url, "apply", "--auto-approve", dir)
	writes := writeCounter(t, s)

	next := writeConfig(t, map[string]string{"shop.hcl": savedNext})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustCLI(t, url, "plan", "--out", planFile, next)
	saved, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Changes []struct{ Address, Action string }
	}
	if err := json.Unmarshal(saved, &doc); err != nil {
		t.Fatal(err)
	}
	// The files change after planning: the saved plan, not the files, is applied.
	if err := os.WriteFile(filepath.Join(next, "extra.hcl"), []byte("stream \"EXTRA\" {\n  subjects = [\"extra.>\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	out := mustCLI(t, url, "apply", planFile, "--auto-approve")
	writes.settle(t)
	if got := writes.Load(); got != int64(len(doc.Changes)) {
		t.Fatalf("apply of a %d-change plan sent %d write requests\n%s", len(doc.Changes), got, out)
	}
	for _, c := range doc.Changes {
		if !strings.Contains(out, c.Address) {
			t.Errorf("apply output does not name %s\n%s", c.Address, out)
		}
	}
	if _, err := js.Stream(context.Background(), "EXTRA"); err == nil {
		t.Fatal("apply FILE created EXTRA, which only the files declare, not the saved plan")
	}
	os.Remove(filepath.Join(next, "extra.hcl"))
	if code, p := planJSON(t, url, next); code != 0 || len(p.Changes) != 0 {
		t.Fatalf("plan after apply FILE: exit %d, %d changes, want none", code, len(p.Changes))
	}

	// show renders the saved plan in every format, with no server.
	code, text, errOut := cli(t, "nats://127.0.0.1:1", "show", planFile)
	if code != 0 || !strings.Contains(text, "stream.ORDERS") || !strings.Contains(text, "Plan: 1 to create, 4 to update") {
		t.Fatalf("show text: exit %d\n%s\n%s", code, text, errOut)
	}
	_, jsonOut, _ := cli(t, "nats://127.0.0.1:1", "show", "--format", "json", planFile)
	var shown, want any
	if err := json.Unmarshal([]byte(jsonOut), &shown); err != nil {
		t.Fatalf("show --format json is not one JSON document: %v\n%s", err, jsonOut)
	}
	if err := json.Unmarshal(saved, &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, shown); d != "" {
		t.Fatalf("show --format json differs from the saved document (-saved +shown):\n%s", d)
	}
	code, md, errOut := cli(t, "nats://127.0.0.1:1", "show", "--format", "markdown", planFile)
	if code != 0 || !strings.Contains(md, "<details>") || !strings.Contains(md, "object_store.assets") {
		t.Fatalf("show markdown: exit %d\n%s\n%s", code, md, errOut)
	}
}

// TestSavedPlanRefused: a saved plan is refused, and nothing at all is written, when
// anything it touches changed after planning, when the target differs, and when the
// file is not an unedited natsplan plan.
func TestSavedPlanRefused(t *testing.T) {
	s := testsrv.Start(t)
	other := testsrv.Start(t, func(o *embedded.Options) { o.Name = "t2" })
	url := s.ClientURL()
	js := jetStream(t, s)
	ctx := context.Background()
	base := writeConfig(t, map[string]string{"shop.hcl": savedBase})
	next := writeConfig(t, map[string]string{"shop.hcl": savedNext})
	writes := writeCounter(t, s)
	otherWrites := writeCounter(t, other)

	cases := []struct {
		name   string
		change func(*testing.T, jetstream.JetStream)
		// edit rewrites the saved file; url, when set, applies against another server.
		edit func([]byte) []byte
		url  string
		want []string
		undo func(*testing.T, jetstream.JetStream)
	}{
		{name: "stream changed",
			change: editStream("ORDERS", func(c *jetstream.StreamConfig) { c.MaxMsgs = 1000 }),
			want:   []string{"stream.ORDERS changed on the server after planning (max_msgs -1 -> 1000)"}},
		{name: "consumer changed",
			change: func(t *testing.T, js jetstream.JetStream) {
				c, err := js.Consumer(ctx, "ORDERS", "audit")
				if err != nil {
					t.Fatal(err)
				}
				cfg := c.CachedInfo().Config
				cfg.AckWait = 45 * time.Second
				if _, err := js.UpdateConsumer(ctx, "ORDERS", cfg); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"consumer.ORDERS.audit changed on the server after planning (ack_wait 30000000000 -> 45000000000)"}},
		{name: "kv bucket changed",
			change: editStream("KV_sessions", func(c *jetstream.StreamConfig) { c.MaxBytes = 1 << 20 }),
			want:   []string{"kv.sessions changed on the server after planning (max_bytes -1 -> 1048576)"}},
		{name: "object store changed",
			change: editStream("OBJ_assets", func(c *jetstream.StreamConfig) { c.MaxBytes = 1 << 20 }),
			want:   []string{"object_store.assets changed on the server after planning (max_bytes -1 -> 1048576)"}},
		{name: "created meanwhile",
			change: func(t *testing.T, js jetstream.JetStream) {
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "NEW", Subjects: []string{"new.>"}}); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"stream.NEW was created on the server after planning"},
			undo: func(t *testing.T, js jetstream.JetStream) {
				if err := js.DeleteStream(ctx, "NEW"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "deleted meanwhile",
			change: func(t *testing.T, js jetstream.JetStream) {
				if err := js.DeleteConsumer(ctx, "ORDERS", "audit"); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"consumer.ORDERS.audit was deleted from the server after planning"}},
		{name: "another target", url: other.ClientURL(),
			want: []string{`the plan was made against server "t1", but this server is server "t2"`}},
		{name: "edited after planning",
			edit: func(b []byte) []byte {
				return bytes.ReplaceAll(b, []byte(`"product images"`), []byte(`"product imageZ"`))
			},
			want: []string{"was edited after plan wrote it (checksum mismatch)"}},
		{name: "random JSON",
			edit: func([]byte) []byte { return []byte(`{"hello": "world"}`) },
			want: []string{"is not a natsplan plan file"}},
		{name: "empty JSON object",
			edit: func([]byte) []byte { return []byte(`{}`) },
			want: []string{"is not a natsplan plan file (no format_version)"}},
		{name: "newer format",
			edit: func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"format_version": "1"`), []byte(`"format_version": "2"`), 1)
			},
			want: []string{`has plan format "2"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustCLI(t, url, "apply", "--auto-approve", base)
			planFile := filepath.Join(t.TempDir(), "plan.json")
			mustCLI(t, url, "plan", "--out", planFile, next)
			if c.change != nil {
				c.change(t, js)
			}
			if c.edit != nil {
				data, err := os.ReadFile(planFile)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(planFile, c.edit(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			target := url
			if c.url != "" {
				target = c.url
			}
			before := serverState(t, js)
			writes.settle(t)
			writes.Store(0)
			code, out, errOut := cli(t, target, "apply", planFile, "--auto-approve")
			if code != exitError {
				t.Fatalf("apply of the saved plan: exit %d, want 1\n%s\n%s", code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q\n%s", w, errOut)

				}
			}
			writes.settle(t)
			otherWrites.settle(t)
			if n := writes.Load() + otherWrites.Load(); n != 0 {
				t.Fatalf("a refused plan sent %d write requests", n)
			}
			if d := cmp.Diff(before, serverState(t, js)); d != "" {
				t.Fatalf("a refused plan changed the server (-before +after):\n%s", d)
			}
			if c.undo != nil {
				c.undo(t, js)
			}
		})
	}
	if n := len(serverState(t, jetStream(t, other))); n != 0 {
		t.Fatalf("the other server holds %d objects after a refused apply", n)
	}

	// A path ending in .hcl is configuration, never a plan, whatever it holds.
	hclFile := filepath.Join(next, "shop.hcl")
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", hclFile); code != 0 || !strings.Contains(out, "stream.NEW") {
		t.Fatalf("apply of an .hcl file: exit %d, want it applied as configuration\n%s\n%s", code, out, errOut)
	}
	disguised := filepath.Join(t.TempDir(), "plan.hcl")
	mustCLI(t, url, "plan", "--out", filepath.Join(filepath.Dir(disguised), "p.json"), next)
	data, _ := os.ReadFile(filepath.Join(filepath.Dir(disguised), "p.json"))
	if err := os.WriteFile(disguised, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", disguised); code != exitError || !strings.Contains(errOut, "plan.hcl:1:") {
		t.Fatalf("apply of a plan named .hcl: exit %d, want 1 with an HCL diagnostic\n%s\n%s", code, out, errOut)
	}
}
