package schema

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/natsplan/natsplan/internal/ctxtest"
)

// TestLoadStopsWhenCancelled cancels loading at points spread over the work (by the
// number of times it has looked at the context, not by time) and requires that Load
// then returns the cancellation and no model.
func TestLoadStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	dir := ctxtest.WriteLargeConfig(t, 4, 50)
	full := ctxtest.EndsAfter(1 << 40)
	m, diags, err := NewLoader().LoadContext(full, []string{dir}, Vars{})
	if err != nil || diags.HasErrors() || len(m.Streams) != 200 || len(m.Consumers) != 400 {
		t.Fatalf("uncancelled load: err %v, diags %v, %d streams, %d consumers", err, diags, len(m.Streams), len(m.Consumers))
	}
	looks := full.Looks()
	if looks < 200 {
		t.Fatalf("a load of 600 blocks looked at the context %d times: it must look between blocks", looks)
	}
	for _, at := range []int64{0, 1, looks / 4, looks / 2, looks - 1} {
		t.Run(fmt.Sprint("after ", at, " of ", looks), func(t *testing.T) {
			ctx := ctxtest.EndsAfter(at)
			m, diags, err := NewLoader().LoadContext(ctx, []string{dir}, Vars{})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if m != nil || diags != nil {
				t.Errorf("a cancelled load returned a model (%v) or diagnostics (%v)", m != nil, diags)
			}
			// Once cancelled, only the parsers not yet started (one look per file) and
			// the way out look again: the blocks left are not decoded.
			if got := ctx.Looks(); got > at+4+2 {
				t.Errorf("%d looks at the context after it ended at %d: the load went on working", got-at, at)
			}
		})
	}
}
