package schema

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// loadGroups writes src to a file and loads it.
func loadGroups(t *testing.T, src string) (*model.Model, hcl.Diagnostics) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "groups.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load([]string{path}, Vars{})
}

const groupsBase = `
natsplan { project = "shop" }

stream "ORDERS" {
  subjects = ["orders.>"]
}
`

const groupsMapping = `
subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 4
  key        = [1]
}
`

func TestExpandGroupsPartitioned(t *testing.T) {
	t.Parallel()
	m, diags := loadGroups(t, groupsBase+groupsMapping+`
consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "by_customer"
  ordering = "per_key"
  consumer {
    ack_wait    = "30s"
    max_deliver = 5
    metadata    = { team = "ops" }
  }
  workers {
    count            = 4
    fetch_batch      = 1
    fetch_expires    = "5s"
    concurrency      = 2
    handler          = "io"
    max_handler_time = "10s"
  }
  dead_letter { stream = "ORDERS_DLQ" }
}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tr := m.Streams["ORDERS"].Config.SubjectTransform
	if tr == nil || tr.Source != "orders.*.*" || tr.Destination != "{{partition(4,1)}}.orders.{{wildcard(1)}}.{{wildcard(2)}}" {
		t.Fatalf("stream transform = %+v", tr)
	}
	var dlq []string
	for p := range 4 {
		name := "fulfilment-" + string(rune('0'+p))
		c := m.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: name}]
		if c == nil {
			t.Fatalf("lane %s not generated", name)
		}
		cfg := c.Config
		want := []string{string(rune('0'+p)) + ".orders.*.*"}
		if cfg.Durable != name || !slices.Equal(cfg.FilterSubjects, want) || cfg.MaxAckPending != 1 ||
			cfg.AckPolicy != server.AckExplicit || cfg.MaxDeliver != 5 {
			t.Errorf("lane %s config = %+v", name, cfg)
		}
		md := cfg.Metadata
		if md[model.MetaGroup] != "consumer_group.fulfilment" || md["team"] != "ops" ||
			md[model.MetaWorkersPrefix+"count"] != "4" || md[model.MetaWorkersPrefix+"fetch_batch"] != "1" ||
			md[model.MetaWorkersPrefix+"fetch_expires"] != "5s" || md[model.MetaWorkersPrefix+"concurrency"] != "2" ||
			md[model.MetaWorkersPrefix+"handler"] != "io" || md[model.MetaWorkersPrefix+"max_handler_time"] != "10s" {
			t.Errorf("lane %s metadata = %v", name, md)
		}
		if c.Group != "consumer_group.fulfilment" || c.Decl == nil || c.Decl.Range.Start.Line != 15 {
			t.Errorf("lane %s group %q decl %v", name, c.Group, c.Decl)
		}
		dlq = append(dlq, deadLetterSubjects("ORDERS", name)...)
	}
	if len(m.ConsumersOf("ORDERS")) != 4 {
		t.Fatalf("want 4 lanes, got %d consumers", len(m.ConsumersOf("ORDERS")))
	}
	d := m.Streams["ORDERS_DLQ"]
	if d == nil {
		t.Fatal("dead-letter stream not generated")
	}
	if !slices.Equal(d.Config.Subjects, dlq) || d.Config.Storage != server.FileStorage ||
		d.Config.Retention != server.LimitsPolicy || d.Config.MaxAge != deadLetterMaxAge {
		t.Fatalf("dead-letter stream = %+v", d.Config)
	}
	if d.Decl == nil || d.Decl.Range.Start.Line != 32 {
		t.Fatalf("dead-letter decl = %v, want the dead_letter block", d.Decl)
	}
}

func TestExpandGroupsShared(t *testing.T) {
	t.Parallel()
	m, diags := loadGroups(t, groupsBase+`
stream "DLQ" {
  subjects = ["dlq.manual"]
}

consumer_group "email" {
  stream          = "ORDERS"
  filter_subjects = ["orders.*.created", "orders.*.cancelled"]
  consumer {
    ack_policy      = "all"
    max_ack_pending = 200
  }
  dead_letter { stream = "DLQ" }
}

consumer "ORDERS" "audit" {
  filter_subject = "orders.>"
  dead_letter { stream = "DLQ" }
}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := m.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: "email"}]
	if c == nil || !slices.Equal(c.Config.FilterSubjects, []string{"orders.*.created", "orders.*.cancelled"}) ||
		c.Config.AckPolicy != server.AckAll || c.Config.MaxAckPending != 200 {
		t.Fatalf("shared consumer = %+v", c)
	}
	if m.Streams["ORDERS"].Config.SubjectTransform != nil {
		t.Fatal("a shared group must not transform the stream")
	}
	want := append([]string{"dlq.manual"}, deadLetterSubjects("ORDERS", "audit")...)
	want = append(want, deadLetterSubjects("ORDERS", "email")...)
	if got := m.Streams["DLQ"].Config.Subjects; !slices.Equal(got, want) {
		t.Fatalf("declared dead-letter stream subjects = %v, want %v", got, want)
	}
}

func TestExpandGroupsLaneFilters(t *testing.T) {
	t.Parallel()
	m, diags := loadGroups(t, groupsBase+groupsMapping+`
consumer_group "created" {
  stream          = "ORDERS"
  mapping         = "by_customer"
  filter_subjects = ["*.orders.*.created", "*.orders.*.*", "1.orders.vip.*"]
}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// *.orders.*.* covers the others, so each lane keeps only its partition's space.
	for p, want := range []string{"0.orders.*.*", "1.orders.*.*", "2.orders.*.*", "3.orders.*.*"} {
		c := m.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: "created-" + string(rune('0'+p))}]
		if c == nil || !slices.Equal(c.Config.FilterSubjects, []string{want}) {
			t.Fatalf("lane %d = %+v, want filter %s", p, c, want)
		}
		if c.Config.MaxAckPending != 0 {
			t.Fatalf("lane %d without per_key ordering got max_ack_pending %d", p, c.Config.MaxAckPending)
		}
	}
	m, diags = loadGroups(t, groupsBase+groupsMapping+`
consumer_group "vip" {
  stream          = "ORDERS"
  mapping         = "by_customer"
  filter_subjects = ["2.orders.*.created"]
}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := m.ConsumersOf("ORDERS"); len(got) != 1 || got[0].Name != "vip-2" ||
		!slices.Equal(got[0].Config.FilterSubjects, []string{"2.orders.*.created"}) {
		t.Fatalf("a group filter pinned to partition 2 must only make lane 2, got %v", got)
	}
}

func TestExpandGroupsInvalidMappingLeftToNP201(t *testing.T) {
	t.Parallel()
	m, diags := loadGroups(t, groupsBase+`
subject_mapping "bad" {
  stream     = "ORDERS"
  source     = "orders.*"
  partitions = 0
  key        = [1]
}
consumer_group "g" {
  stream  = "ORDERS"
  mapping = "bad"
}
`)
	if diags.HasErrors() {
		t.Fatalf("bad partitioning is NP201's to report, got %v", diags)
	}
	if m.Streams["ORDERS"].Config.SubjectTransform != nil || len(m.ConsumersOf("ORDERS")) != 0 {
		t.Fatal("an invalid mapping must not be applied nor make lanes")
	}
}

func TestExpandGroupsErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, summary string
	}{
		{"mapping on undeclared stream", `
subject_mapping "m" {
  stream     = "NOPE" # ERROR
  source     = "orders.*"
  partitions = 2
  key        = [1]
}`, "Undeclared stream"},
		{"second mapping on one stream", groupsMapping + `
subject_mapping "again" {
  stream     = "ORDERS" # ERROR
  source     = "orders.*.*"
  partitions = 2
  key        = [2]
}`, "Stream already transformed"},
		{"mapping and hand-written transform", `
stream "OTHER" {
  subjects = ["other.>"]
  subject_transform {
    src  = "other.*"
    dest = "x.{{wildcard(1)}}"
  }
}
subject_mapping "m" {
  stream     = "OTHER" # ERROR
  source     = "other.*"
  partitions = 2
  key        = [1]
}`, "Stream already transformed"},
		{"group names an undeclared mapping", groupsMapping + `
consumer_group "g" {
  stream  = "ORDERS"
  mapping = "by_custmer" # ERROR
}`, "Undeclared subject_mapping"},
		{"group and mapping on different streams", groupsMapping + `
stream "OTHER" {
  subjects = ["other.>"]
}
consumer_group "g" {
  stream  = "OTHER" # ERROR
  mapping = "by_customer"
}`, "Group and mapping on different streams"},
		{"filter in the template", `
consumer_group "g" {
  stream = "ORDERS"
  consumer {
    filter_subjects = ["orders.a"] # ERROR
  }
}`, "Not allowed in a group template"},
		{"generated name already declared", `
consumer "ORDERS" "g" {
  ack_policy = "explicit"
}
consumer_group "g" { # ERROR
  stream = "ORDERS"
}`, "Generated consumer already declared"},
		{"invalid dead-letter stream name", `
consumer "ORDERS" "c" {
  dead_letter {
    stream = "ORDERS.DLQ" # ERROR
  }
}`, "Invalid dead-letter stream name"},
		{"dead letters into their own stream", `
consumer "ORDERS" "c" {
  dead_letter {
    stream = "ORDERS" # ERROR
  }
}`, "Dead letters into the stream they come from"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := groupsBase + tc.src
			line := 0
			for i, l := range strings.Split(src, "\n") {
				if strings.Contains(l, "# ERROR") {
					line = i + 1
				}
			}
			_, diags := loadGroups(t, src)
			var errs hcl.Diagnostics
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("want exactly one error, got %v", diags)
			}
			if errs[0].Summary != tc.summary || errs[0].Subject == nil || errs[0].Subject.Start.Line != line {
				t.Fatalf("got %q at %v, want %q at line %d", errs[0].Summary, errs[0].Subject, tc.summary, line)
			}
		})
	}
}
