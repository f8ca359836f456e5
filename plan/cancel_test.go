package plan_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/natsplan/natsplan/internal/ctxtest"
	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
)

// TestComputeStopsWhenCancelled cancels Compute, Validate and the invariant checks at
// points spread over their work (by the number of times they have looked at the
// context, not by time) and requires the cancellation back and no result.
func TestComputeStopsWhenCancelled(t *testing.T) {
	desired, live := benchModel(40, 10)
	for _, fn := range []struct {
		name string
		run  func(ctx context.Context) (any, error)
	}{
		{"compute", func(ctx context.Context) (any, error) {
			p, err := plan.ComputeContext(ctx, desired, live, plan.Options{})
			return p, err
		}},
		{"validate", func(ctx context.Context) (any, error) {
			fs, err := plan.ValidateContext(ctx, desired)
			return fs, err
		}},
		{"invariants", func(ctx context.Context) (any, error) {
			fs, err := plan.CheckInvariantsContext(ctx, desired, live)
			return fs, err
		}},
	} {
		t.Run(fn.name, func(t *testing.T) {
			full := ctxtest.EndsAfter(1 << 40)
			if res, err := fn.run(full); err != nil || isNil(res) {
				t.Fatalf("uncancelled: %v", err)
			}
			looks := full.Looks()
			if looks < 40 {
				t.Fatalf("%d looks at the context over 40 streams and %d consumers: it must look between objects",
					looks, len(desired.Consumers))
			}
			for _, at := range []int64{0, 1, looks / 4, looks / 2, looks - 1} {
				t.Run(fmt.Sprint("after ", at, " of ", looks), func(t *testing.T) {
					res, err := fn.run(ctxtest.EndsAfter(at))
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("err = %v, want context.Canceled", err)
					}
					if !isNil(res) {
						t.Errorf("a cancelled run returned a result: %v", res)
					}
				})
			}
		})
	}
}

func isNil(res any) bool {
	switch r := res.(type) {
	case *plan.Plan:
		return r == nil
	case []*finding.Finding:
		return r == nil
	}
	return res == nil
}
