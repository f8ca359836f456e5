package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// phaseStreams is the size of the topology the phase benchmarks plan: the harness's N.
const phaseStreams = 1000

// BenchmarkPlanPhases measures each phase of a no-change plan of the harness's
// configuration (1,000 streams × 2 consumers, applied once through natsplan) on its own,
// so a profile of one phase is not diluted by the others:
//
//	go test ./bench -run '^$' -bench PlanPhases -benchtime 10x -cpuprofile cpu.out
func BenchmarkPlanPhases(b *testing.B) {
	ctx := context.Background()
	s := testsrv.Start(b, func(o *embedded.Options) { o.DefaultMaxConsumers = -1 })
	js := jsapi.New(testsrv.Connect(b, s), "", 30*time.Second)
	dir := b.TempDir()
	if err := writeConfig(dir, phaseStreams); err != nil {
		b.Fatal(err)
	}
	var ph phases
	if err := natsplanApply(ctx, js, dir, &ph); err != nil {
		b.Fatal(err)
	}
	desired, diags := schema.Load([]string{dir}, schema.Vars{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	live, err := observe.Read(ctx, js, observe.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if m, diags := schema.Load([]string{dir}, schema.Vars{}); diags.HasErrors() || len(m.Consumers) != 2*phaseStreams {
				b.Fatalf("load: %v", diags)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if m, err := observe.Read(ctx, js, observe.Options{}); err != nil || len(m.Consumers) != 2*phaseStreams {
				b.Fatalf("read: %v", err)
			}
		}
	})
	for _, par := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("raw-read/parallelism=%d", par), func(b *testing.B) {
			for b.Loop() {
				if err := rawReadAll(ctx, js, phaseStreams, par); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("compute", func(b *testing.B) {
		for b.Loop() {
			p, err := plan.Compute(desired, live, plan.Options{Version: "bench"})
			if err != nil || p.HasChanges() {
				b.Fatalf("compute: %v, changes: %v", err, p != nil && p.HasChanges())
			}
		}
	})
	// What apply plans on an empty account: every object a create.
	empty := model.New()
	empty.Target = live.Target
	b.Run("compute-create", func(b *testing.B) {
		for b.Loop() {
			p, err := plan.Compute(desired, empty, plan.Options{Version: "bench"})
			if err != nil || len(p.Changes) != 3*phaseStreams {
				b.Fatalf("compute: %v", err)
			}
		}
	})
	b.Run("total", func(b *testing.B) {
		for b.Loop() {
			if err := natsplanPlan(ctx, js, dir, &ph); err != nil {
				b.Fatal(err)
			}
		}
	})
}
