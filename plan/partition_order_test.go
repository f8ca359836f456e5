package plan_test

import (
	"fmt"
	"testing"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

func TestOrderLanes(t *testing.T) {
	cases := []struct {
		name     string
		from, to int
	}{
		{"grow 4 to 8", 4, 8},
		{"shrink 8 to 2", 8, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(`%s
subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = %d
  key        = [1]
}
consumer_group "fulfilment" {
  stream   = "ORDERS"
  mapping  = "by_customer"
  ordering = "per_key"
}`, ordersHead, tc.to)
			desired := loadModel(t, src)
			live := liveWith([]*model.Stream{liveOrders(tc.from)})
			for p := range tc.from {
				c := liveConsumer("ORDERS", fmt.Sprintf("fulfilment-%d", p), fmt.Sprintf("%d.orders.*.*", p), "shop")
				live.Consumers[c.Key()] = c
			}
			p, err := plan.Compute(desired, live, plan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			plan.OrderLanes(p, desired, live)
			step := map[string]int{}
			var created, deleted []string
			for i, ch := range p.Changes {
				step[ch.Address] = ch.Step
				if i > 0 && ch.Step < p.Changes[i-1].Step {
					t.Fatalf("changes not sorted by step: %s after %s", ch.Address, p.Changes[i-1].Address)
				}
				switch ch.Action {
				case plan.ActCreate:
					created = append(created, ch.Address)
				case plan.ActDelete:
					deleted = append(deleted, ch.Address)
				}
			}
			streamStep, ok := step["stream.ORDERS"]
			if !ok {
				t.Fatalf("no stream update in the plan: %+v", p.Changes)
			}
			if want := max(tc.to-tc.from, 0); len(created) != want {
				t.Fatalf("created %v, want %d lanes", created, want)
			}
			if want := max(tc.from-tc.to, 0); len(deleted) != want {
				t.Fatalf("deleted %v, want %d lanes", deleted, want)
			}
			for _, a := range created {
				if step[a] >= streamStep {
					t.Errorf("%s is created at step %d, not before the transform changes at step %d", a, step[a], streamStep)
				}
			}
			for _, a := range deleted {
				if step[a] <= streamStep {
					t.Errorf("%s is deleted at step %d, not after the transform changes at step %d", a, step[a], streamStep)
				}
			}
		})
	}
}
