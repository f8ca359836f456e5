package main

import (
	"context"
	"fmt"
	"time"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/status"
)

// natsplanStatus does what `natsplan status` does: load the files while reading the
// server, then evaluate (first); and what each further --watch sample does: read the
// declared streams' consumers and evaluate against the first sample (again).
func natsplanStatus(ctx context.Context, js *jsapi.Client, dir string, first, again *phases) error {
	start := time.Now()
	*first = phases{}
	desired, live, err := loadAndRead(ctx, js, dir, first)
	if err != nil {
		return err
	}
	t2 := time.Now()
	prev := &status.Sample{Time: t2, Live: live}
	rep := status.Evaluate(desired, prev, nil, status.DefaultThresholds())
	t3 := time.Now()
	first.compute, first.total = t3.Sub(t2), t3.Sub(start)
	if err := healthy(rep, len(desired.Consumers)); err != nil {
		return err
	}

	start = time.Now()
	cur, err := status.Read(ctx, js, desired, observe.Options{Parallelism: parallelism})
	if err != nil {
		return err
	}
	t2 = time.Now()
	rep = status.Evaluate(desired, cur, prev, status.DefaultThresholds())
	t3 = time.Now()
	*again = phases{read: t2.Sub(start), compute: t3.Sub(t2), total: t3.Sub(start)}
	return healthy(rep, len(desired.Consumers))
}

// healthy checks that status saw every declared consumer and reported nothing: the
// harness's consumers hold no messages.
func healthy(r *status.Report, consumers int) error {
	if len(r.Consumers) != consumers || !r.Healthy() {
		return fmt.Errorf("status read %d consumers (want %d), healthy %v, %d findings", len(r.Consumers), consumers, r.Healthy(), len(r.Findings))
	}
	return nil
}
