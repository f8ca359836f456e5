package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// textFixtures are plans computed from small models, so the goldens show what users see.
func textFixtures(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	return map[string]*plan.Plan{
		"text_empty":       computeFixture(t, fixtureDesired(false), fixtureDesiredAsLive(t)),
		"text_mixed":       computeFixture(t, fixtureDesired(true), fixtureLive()),
		"text_refused":     computeFixture(t, fixtureRefused(), fixtureLive()),
		"text_errors_only": computeFixture(t, fixtureDesired(false), fixtureTakenOver(t)),
	}
}

func computeFixture(t *testing.T, d, l *model.Model) *plan.Plan {
	t.Helper()
	p, err := plan.Compute(d, l, plan.Options{Version: "v0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func decl(line int) *model.Decl {
	return &model.Decl{Range: hcl.Range{Filename: "shop.hcl", Start: hcl.Pos{Line: line, Column: 1}}}
}

func fixtureDesired(mixed bool) *model.Model {
	d := model.New()
	d.Project = "shop"
	orders := server.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, MaxAge: 72 * time.Hour,
		MaxBytes: 10 << 30, Storage: server.FileStorage}
	d.Streams["ORDERS"] = &model.Stream{Name: "ORDERS", Kind: model.KindStream, Config: orders, Decl: decl(1)}
	d.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: "audit"}] = &model.Consumer{Stream: "ORDERS", Name: "audit",
		Config: server.ConsumerConfig{Durable: "audit", AckPolicy: server.AckExplicit, AckWait: 30 * time.Second}, Decl: decl(10)}
	if !mixed {
		return d
	}
	orders.MaxAge = 24 * time.Hour
	orders.Replicas = 3
	orders.Placement = &server.Placement{Cluster: "east"}
	d.Streams["ORDERS"].Config = orders
	d.Streams["NEW"] = &model.Stream{Name: "NEW", Kind: model.KindStream, Decl: decl(20),
		Config: server.StreamConfig{Name: "NEW", Subjects: []string{"new.>"}, Storage: server.MemoryStorage, MaxBytes: 10 << 30}}
	d.Streams["LEGACY"] = &model.Stream{Name: "LEGACY", Kind: model.KindStream, Decl: decl(30),
		Config: server.StreamConfig{Name: "LEGACY", Subjects: []string{"legacy.>"}, Storage: server.FileStorage}}
	pause := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: "audit"}] = &model.Consumer{Stream: "ORDERS", Name: "audit",
		Config: server.ConsumerConfig{Durable: "audit", AckPolicy: server.AckAll, AckWait: 30 * time.Second},
		Decl:   decl(10), Lifecycle: model.Lifecycle{ReplaceOnChange: true}, Group: "consumer_group.audit"}
	d.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: "paused"}] = &model.Consumer{Stream: "ORDERS", Name: "paused",
		Config: server.ConsumerConfig{Durable: "paused", AckPolicy: server.AckExplicit, PauseUntil: &pause}, Decl: decl(40)}
	return d
}

// fixtureDesiredAsLive is the server after applying fixtureDesired(false).
func fixtureDesiredAsLive(t *testing.T) *model.Model {
	d := fixtureDesired(false)
	l := fixtureTarget()
	p := computeFixture(t, d, l)
	for _, ch := range p.Changes {
		if ch.Kind == "consumer" {
			var cfg server.ConsumerConfig
			if err := json.Unmarshal(ch.After, &cfg); err != nil {
				t.Fatal(err)
			}
			l.Consumers[model.ConsumerKey{Stream: ch.Stream, Name: ch.Name}] = &model.Consumer{Stream: ch.Stream, Name: ch.Name, Config: cfg}
			continue
		}
		var cfg server.StreamConfig
		if err := json.Unmarshal(ch.After, &cfg); err != nil {
			t.Fatal(err)
		}
		l.Streams[ch.Name] = &model.Stream{Name: ch.Name, Kind: model.KindStream, Config: cfg, State: &model.StreamState{}}
	}
	return l
}

func fixtureTarget() *model.Model {
	l := model.New()
	l.Target = &model.Target{URL: "nats://127.0.0.1:4222", Server: "n1", Cluster: "east", APILevel: 5}
	return l
}

func fixtureLive() *model.Model {
	l := fixtureTarget()
	mark := map[string]string{model.MetaProject: "shop"}
	add := func(cfg server.StreamConfig, msgs uint64) {
		cfg = plan.NormalizeStream(cfg, nil)
		l.Streams[cfg.Name] = &model.Stream{Name: cfg.Name, Kind: model.KindStream, Config: cfg,
			State: &model.StreamState{Msgs: msgs, Bytes: msgs * 100}}
	}
	add(server.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, MaxAge: 72 * time.Hour, MaxBytes: 10 << 30, Metadata: mark}, 5000)
	add(server.StreamConfig{Name: "LEGACY", Subjects: []string{"legacy.>"}}, 0)
	add(server.StreamConfig{Name: "OLD", Subjects: []string{"old.>"}, Metadata: mark}, 12)
	add(server.StreamConfig{Name: "THEIRS", Subjects: []string{"theirs.>"}, Metadata: map[string]string{model.MetaProject: "billing"}}, 1)
	for _, c := range []server.ConsumerConfig{
		{Durable: "audit", AckPolicy: server.AckExplicit, Metadata: mark},
		{Durable: "paused", AckPolicy: server.AckExplicit, Metadata: mark},
	} {
		c = plan.NormalizeConsumer(c, &l.Streams["ORDERS"].Config, l.Target)
		l.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: c.Durable}] = &model.Consumer{Stream: "ORDERS", Name: c.Durable, Config: c}
	}
	return l
}

// fixtureTakenOver is the server after applying fixtureDesired(false), where another
// project has since marked ORDERS: an error (NP404) and no change, so the plan must
// not say that the server matches.
func fixtureTakenOver(t *testing.T) *model.Model {
	l := fixtureDesiredAsLive(t)
	cfg := l.Streams["ORDERS"].Config
	cfg.Metadata = map[string]string{model.MetaProject: "billing"}
	l.Streams["ORDERS"].Config = cfg
	return l
}

func fixtureRefused() *model.Model {
	d := fixtureDesired(false)
	cfg := d.Streams["ORDERS"].Config
	cfg.Storage = server.MemoryStorage
	d.Streams["ORDERS"].Config = cfg
	d.Streams["OLD"] = &model.Stream{Name: "OLD", Kind: model.KindStream, Decl: decl(50),
		Config: server.StreamConfig{Name: "OLD", Subjects: []string{"old.>"}}}
	d.Streams["LEGACY"] = &model.Stream{Name: "LEGACY", Kind: model.KindStream, Decl: decl(30),
		Config: server.StreamConfig{Name: "LEGACY", Subjects: []string{"legacy.>"}}}
	return d
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./plan/render -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got; run with -update after checking):\n%s", golden, d)
	}
}

func TestTextGolden(t *testing.T) {
	t.Parallel()
	for name, p := range textFixtures(t) {
		for _, color := range []bool{false, true} {
			file := name + ".txt"
			if color {
				file = name + ".color.txt"
			}
			t.Run(file, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Text(&buf, p, TextOptions{Color: color}); err != nil {
					t.Fatal(err)
				}
				if !color && strings.Contains(buf.String(), "\x1b[") {
					t.Fatal("colour without Color")
				}
				checkGolden(t, file, buf.Bytes())
			})
		}
	}
}

// TestTextContent checks what the text plan must always say, independent of layout.
func TestTextContent(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := textFixtures(t)["text_mixed"]
	if err := Text(&buf, p, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"+ stream.NEW", "-/+ consumer.ORDERS.audit", "<= stream.LEGACY", "- stream.OLD", "~ stream.ORDERS",
		"max_age: 3d -> 1d", "10GiB", "part 1/2", "through the PAUSE API", "forces replacement",
		"ack state", "NP301 error stream.OLD", "--allow-data-loss", "stream.THEIRS (stream)",
		"Plan: 1 to create, 2 to update, 1 to delete, 1 to replace, 1 to adopt.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text plan lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := Text(&buf, textFixtures(t)["text_empty"], TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "No changes.") {
		t.Errorf("empty plan:\n%s", buf.String())
	}
	buf.Reset()
	if err := Text(&buf, textFixtures(t)["text_errors_only"], TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "matches") || !strings.Contains(out, "No changes planned. 1 error(s) in stream.ORDERS: apply refuses") {
		t.Errorf("a plan with only errors:\n%s", out)
	}
}

// TestJSON checks that JSON writes exactly one document that reads back as the plan.
func TestJSON(t *testing.T) {
	t.Parallel()
	for name, p := range textFixtures(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := JSON(&buf, p); err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
			var back plan.Plan
			if err := dec.Decode(&back); err != nil {
				t.Fatal(err)
			}
			if err := dec.Decode(&json.RawMessage{}); !errors.Is(err, io.EOF) {
				t.Fatalf("more than one JSON document: %v", err)
			}
			if back.FormatVersion != "1" || back.DesiredHash != p.DesiredHash || len(back.Changes) != len(p.Changes) ||
				back.Summary != p.Summary || back.Findings == nil || back.Unmanaged == nil || back.Drift == nil {
				t.Fatalf("round trip lost data: %+v", back)
			}
			checkGolden(t, strings.Replace(name, "text_", "json_", 1)+".json", buf.Bytes())
		})
	}
}
