package plan_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// marker is a "# ERROR: NP101" or "# WARNING: NP204" comment on the line a finding must point at.
var marker = regexp.MustCompile(`#\s*(ERROR|WARNING):\s*(NP\d{3})`)

type want struct {
	code finding.Code
	sev  finding.Severity
	line int
}

// markers reads the expected findings of a config from its marker comments.
func markers(src string) []want {
	var out []want
	for i, l := range strings.Split(src, "\n") {
		if m := marker.FindStringSubmatch(l); m != nil {
			out = append(out, want{finding.Code(m[2]), finding.Severity(strings.ToLower(m[1])), i + 1})
		}
	}
	return out
}

// loadModel loads src as one file.
func loadModel(t *testing.T, src string) *model.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, diags := schema.Load([]string{path}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return m
}

// check loads src as one file and runs the invariants against live (nil = offline);
// it returns the findings and the file's path.
func check(t *testing.T, src string, live *model.Model) ([]*finding.Finding, string) {
	t.Helper()
	m := loadModel(t, src)
	return plan.CheckInvariants(m, live), m.Files[0]
}

func liveWith(streams []*model.Stream, consumers ...*model.Consumer) *model.Model {
	m := model.New()
	m.Target = &model.Target{APILevel: 5}
	for _, s := range streams {
		m.Streams[s.Name] = s
	}
	for _, c := range consumers {
		m.Consumers[c.Key()] = c
	}
	return m
}

// liveOrders is the ORDERS stream as the server holds it, partitioned n ways.
func liveOrders(n int) *model.Stream {
	cfg := server.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: server.FileStorage,
		Retention: server.LimitsPolicy, Metadata: map[string]string{model.MetaProject: "shop"}}
	if n > 0 {
		cfg.SubjectTransform = &server.SubjectTransformConfig{Source: "orders.*.*",
			Destination: fmt.Sprintf("{{partition(%d,1)}}.orders.{{wildcard(1)}}.{{wildcard(2)}}", n)}
	}
	return &model.Stream{Name: "ORDERS", Kind: model.KindStream, Config: cfg}
}

// liveConsumer is a durable on the server that the files do not declare.
func liveConsumer(stream, name, filter, owner string) *model.Consumer {
	cfg := server.ConsumerConfig{Durable: name, Name: name, AckPolicy: server.AckExplicit, MaxAckPending: 1000,
		MaxWaiting: 512, FilterSubject: filter}
	if owner != "" {
		cfg.Metadata = map[string]string{model.MetaProject: owner}
	}
	return &model.Consumer{Stream: stream, Name: name, Config: cfg, State: &model.ConsumerState{}}
}

// TestInvariantExamples runs every config under examples/invalid: each triggers the
// findings its marker comments name, at those lines and severities, and nothing else;
// the fix (the nearest config) triggers none of them.
func TestInvariantExamples(t *testing.T) {
	fixes := map[string]struct {
		old, new string
		live     *model.Model
	}{
		"NP101-fetch-batch-above-ack-pending.hcl": {old: "fetch_batch = 50", new: "fetch_batch = 10"},
		"NP102-ack-pending-pool.hcl":              {old: "max_ack_pending = 100", new: "max_ack_pending = 500"},
		"NP103-per-process-durables.hcl":          {old: `"worker-2"`, new: `"billing"`},
		"NP104-ack-wait-below-handler-time.hcl":   {old: `ack_wait = "10s"`, new: `ack_wait = "45s"`},
		"NP105-cpu-concurrency.hcl":               {old: "concurrency = 8", new: "concurrency = 1"},
		"NP106-per-key-without-mapping.hcl":       {old: `ordering = "per_key"`, new: `ordering = "none"`},
		"NP106-lane-ack-pending.hcl":              {old: "max_ack_pending = 10", new: "max_ack_pending = 1"},
		"NP107-global-serialisation.hcl":          {old: "max_ack_pending = 1 ", new: "max_ack_pending = 100 "},
		"NP108-no-dead-letter.hcl":                {old: "max_deliver = 5", new: "max_deliver = 5\n  dead_letter { stream = \"DLQ\" }"},
		"NP109-max-waiting.hcl":                   {old: "max_waiting = 2", new: "max_waiting = 4"},
		"NP109-max-batch.hcl":                     {old: "max_batch = 20", new: "max_batch = 50"},
		"NP201-bad-partitioning.hcl":              {old: "key        = [3]", new: "key        = [1]"},
		"NP202-partition-coverage.hcl":            {old: `"fulfilment-extra"`, new: `"audit"`},
		"NP203-workqueue-overlap.hcl":             {old: `filter_subject = "jobs.>"`, new: `filter_subject = "jobs.bill.*"`},
		"NP204-repartition.hcl":                   {old: "partitions = 8", new: "partitions = 4", live: liveWith([]*model.Stream{liveOrders(4)})},
		"NP205-dead-filter.hcl":                   {old: `"orders.*.created"`, new: `"*.orders.*.created"`},
		"NP305-ack-wait-not-first-backoff.hcl":    {old: `ack_wait   = "10s"`, new: `ack_wait   = "1s"`},
	}
	files, err := filepath.Glob("../examples/invalid/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	covered := map[finding.Code]bool{}
	for _, file := range files {
		base := filepath.Base(file)
		if strings.HasPrefix(base, "NP304") {
			continue // found by the preflight server, not by plan: cmd's TestValidateInvalidExamples
		}
		t.Run(base, func(t *testing.T) {
			fix, ok := fixes[base]
			if !ok {
				t.Fatalf("no fix listed for %s", base)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			wants := markers(src)
			if len(wants) == 0 {
				t.Fatal("no # ERROR: / # WARNING: marker")
			}
			findings, path := check(t, src, fix.live)
			for _, w := range wants {
				covered[w.code] = true
				if !hasFinding(findings, w, path) {
					t.Errorf("want %s %s at line %d, got:\n%s", w.sev, w.code, w.line, dump(findings))
				}
			}
			for _, f := range findings {
				if !slicesContainsCode(wants, f.Code) {
					t.Errorf("unexpected finding %s %s at %s: %s", f.Severity, f.Code, f.Range, f.Message)
				}
			}
			if !strings.Contains(src, fix.old) {
				t.Fatalf("fix %q not found in the example", fix.old)
			}
			fixed, _ := check(t, strings.Replace(src, fix.old, fix.new, 1), fix.live)
			if len(fixed) != 0 {
				t.Errorf("the fixed config still has findings:\n%s", dump(fixed))
			}
		})
	}
	for _, code := range []finding.Code{"NP101", "NP102", "NP103", "NP104", "NP105", "NP106", "NP107", "NP108", "NP109",
		"NP201", "NP202", "NP203", "NP204", "NP205", "NP305"} {
		if !covered[code] {
			t.Errorf("no example triggers %s", code)
		}
	}
}

func hasFinding(findings []*finding.Finding, w want, path string) bool {
	for _, f := range findings {
		if f.Code == w.code && f.Severity == w.sev && strings.HasPrefix(f.Range, fmt.Sprintf("%s:%d:", path, w.line)) &&
			f.Message != "" && f.Address != "" {
			return true
		}
	}
	return false
}

func slicesContainsCode(ws []want, code finding.Code) bool {
	for _, w := range ws {
		if w.code == code {
			return true
		}
	}
	return false
}

func dump(fs []*finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s %s %s: %s\n", f.Severity, f.Code, f.Address, f.Range, f.Message)
	}
	return b.String()
}

const ordersHead = `
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}
`

const ordersMapping = `
subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 4
  key        = [1]
}
`

// TestInvariantsInline covers the cases that need the live server's facts or the
// server's defaults, and the nearest configs that must pass.
func TestInvariantsInline(t *testing.T) {
	cases := []struct {
		name string
		src  string
		live *model.Model
	}{
		{name: "fan-out: live per-process durables beside the declared group", live: liveWith(nil,
			liveConsumer("ORDERS", "email-4821", "*.orders.*.created", "")),
			src: ordersHead + ordersMapping + `
consumer_group "email" { # ERROR: NP103
  stream          = "ORDERS"
  filter_subjects = ["*.orders.*.created"]
}`},
		{name: "fan-out: a live consumer of another service passes", live: liveWith(nil,
			liveConsumer("ORDERS", "billing", "*.orders.*.created", "")),
			src: ordersHead + ordersMapping + `
consumer_group "email" {
  stream          = "ORDERS"
  filter_subjects = ["*.orders.*.created"]
}`},
		{name: "fan-out: host and uuid suffixes", src: ordersHead + `
consumer "ORDERS" "orders-host-a" {
  ack_policy = "explicit"
}
consumer "ORDERS" "orders-host-b" { # ERROR: NP103
  ack_policy = "explicit"
}
consumer "ORDERS" "sync" {
  ack_policy = "explicit"
}
consumer "ORDERS" "sync-7f3a9c1e-1b2d-4e5f-8a9b-0c1d2e3f4a5b" { # ERROR: NP103
  ack_policy = "explicit"
}`},
		{name: "fan-out: per-process names on disjoint filters pass", src: ordersHead + `
consumer "ORDERS" "worker-1" {
  filter_subject = "orders.eu.>"
}
consumer "ORDERS" "worker-2" {
  filter_subject = "orders.us.>"
}`},
		{name: "coverage: a live consumer in the group's name space doubles a lane", live: liveWith(
			[]*model.Stream{liveOrders(4)}, liveConsumer("ORDERS", "fulfilment-legacy", ">", "")),
			src: ordersHead + ordersMapping + `
consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "by_customer" # ERROR: NP202
  ordering = "per_key"
}`},
		{name: "coverage: this project's stale lane is deleted by the plan, so it passes", live: liveWith(
			[]*model.Stream{liveOrders(4)}, liveConsumer("ORDERS", "fulfilment-7", "7.orders.*.*", "shop")),
			src: ordersHead + ordersMapping + `
consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "by_customer"
  ordering = "per_key"
}`},
		{name: "coverage: group filters that pin one partition leave the others unread", src: ordersHead + ordersMapping + `
consumer_group "vip" {
  stream          = "ORDERS"
  mapping         = "by_customer"
  filter_subjects = ["2.orders.*.*"] # ERROR: NP202
}`},
		{name: "workqueue: overlap with a consumer only the server has", live: liveWith(nil,
			liveConsumer("JOBS", "legacy", "jobs.>", "")), src: `
natsplan { project = "shop" }
stream "JOBS" {
  subjects  = ["jobs.>"]
  retention = "workqueue"
}
consumer "JOBS" "billing" {
  filter_subject = "jobs.bill.*" # ERROR: NP203
  ack_policy     = "explicit"
}`},
		{name: "NP101 from the stream's consumer_limits default", src: `
natsplan { project = "shop" }
stream "ORDERS" {
  subjects = ["orders.>"]
  consumer_limits {
    max_ack_pending = 20
  }
}
consumer_group "email" {
  stream = "ORDERS"
  workers {
    count       = 1
    fetch_batch = 50 # ERROR: NP101
  }
}`},
		{name: "NP109 from the server's max_request_batch", live: func() *model.Model {
			m := liveWith(nil)
			m.Target.Limits.MaxRequestBatch = 25
			return m
		}(), src: ordersHead + `
consumer_group "email" {
  stream = "ORDERS"
  workers {
    count       = 1
    fetch_batch = 50 # ERROR: NP109
  }
}`},
		{name: "NP104 from a backoff step", src: ordersHead + `
consumer_group "email" {
  stream = "ORDERS"
  consumer {
    backoff     = ["1m", "5s"] # ERROR: NP104
    max_deliver = 3
  }
  workers {
    max_handler_time = "20s"
  }
  dead_letter { stream = "DLQ" }
}`},
		{name: "NP201: a literal source", src: ordersHead + `
subject_mapping "m" {
  stream     = "ORDERS"
  source     = "orders.new" # ERROR: NP201
  partitions = 4
}`},
		{name: "NP201: a source outside the stream's subjects", src: ordersHead + `
subject_mapping "m" {
  stream     = "ORDERS"
  source     = "payments.*" # ERROR: NP201
  partitions = 4
  key        = [1]
}`},
		{name: "NP201: the destination disagrees with partitions", src: ordersHead + `
subject_mapping "m" {
  stream      = "ORDERS"
  source      = "orders.*"
  partitions  = 4
  key         = [1]
  destination = "{{partition(3,1)}}.orders.{{wildcard(1)}}" # ERROR: NP201
}`},
		{name: "NP204: a key change re-routes too", live: liveWith([]*model.Stream{liveOrders(4)}), src: ordersHead + `
subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 4
  key        = [2] # WARNING: NP204
}`},
		{name: "the documented orders example passes", live: liveWith([]*model.Stream{liveOrders(8)}), src: ordersHead + `
consumer "ORDERS" "audit" {
  filter_subjects = ["*.orders.*.*"]
  ack_policy      = "explicit"
  max_ack_pending = 500
}
subject_mapping "orders_by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 8
  key        = [1]
}
consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "orders_by_customer"
  ordering = "per_key"
  consumer {
    ack_wait    = "30s"
    max_deliver = 5
  }
  workers {
    count            = 4
    fetch_batch      = 1
    concurrency      = 1
    handler          = "io"
    max_handler_time = "10s"
  }
  dead_letter { stream = "ORDERS_DLQ" }
}
consumer_group "email" {
  stream          = "ORDERS"
  filter_subjects = ["*.orders.*.created"]
  consumer { max_ack_pending = 200 }
  workers {
    count       = 4
    fetch_batch = 50
  }
}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wants := markers(tc.src)
			findings, path := check(t, tc.src, tc.live)
			for _, w := range wants {
				if !hasFinding(findings, w, path) {
					t.Errorf("want %s %s at line %d, got:\n%s", w.sev, w.code, w.line, dump(findings))
				}
			}
			for _, f := range findings {
				if !slicesContainsCode(wants, f.Code) {
					t.Errorf("unexpected finding %s %s at %s: %s", f.Severity, f.Code, f.Range, f.Message)
				}
			}
		})
	}
}

func TestStem(t *testing.T) {
	cases := map[string]string{
		"worker-1": "worker", "email-4821": "email", "worker-7f3a": "worker", "orders-host-a": "orders",
		"email-5d8f9b7c4d-x2kq4": "email", "sync-ip-10-0-0-12": "sync", "orders_a": "orders",
		"sync-7f3a9c1e-1b2d-4e5f-8a9b-0c1d2e3f4a5b": "sync",
		// Service names stay whole.
		"email": "email", "email-feed": "email-feed", "billing-v2": "billing-v2", "fulfilment-extra": "fulfilment-extra",
		"1": "1",
	}
	for name, stem := range cases {
		if got, _ := plan.Stem(name); got != stem {
			t.Errorf("Stem(%q) = %q, want %q", name, got, stem)
		}
	}
}
