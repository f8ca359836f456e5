package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// execute sends one change to the server. KV buckets and object stores are streams.
func execute(ctx context.Context, c *jsapi.Client, ch *plan.Change) error {
	if ch.Kind == model.KindConsumer {
		return executeConsumer(ctx, c, ch)
	}
	var err error
	switch ch.Action {
	case plan.ActCreate:
		_, err = c.CreateStream(ctx, ch.Name, ch.After)
	case plan.ActUpdate, plan.ActAdopt:
		_, err = c.UpdateStream(ctx, ch.Name, ch.After)
	case plan.ActDelete:
		// Already gone is what the delete wanted.
		if err = c.DeleteStream(ctx, ch.Name); jsapi.IsNotFound(err) {
			err = nil
		}
	}
	return err
}

func executeConsumer(ctx context.Context, c *jsapi.Client, ch *plan.Change) error {
	switch ch.Action {
	case plan.ActCreate:
		return writeConsumer(ctx, c, ch, jsapi.ConsumerCreate)
	case plan.ActUpdate, plan.ActAdopt:
		return writeConsumer(ctx, c, ch, jsapi.ConsumerUpdate)
	case plan.ActDelete:
		return deleteConsumer(ctx, c, ch.Stream, ch.Name)
	case plan.ActReplace:
		if err := deleteConsumer(ctx, c, ch.Stream, ch.Name); err != nil {
			return fmt.Errorf("replace: %w", err)
		}
		if err := writeConsumer(ctx, c, ch, jsapi.ConsumerCreate); err != nil {
			return &partialError{fmt.Errorf("replace: the old consumer was deleted but the new one was not created: %w", err)}
		}
	}
	return nil
}

func writeConsumer(ctx context.Context, c *jsapi.Client, ch *plan.Change, action jsapi.ConsumerAction) error {
	info, err := c.WriteConsumer(ctx, ch.Stream, ch.Name, ch.After, action)
	if err != nil {
		return err
	}
	if err := syncPause(ctx, c, ch, info); err != nil {
		return &partialError{fmt.Errorf("the consumer was written but its pause was not set: %w", err)}
	}
	return nil
}

// syncPause makes the consumer's pause match the config sent. The server honours
// pause_until only when a write creates the consumer and keeps the stored value on every
// other write (reference §3.2), so the reply says whether the PAUSE API is needed. A
// consumer is resumed only when the plan changes pause_until, never because it was paused
// by hand.
func syncPause(ctx context.Context, c *jsapi.Client, ch *plan.Change, info *server.ConsumerInfo) error {
	var cfg struct {
		PauseUntil *time.Time `json:"pause_until"`
	}
	if err := json.Unmarshal(ch.After, &cfg); err != nil {
		return fmt.Errorf("read pause_until: %w", err)
	}
	var have *time.Time
	if info != nil && info.Config != nil {
		have = info.Config.PauseUntil
	}
	want := cfg.PauseUntil
	switch {
	case want != nil && !want.IsZero() && (have == nil || !have.Equal(*want)):
		return c.PauseConsumer(ctx, ch.Stream, ch.Name, *want)
	case (want == nil || want.IsZero()) && have != nil && !have.IsZero() && changesPause(ch):
		return c.PauseConsumer(ctx, ch.Stream, ch.Name, time.Time{})
	}
	return nil
}

func changesPause(ch *plan.Change) bool {
	for _, f := range ch.Fields {
		if f.Path == "pause_until" || f.Via == "pause" {
			return true
		}
	}
	return false
}

// deleteConsumer deletes a consumer; one that is already gone counts as deleted. In a
// cluster a consumer whose creation failed can stay behind as a ghost whose delete times
// out but works (reference §5.2), so a timeout is checked against the consumer's info.
func deleteConsumer(ctx context.Context, c *jsapi.Client, stream, name string) error {
	err := c.DeleteConsumer(ctx, stream, name)
	if err == nil || jsapi.IsNotFound(err) {
		return nil
	}
	if !timedOut(err) || ctx.Err() != nil {
		return err
	}
	info, ierr := c.ConsumerInfo(ctx, stream, name)
	if ierr == nil && info == nil {
		return nil
	}
	return err
}

func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
}
