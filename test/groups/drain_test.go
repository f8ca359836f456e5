package groups_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/apply"
	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// TestRepartitionWaitsForDrainedLanes: repartitioning while a lane holds messages is an
// NP204 error that shows each lane's counters and that apply refuses unless
// AllowReorder; once the lanes are drained it is the warning it was.
func TestRepartitionWaitsForDrainedLanes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(ordersExample, "orders.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	example := string(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	api := jsapi.New(nc, "", 5*time.Second)
	p, _ := planAgainst(ctx, t, api, example)
	if res, err := apply.Run(ctx, api, p, apply.Options{}); err != nil || !res.OK() {
		t.Fatalf("apply the example: %v", err)
	}
	if _, err := nc.Request("orders.acme.created", []byte("{}"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	twelve := strings.Replace(example, "partitions = 8", "partitions = 12", 1)

	cases := []struct {
		name    string
		drain   bool
		opts    apply.Options
		sev     finding.Severity
		refused bool
	}{
		{"a lane holds a message: refused", false, apply.Options{AllowDelete: true}, finding.SevError, true},
		{"a lane holds a message: --allow-reorder accepts", false, apply.Options{AllowDelete: true, AllowReorder: true}, finding.SevError, false},
		{"drained: a warning", true, apply.Options{AllowDelete: true}, finding.SevWarning, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.drain {
				// Nothing pending and nothing in flight on any lane.
				mustRequest(ctx, t, api, "STREAM.PURGE.ORDERS")
			}
			p, _ := planAgainst(ctx, t, api, twelve)
			var np204 *finding.Finding
			for _, f := range p.Findings {
				if f.Code == finding.CodeRepartition {
					np204 = f
				}
			}
			if np204 == nil || np204.Severity != c.sev {
				t.Fatalf("NP204 %+v, want severity %s", np204, c.sev)
			}
			if !strings.Contains(np204.Message, "fulfilment-0 ") || !strings.Contains(np204.Message, "in flight") {
				t.Errorf("NP204 does not show the lanes' counters: %s", np204.Message)
			}
			if c.sev == finding.SevError && np204.Overridable != plan.OverrideReorder {
				t.Errorf("NP204 error overridable by %q, want %q", np204.Overridable, plan.OverrideReorder)
			}
			res, err := apply.Run(ctx, api, p, c.opts)
			var refused *apply.RefusedError
			if got := errors.As(err, &refused); got != c.refused {
				t.Fatalf("refused %v (%v), want %v", got, err, c.refused)
			}
			if c.refused {
				if !strings.Contains(refused.Error(), "--allow-reorder") {
					t.Errorf("refusal does not name the flag: %v", refused)
				}
				return
			}
			if err != nil || !res.OK() {
				t.Fatalf("apply: %v", err)
			}
			// Back to 8 lanes for the next case.
			back, _ := planAgainst(ctx, t, api, example)
			if res, err := apply.Run(ctx, api, back, apply.Options{AllowDelete: true, AllowReorder: true}); err != nil || !res.OK() {
				t.Fatalf("back to 8 partitions: %v", err)
			}
		})
	}
}

func mustRequest(ctx context.Context, t *testing.T, api *jsapi.Client, subject string) {
	t.Helper()
	if err := api.Request(ctx, subject, subject, nil, nil); err != nil {
		t.Fatal(err)
	}
}
