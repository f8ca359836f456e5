package schema_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/apply"
	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// Bucket fields are stream fields, so the stream field rules hold for them: a bucket
// created by natsplan, then edited, plans in-place changes as updates and refuses
// what the server can not change, at plan time, pointing at the bucket.
func TestBucketChangesFollowStreamFieldRules(t *testing.T) {
	t.Parallel()
	s := testsrv.Start(t)
	c := jsapi.New(testsrv.Connect(t, s), "", 5*time.Second)
	ctx := context.Background()
	cases := []struct {
		name, before, after string
		// refused is the stream field NP303 must name; otherwise update is the field
		// the plan must update in place.
		refused, update string
	}{
		{name: "kv storage", before: `kv "%s" { storage = "file" }`, after: `kv "%s" { storage = "memory" }`, refused: "storage"},
		{name: "kv history", before: `kv "%s" { history = 1 }`, after: `kv "%s" { history = 5 }`, update: "max_msgs_per_subject"},
		{name: "kv ttl", before: `kv "%s" { ttl = "1h" }`, after: `kv "%s" { ttl = "2h" }`, update: "max_age"},
		{name: "kv limit marker removed", before: `kv "%s" {
  ttl              = "1h"
  limit_marker_ttl = "5s"
}`, after: `kv "%s" { ttl = "1h" }`, refused: "allow_msg_ttl"},
		{name: "kv mirror added", before: `kv "%s" { history = 1 }`, after: `kv "%s" {
  mirror { name = "ORIGIN" }
}`, refused: "mirror"},
		{name: "object store storage", before: `object_store "%s" { storage = "memory" }`, after: `object_store "%s" { storage = "file" }`, refused: "storage"},
		{name: "object store ttl", before: `object_store "%s" { ttl = "1h" }`, after: `object_store "%s" { ttl = "30d" }`, update: "max_age"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bucket := fmt.Sprintf("b%d", i)
			// Each case is its own project, so it leaves the other cases' buckets alone.
			project := "t" + bucket
			origin := fmt.Sprintf("kv \"origin%d\" {}\n", i)
			desired := loadHCL(t, project, origin+fmt.Sprintf(tc.before, bucket))
			p := planAgainst(t, ctx, c, desired)
			if _, err := apply.Run(ctx, c, p, apply.Options{}); err != nil {
				t.Fatalf("apply the first version: %v", err)
			}
			p = planAgainst(t, ctx, c, loadHCL(t, project, origin+strings.ReplaceAll(fmt.Sprintf(tc.after, bucket), "ORIGIN", fmt.Sprintf("origin%d", i))))
			kind := "kv"
			if strings.HasPrefix(tc.before, "object_store") {
				kind = "object_store"
			}
			addr := kind + "." + bucket
			if tc.refused != "" {
				var found *finding.Finding
				for _, f := range p.Findings {
					if f.Code == finding.CodeRefused && f.Address == addr && strings.Contains(f.Message, tc.refused) {
						found = f
					}
				}
				if found == nil || found.Severity != finding.SevError {
					t.Fatalf("no NP303 error naming %s for %s; findings: %s", tc.refused, addr, findings(p))
				}
				if found.Range == "" {
					t.Errorf("the refusal does not point at the file: %+v", found)
				}
				// The change is listed, every difference of it, and blocked.
				if len(p.Changes) != 1 || p.Changes[0].Address != addr || p.Changes[0].Blocked == "" {
					t.Errorf("want the refused change listed once, blocked; got %d changes", len(p.Changes))
				}
				return
			}
			if p.HasErrors() {
				t.Fatalf("an in-place change was refused: %s", findings(p))
			}
			if len(p.Changes) != 1 || p.Changes[0].Address != addr || p.Changes[0].Action != plan.ActUpdate {
				t.Fatalf("want one update of %s, got %+v", addr, p.Changes)
			}
			var paths []string
			for _, f := range p.Changes[0].Fields {
				paths = append(paths, f.Path)
				if f.Path == tc.update && f.Rule != plan.RuleInPlace {
					t.Errorf("%s has rule %s, want in_place", f.Path, f.Rule)
				}
			}
			if !strings.Contains(strings.Join(paths, ","), tc.update) {
				t.Errorf("update fields %v, want %s", paths, tc.update)
			}
			if _, err := apply.Run(ctx, c, p, apply.Options{}); err != nil {
				t.Fatalf("apply the update: %v", err)
			}
		})
	}
}

func loadHCL(t *testing.T, project, src string) *model.Model {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "buckets.hcl"), []byte("natsplan {\n  project = \""+project+"\"\n}\n"+src+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, diags := schema.Load([]string{dir}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return m
}

func planAgainst(t *testing.T, ctx context.Context, c *jsapi.Client, desired *model.Model) *plan.Plan {
	t.Helper()
	live, err := observe.Read(ctx, c, observe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compute(desired, live, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func findings(p *plan.Plan) string {
	var out []string
	for _, f := range p.Findings {
		out = append(out, string(f.Code)+" "+f.Address+": "+f.Message)
	}
	return strings.Join(out, "; ")
}
