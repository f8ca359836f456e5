package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// driftBase is ownedConfig (ownership_test.go) and one more owned stream.
const driftBase = ownedConfig + `
stream "RETURNS" {
  subjects = ["returns.>"]
}
`

// driftIgnoring is driftBase with ignore patterns for unmanaged objects.
var driftIgnoring = strings.Replace(driftBase, "project = \"shop\"", "project = \"shop\"\n  ignore  = [\"stream.ROG*\", \"LEGACY\"]", 1)

// TestDrift: drift reports out-of-band changes, deleted and orphaned owned objects and
// unmanaged ones, the same way in text, JSON and markdown, with exit 2; ignore hides
// what it names; in sync is exit 0 and an unreachable server exit 1.
func TestDrift(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	js := jetStream(t, s)
	ctx := context.Background()
	base := writeConfig(t, map[string]string{"shop.hcl": driftBase})
	createStream := func(name string, md map[string]string) func(*testing.T) {
		return func(t *testing.T) {
			cfg := jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, Metadata: md}
			if _, err := js.CreateStream(ctx, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}

	cases := []struct {
		name   string
		config string
		change func(*testing.T)
		// want maps each reported address to its status; fields are the changed paths.
		want   map[string]string
		fields map[string][]string
	}{
		{name: "in sync", config: driftBase, want: map[string]string{}},
		{name: "stream field changed", config: driftBase,
			change: editStreamNow(js, "ORDERS", func(c *jetstream.StreamConfig) { c.MaxAge = 2 * time.Hour; c.MaxMsgs = 10 }),
			want:   map[string]string{"stream.ORDERS": string(plan.DriftChanged)},
			fields: map[string][]string{"stream.ORDERS": {"max_age", "max_msgs"}}},
		{name: "consumer field changed", config: driftBase,
			change: func(t *testing.T) {
				c, err := js.Consumer(ctx, "ORDERS", "audit")
				if err != nil {
					t.Fatal(err)
				}
				cfg := c.CachedInfo().Config
				cfg.MaxAckPending = 7
				if _, err := js.UpdateConsumer(ctx, "ORDERS", cfg); err != nil {
					t.Fatal(err)
				}
			},
			want:   map[string]string{"consumer.ORDERS.audit": string(plan.DriftChanged)},
			fields: map[string][]string{"consumer.ORDERS.audit": {"max_ack_pending"}}},
		{name: "owned object deleted", config: driftBase,
			change: func(t *testing.T) {
				if err := js.DeleteConsumer(ctx, "ORDERS", "audit"); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]string{"consumer.ORDERS.audit": string(plan.DriftMissing)}},
		{name: "owned object no longer declared", config: ownedConfig, // without RETURNS, which is owned
			want: map[string]string{"stream.RETURNS": string(plan.DriftOrphaned)}},
		{name: "unmanaged streams", config: driftBase,
			change: func(t *testing.T) {
				createStream("ROGUE", nil)(t)
				createStream("THEIRS", map[string]string{"natsplan.project": "billing"})(t)
			},
			// THEIRS is project billing's: not drift.
			want: map[string]string{"stream.ROGUE": "unmanaged"}},
		{name: "another project's stream is not drift", config: driftBase,
			change: createStream("THEIRS", map[string]string{"natsplan.project": "billing"}),
			want:   map[string]string{}},
		{name: "ignore hides what it names", config: driftIgnoring,
			change: func(t *testing.T) {
				createStream("ROGUE", nil)(t)
				createStream("LEGACY", nil)(t)
				createStream("OTHER", nil)(t)
			},
			want: map[string]string{"stream.OTHER": "unmanaged"}},
		{name: "ignore with nothing else in sync", config: driftIgnoring,
			change: createStream("ROGUE", nil),
			want:   map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustCLI(t, url, "apply", "--auto-approve", base)
			for _, name := range []string{"ROGUE", "THEIRS", "LEGACY", "OTHER"} {
				_ = js.DeleteStream(ctx, name) // left by an earlier case; absent is fine
			}
			if c.change != nil {
				c.change(t)
			}
			dir := writeConfig(t, map[string]string{"shop.hcl": c.config})
			wantCode := exitChanges
			if len(c.want) == 0 {
				wantCode = exitOK
			}
			run := func(format string) string {
				t.Helper()
				code, out, errOut := cli(t, url, "drift", "--format", format, dir)
				if code != wantCode {
					t.Fatalf("drift --format %s: exit %d, want %d\n%s\n%s", format, code, wantCode, out, errOut)
				}
				return out
			}

			var r plan.DriftReport
			out := run("json")
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("drift --format json is not one JSON document: %v\n%s", err, out)
			}
			got := map[string]string{}
			gotFields := map[string][]string{}
			for _, d := range r.Drift {
				got[d.Address] = string(d.Status)
				for _, f := range d.Fields {
					gotFields[d.Address] = append(gotFields[d.Address], f.Path)
				}
			}
			for _, o := range r.Unmanaged {
				got[o.Address] = "unmanaged"
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("drift report (-want +got):\n%s\n%s", d, out)
			}
			for addr, fields := range c.fields {
				sort.Strings(gotFields[addr])
				if d := cmp.Diff(fields, gotFields[addr]); d != "" {
					t.Fatalf("%s changed fields (-want +got):\n%s", addr, d)
				}
			}
			if r.InSync() != (len(c.want) == 0) {
				t.Fatalf("in sync = %v with %d findings", r.InSync(), len(c.want))
			}

			text, md := run("text"), run("markdown")
			if len(c.want) == 0 {
				if !strings.Contains(text, "No drift") || !strings.Contains(md, "in sync") {
					t.Fatalf("in sync, but the report says otherwise:\n%s\n%s", text, md)
				}
			}
			for addr, status := range c.want {
				if want := fmt.Sprintf("%s (%s", addr, status); !strings.Contains(text, want) {
					t.Errorf("text lacks %q\n%s", want, text)
				}
				if want := fmt.Sprintf("| `%s` | %s", addr, status); !strings.Contains(md, want) {
					t.Errorf("markdown lacks %q\n%s", want, md)
				}
				for _, f := range c.fields[addr] {
					if !strings.Contains(text, "    "+f+": files ") || !strings.Contains(md, "`"+f+"`") {
						t.Errorf("field %s of %s missing from text or markdown\n%s\n%s", f, addr, text, md)
					}
				}
			}
			if c.fields["stream.ORDERS"] != nil && !strings.Contains(text, "max_age: files 1h, server 2h") {
				t.Errorf("text does not show durations as durations\n%s", text)
			}
			if strings.Contains(text+md, "THEIRS") {
				t.Errorf("a stream of another project is listed without --show-foreign\n%s\n%s", text, md)
			}
		})
	}

	// A change the plan can only refuse (an immutable field, here storage, changed by
	// re-creating the stream) is a blocked change: drift all the same (exit 2), with
	// the refusal on stderr, never "in sync".
	mustCLI(t, url, "apply", "--auto-approve", base)
	for _, name := range []string{"ROGUE", "THEIRS", "LEGACY", "OTHER", "RETURNS"} {
		_ = js.DeleteStream(ctx, name) // RETURNS is re-created below; the others are left by the cases
	}
	recreated := jetstream.StreamConfig{Name: "RETURNS", Subjects: []string{"returns.>"}, Storage: jetstream.MemoryStorage,
		Metadata: map[string]string{"natsplan.project": "shop"}}
	if _, err := js.CreateStream(ctx, recreated); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "markdown"} {
		code, out, errOut := cli(t, url, "drift", "--format", format, base)
		if code != exitChanges || !strings.Contains(errOut, "NP303") || !strings.Contains(out, "RETURNS") ||
			!strings.Contains(out, "storage") {
			t.Fatalf("drift --format %s of a refused change: exit %d, want 2 reporting the stream's storage, NP303 on stderr\n%s\n%s", format, code, out, errOut)
		}
		if format == "json" && !json.Valid([]byte(out)) {
			t.Fatalf("drift --format json with errors: stdout is not one JSON document\n%s", out)
		}
	}

	code, out, errOut := cli(t, "nats://127.0.0.1:1", "drift", base)
	if code != exitError || !strings.Contains(errOut, "no server") {
		t.Fatalf("drift against no server: exit %d, want 1 saying so\n%s\n%s", code, out, errOut)
	}
}

// editStreamNow changes a stream's config out of band, as another tool would.
func editStreamNow(js jetstream.JetStream, name string, edit func(*jetstream.StreamConfig)) func(*testing.T) {
	return func(t *testing.T) { editStream(name, edit)(t, js) }
}
