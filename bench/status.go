package main

import (
	"context"
	"fmt"
	"time"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/schema"
	"github.com/natsplan/natsplan/status"
)

// natsplanStatus does what `natsplan status` does: load the files while reading the
// server, then evaluate (first); and what each further --watch sample does: read the
// declared streams' consumers and evaluate against the first sample (again).
func natsplanStatus(ctx context.Context, js *jsapi.Client, dir string, first, again *phases) error {
	start := time.Now()
	type read struct {
		live *model.Model
		err  error
		took time.Duration
	}
	done := make(chan read, 1)
	go func() {
		live, err := observe.Read(ctx, js, observe.Options{Parallelism: parallelism})
		done <- read{live, err, time.Since(start)}
	}()
	desired, diags := schema.Load([]string{dir}, schema.Vars{})
	loaded := time.Since(start)
	r := <-done
	if diags.HasErrors() {
		return diags
	}
	if r.err != nil {
		return r.err
	}
	t2 := time.Now()
	prev := &status.Sample{Time: t2, Live: r.live}
	rep := status.Evaluate(desired, prev, nil, status.DefaultThresholds())
	t3 := time.Now()
	*first = phases{load: loaded, read: r.took, compute: t3.Sub(t2), total: t3.Sub(start)}
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
