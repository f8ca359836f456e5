package groups_test

import (
	"context"
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

// planAgainst loads src, reads the server, and plans as natsplan plan does (Compute
// runs the invariants and OrderLanes).
func planAgainst(ctx context.Context, t *testing.T, api *jsapi.Client, src string) (*plan.Plan, *model.Model) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orders.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	desired, diags := schema.Load([]string{path}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	live, err := observe.Read(ctx, api, observe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compute(desired, live, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p, live
}

// TestOrdersConvergesAndRepartitions applies examples/orders, plans again (empty),
// then repartitions 8 -> 12 -> 4 ways: each apply succeeds in the order OrderLanes
// gives, warns NP204, and plans empty afterwards with exactly the declared lanes.
func TestOrdersConvergesAndRepartitions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(ordersExample, "orders.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	example := string(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := testsrv.Start(t)
	api := jsapi.New(testsrv.Connect(t, s), "", 5*time.Second)
	steps := []struct {
		partitions string
		lanes      int
		np204      bool
	}{{"8", 8, false}, {"12", 12, true}, {"4", 4, true}}
	for _, st := range steps {
		src := strings.Replace(example, "partitions = 8", "partitions = "+st.partitions, 1)
		p, _ := planAgainst(ctx, t, api, src)
		got204 := false
		for _, f := range p.Findings {
			if f.Severity == finding.SevError {
				t.Fatalf("%s partitions: error finding %s %s", st.partitions, f.Code, f.Message)
			}
			got204 = got204 || f.Code == finding.CodeRepartition
		}
		if got204 != st.np204 {
			t.Fatalf("%s partitions: NP204 reported %v, want %v", st.partitions, got204, st.np204)
		}
		res, err := apply.Run(ctx, api, p, apply.Options{AllowDelete: true})
		if err != nil || !res.OK() {
			t.Fatalf("%s partitions: apply: %v %+v", st.partitions, err, res)
		}
		again, live := planAgainst(ctx, t, api, src)
		if again.HasChanges() {
			for _, ch := range again.Changes {
				t.Errorf("%s partitions: after apply %s %s %v", st.partitions, ch.Action, ch.Address, fieldPaths(ch))
			}
			t.FailNow()
		}
		lanes := 0
		for _, c := range live.ConsumersOf("ORDERS") {
			if c.Config.Metadata[model.MetaGroup] == "consumer_group.fulfilment" {
				lanes++
			}
		}
		if lanes != st.lanes {
			t.Fatalf("%s partitions: %d lanes on the server, want %d", st.partitions, lanes, st.lanes)
		}
	}
}

func fieldPaths(ch *plan.Change) []string {
	var out []string
	for _, f := range ch.Fields {
		out = append(out, f.Path)
	}
	return out
}
