package schema

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// mustLoad loads paths and fails the test on any error diagnostic.
func mustLoad(t *testing.T, paths []string, vars Vars) *model.Model {
	t.Helper()
	m, diags := Load(paths, vars)
	if diags.HasErrors() {
		t.Fatalf("load %v:\n%s", paths, render(diags))
	}
	return m
}

func TestLoadDesignExample(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, []string{"testdata/design.hcl"}, Vars{})
	if m.Project != "shop" || m.Expect == nil || m.Expect.Cluster != "prod-east" || m.Expect.Domain != "hub" {
		t.Errorf("natsplan block: project %q expect %+v", m.Project, m.Expect)
	}
	s := m.Streams["ORDERS"]
	if s == nil {
		t.Fatal("stream ORDERS not decoded")
	}
	want := server.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: server.FileStorage,
		Retention: server.LimitsPolicy, MaxAge: 72 * time.Hour, MaxBytes: 10 << 30, Replicas: 3,
		Placement: &server.Placement{Cluster: "east"}}
	got := s.Config
	got.SubjectTransform = nil // set by the subject_mapping expansion, not by the block
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(server.StreamSource{})); diff != "" {
		t.Errorf("ORDERS config (-want +got):\n%s", diff)
	}
	if !s.Lifecycle.PreventDestroy || s.Kind != model.KindStream {
		t.Errorf("ORDERS lifecycle %+v kind %q", s.Lifecycle, s.Kind)
	}
	if r := s.Decl.FieldRange("placement.cluster"); r.Start.Line != 22 {
		t.Errorf("placement.cluster declared at line %d, want 22", r.Start.Line)
	}
	c := m.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: "audit"}]
	if c == nil {
		t.Fatal("consumer ORDERS/audit not decoded")
	}
	wantC := server.ConsumerConfig{Durable: "audit", FilterSubjects: []string{"*.orders.*.*"},
		AckPolicy: server.AckExplicit, AckWait: 30 * time.Second, MaxAckPending: 500}
	if diff := cmp.Diff(wantC, c.Config); diff != "" {
		t.Errorf("audit config (-want +got):\n%s", diff)
	}
	if kv := m.KVs["sessions"]; kv == nil || kv.History != 5 || kv.TTL != time.Hour || kv.Storage != "memory" {
		t.Errorf("kv sessions = %+v", kv)
	}
	if o := m.ObjectStores["assets"]; o == nil || o.MaxBytes != 5<<30 || o.Compression != "s2" {
		t.Errorf("object_store assets = %+v", o)
	}
	mp := m.Mappings["orders_by_customer"]
	if mp == nil || mp.Stream != "ORDERS" || mp.Source != "orders.*.*" || mp.Partitions != 8 || !reflect.DeepEqual(mp.Key, []int{1}) || mp.Destination != "" {
		t.Errorf("mapping = %+v", mp)
	}
	g := m.Groups["fulfilment"]
	if g == nil {
		t.Fatal("group fulfilment not decoded")
	}
	if g.Stream != "ORDERS" || g.Mapping != "orders_by_customer" || g.Ordering != "per_key" ||
		g.Template.AckWait != 30*time.Second || g.Template.MaxDeliver != 5 ||
		!reflect.DeepEqual(g.TemplateFields, map[string]bool{"ack_wait": true, "max_deliver": true}) ||
		g.DeadLetter == nil || g.DeadLetter.Stream != "ORDERS_DLQ" {
		t.Errorf("group fulfilment = %+v", g)
	}
	wantW := model.Workers{Count: 4, FetchBatch: 1, Concurrency: 1, Handler: "io", MaxHandlerTime: 10 * time.Second}
	if g.Workers == nil {
		t.Fatal("fulfilment workers not decoded")
	}
	gotW := *g.Workers
	gotW.Decl = nil
	if gotW != wantW {
		t.Errorf("workers = %+v, want %+v", gotW, wantW)
	}
	if r := g.Workers.Decl.FieldRange("max_handler_time"); r.Start.Line != 58 {
		t.Errorf("workers.max_handler_time at line %d, want 58", r.Start.Line)
	}
	e := m.Groups["email"]
	// workers { count = 4, fetch_batch = 50 }: a one-line block with commas.
	if e == nil || e.Workers == nil || e.Workers.Count != 4 || e.Workers.FetchBatch != 50 || e.Template.MaxAckPending != 200 {
		t.Errorf("group email = %+v workers %+v", e, e.Workers)
	}
	if r := e.Workers.Decl.FieldRange("fetch_batch"); r.Start.Line != 67 || r.Start.Column != 24 {
		t.Errorf("email workers.fetch_batch at %d:%d, want 67:24", r.Start.Line, r.Start.Column)
	}
}

// TestLoadAllFields decodes a file that sets every user-settable field and checks
// that each one reaches the server config, and where it was declared.
func TestLoadAllFields(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, []string{"testdata/all_fields.hcl"}, Vars{})
	s, c := m.Streams["EVERYTHING"], m.Consumers[model.ConsumerKey{Stream: "EVERYTHING", Name: "every"}]
	if s == nil || c == nil {
		t.Fatal("objects not decoded")
	}
	assertAllSet(t, "stream", s.Config, streamSpec(), s.Decl)
	assertAllSet(t, "consumer", c.Config, consumerSpec(), c.Decl)

	checks := []struct {
		name      string
		got, want any
	}{
		{"max_bytes", s.Config.MaxBytes, int64(10 << 30)},
		{"max_msg_size", s.Config.MaxMsgSize, int32(1 << 20)},
		{"max_age", s.Config.MaxAge, 7 * 24 * time.Hour},
		{"duplicate_window", s.Config.Duplicates, 90 * time.Second},
		{"retention", s.Config.Retention, server.InterestPolicy},
		{"storage", s.Config.Storage, server.MemoryStorage},
		{"persist_mode", s.Config.PersistMode, server.AsyncPersistMode},
		{"mirror transforms", s.Config.Mirror.SubjectTransforms, []server.SubjectTransformConfig{{Source: "origin.a.>", Destination: "a.>"}, {Source: "origin.b.>", Destination: "b.>"}}},
		{"mirror start", s.Config.Mirror.OptStartTime.Equal(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)), true},
		{"sources", len(s.Config.Sources), 1},
		{"subject_transform", *s.Config.SubjectTransform, server.SubjectTransformConfig{Source: "every.>", Destination: "all.>"}},
		{"backoff", c.Config.BackOff, []time.Duration{time.Second, 5 * time.Second, 0}},
		{"max_bytes (consumer)", c.Config.MaxRequestMaxBytes, 1000000},
		{"priority_policy", c.Config.PriorityPolicy, server.PriorityPinnedClient},
		{"durable_name", c.Config.Durable, "every"},
		{"name unset", c.Config.Name, ""},
		{"stream lifecycle", s.Lifecycle, model.Lifecycle{PreventDestroy: true}},
		{"consumer lifecycle", c.Lifecycle, model.Lifecycle{PreventDestroy: true, ReplaceOnChange: true}},
		{"dead letter", c.DeadLetter.Stream, "DLQ"},
		{"ignore", m.Ignore, []string{"KV_tmp*", "scratch-*"}},
		{"lock", [2]any{m.Lock.Bucket, m.Lock.TTL}, [2]any{"natsplan_lock", 30 * time.Second}},
		{"expect", [4]string{m.Expect.Server, m.Expect.Cluster, m.Expect.Domain, m.Expect.Account}, [4]string{"n1", "east", "hub", "APP"}},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s = %#v, want %#v", ck.name, ck.got, ck.want)
		}
	}
	l := m.Streams["LISTED"]
	if l == nil || len(l.Config.Sources) != 2 || l.Config.Sources[1].External.ApiPrefix != "$JS.x.API" ||
		l.Config.Sources[1].SubjectTransforms[0].Destination != "x.>" || l.Config.MaxAge != 0 {
		t.Errorf("LISTED = %+v", l)
	}
	for _, p := range []string{"sources", "sources[0]", "sources[1].external.api", "sources[1].subject_transforms[0].dest"} {
		if _, ok := l.Decl.Fields[p]; !ok {
			t.Errorf("LISTED has no range for %s", p)
		}
	}
	if _, ok := l.Decl.Fields["max_age"]; ok {
		t.Error("max_age = null recorded as set")
	}
}

// assertAllSet checks that every field of the table is non-zero in cfg's JSON and
// has a declaration range.
func assertAllSet(t *testing.T, what string, cfg any, spec *objectSpec, decl *model.Decl) {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, obj map[string]any, spec *objectSpec)
	walk = func(path string, obj map[string]any, spec *objectSpec) {
		for _, f := range spec.fields {
			p := joinPath(path, f.json)
			if f.kind == kForbidden {
				continue
			}
			v, ok := obj[f.json]
			if !ok || reflect.ValueOf(v).IsZero() {
				t.Errorf("%s %s is not set by the all-fields file", what, p)
				continue
			}
			if _, ok := decl.Fields[p]; !ok {
				t.Errorf("%s %s has no declaration range", what, p)
			}
			switch f.kind {
			case kObject:
				walk(p, v.(map[string]any), f.object)
			case kObjects:
				walk(p+"[0]", v.([]any)[0].(map[string]any), f.object)
			}
		}
	}
	walk("", doc, spec)
}

func TestVariablePrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := write("main.hcl", `
natsplan { project = "p" }
variable "replicas" {
  type    = number
  default = 1
}
variable "subjects" {
  type    = list(string)
  default = ["a.>"]
}
variable "name" {
  type = string
}
locals {
  desc = "${upper(var.name)} x${var.replicas}"
  both = local.desc
}
stream "S" {
  num_replicas = var.replicas
  subjects     = var.subjects
  description  = local.both
}
`)
	first := write("a.tfvars", "replicas = 2\nname = \"file\"\n")
	second := write("b.tfvars", "replicas = 3\nsubjects = [\"b.>\", \"c.>\"]\n")
	cases := []struct {
		name     string
		vars     Vars
		replicas int
		subjects []string
		desc     string
	}{
		{"default and --var", Vars{Args: []string{"name=cli"}}, 1, []string{"a.>"}, "CLI x1"},
		{"file over default", Vars{Files: []string{first}}, 2, []string{"a.>"}, "FILE x2"},
		{"later file wins", Vars{Files: []string{first, second}}, 3, []string{"b.>", "c.>"}, "FILE x3"},
		{"--var over files", Vars{Files: []string{first, second}, Args: []string{"replicas=5", `subjects=["d.>"]`, "name=a=b"}}, 5, []string{"d.>"}, "A=B x5"},
		{"later --var wins", Vars{Args: []string{"name=x", "replicas=2", "replicas=4"}}, 4, []string{"a.>"}, "X x4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustLoad(t, []string{cfg}, c.vars)
			s := m.Streams["S"]
			if s.Config.Replicas != c.replicas || !reflect.DeepEqual(s.Config.Subjects, c.subjects) || s.Config.Description != c.desc {
				t.Errorf("got replicas %d subjects %v description %q", s.Config.Replicas, s.Config.Subjects, s.Config.Description)
			}
		})
	}
	errCases := []struct {
		name string
		vars Vars
		want string
	}{
		{"missing required", Vars{}, "No value for required variable"},
		{"undeclared --var", Vars{Args: []string{"name=x", "replica=3"}}, `Did you mean "replicas"?`},
		{"bad --var", Vars{Args: []string{"name=x", "replicas"}}, "Invalid --var option"},
		{"wrong type", Vars{Args: []string{"name=x", "replicas=three"}}, "Invalid value for variable"},
		{"missing var-file", Vars{Args: []string{"name=x"}, Files: []string{filepath.Join(dir, "nope.tfvars")}}, "Cannot read variables file"},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			_, diags := Load([]string{cfg}, c.vars)
			if len(diags.Errs()) != 1 || !strings.Contains(render(diags), c.want) {
				t.Errorf("want one error containing %q, got:\n%s", c.want, render(diags))
			}
		})
	}
	t.Run("undeclared in var-file warns", func(t *testing.T) {
		extra := write("c.tfvars", "name = \"n\"\nzone = \"z\"\n")
		m, diags := Load([]string{cfg}, Vars{Files: []string{extra}})
		if diags.HasErrors() || len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || m.Streams["S"].Config.Description != "N x1" {
			t.Errorf("got %s", render(diags))
		}
	})
}

func TestFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"b.hcl", "a.hcl", "notes.txt", "sub/c.hcl"} {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A folder named like a file is skipped and said so; a link to a file listed
	// already is that file.
	if err := os.Mkdir(filepath.Join(dir, "d.hcl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.hcl", filepath.Join(dir, "link.hcl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "sublink.hcl")); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := Files([]string{dir, filepath.Join(dir, "notes.txt"), filepath.Join(dir, "a.hcl")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.hcl"), filepath.Join(dir, "b.hcl"), filepath.Join(dir, "notes.txt")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	if want := []string{filepath.Join(dir, "d.hcl"), filepath.Join(dir, "sublink.hcl")}; !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped = %v, want %v", skipped, want)
	}
	if _, diags := Load([]string{dir}, Vars{}); !strings.Contains(render(diags), "d.hcl is a folder, not a file") {
		t.Errorf("no warning for the skipped folder: %s", render(diags))
	}
	if _, _, err := Files([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing path is not an error")
	}
	_, diags := Load([]string{filepath.Join(dir, "sub", "..", "sub", "none")}, Vars{})
	if !diags.HasErrors() {
		t.Error("loading a missing path gives no error")
	}
	empty := t.TempDir()
	if _, diags := Load([]string{empty}, Vars{}); !strings.Contains(render(diags), "No configuration files") {
		t.Errorf("empty folder: %s", render(diags))
	}
}

// TestLoadAcrossFiles checks that a folder is one configuration: variables, locals
// and the natsplan block may live in any file, and duplicates across files point at
// the first declaration.
func TestLoadAcrossFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a.hcl": "natsplan {\n  project = \"p\"\n}\nvariable \"r\" {\n  default = 1\n}\n",
		"b.hcl": "locals {\n  subj = \"x.>\"\n}\nstream \"X\" {\n  num_replicas = var.r\n  subjects = [local.subj]\n}\n",
	}
	for n, src := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := mustLoad(t, []string{dir}, Vars{})
	if s := m.Streams["X"]; s == nil || s.Config.Replicas != 1 || s.Config.Subjects[0] != "x.>" || len(m.Files) != 2 {
		t.Fatalf("model = %+v", m)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.hcl"), []byte("stream \"X\" {\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, diags := Load([]string{dir}, Vars{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "b.hcl:4:8") || diags[0].Subject.Filename != filepath.Join(dir, "c.hcl") {
		t.Errorf("duplicate across files: %s", render(diags))
	}
}

func TestCheckConsumerStreams(t *testing.T) {
	t.Parallel()
	m := mustLoad(t, []string{"testdata/design.hcl"}, Vars{})
	m.Consumers[model.ConsumerKey{Stream: "GONE", Name: "c"}] = &model.Consumer{Stream: "GONE", Name: "c",
		Decl: &model.Decl{Range: hcl.Range{Filename: "x.hcl", Start: hcl.Pos{Line: 3, Column: 1}}}}
	cases := []struct {
		name string
		live map[string]bool
		want hcl.DiagnosticSeverity
		n    int
	}{
		{"offline warns", nil, hcl.DiagWarning, 1},
		{"not live errors", map[string]bool{"OTHER": true}, hcl.DiagError, 1},
		{"live is enough", map[string]bool{"GONE": true}, hcl.DiagError, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			diags := CheckConsumerStreams(m, c.live)
			if len(diags) != c.n {
				t.Fatalf("got %d diagnostics:\n%s", len(diags), render(diags))
			}
			if c.n > 0 && (diags[0].Severity != c.want || diags[0].Subject.Start.Line != 3 || !strings.Contains(diags[0].Detail, `declare stream "GONE"`)) {
				t.Errorf("got %s", render(diags))
			}
		})
	}
}

// TestKeepsGoing checks that one load reports every mistake, each once, in order.
func TestKeepsGoing(t *testing.T) {
	t.Parallel()
	src := `natsplan {
  project = "p"
}
stream "A" {
  max_age   = "soon"
  retention = "limit"
}
stream "B.C" {
}
consumer "A" "c" {
  ack_wait = "1x"
  bogus    = 1
}
`
	_, diags := NewLoader().load(context.Background(), []string{"m.hcl"}, [][]byte{[]byte(src)}, Vars{})
	want := []struct {
		line    int
		summary string
	}{{5, "Invalid duration"}, {6, "Invalid retention value"}, {8, "Invalid stream name"}, {11, "Invalid duration"}, {12, "Unsupported argument"}}
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(diags), len(want), render(diags))
	}
	for i, w := range want {
		if diags[i].Subject.Start.Line != w.line || diags[i].Summary != w.summary {
			t.Errorf("diagnostic %d = line %d %q, want line %d %q", i, diags[i].Subject.Start.Line, diags[i].Summary, w.line, w.summary)
		}
	}
}
