package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// waiter takes the lease, waiting for the holder to release it or to stop refreshing it.
type waiter struct {
	kv  jetstream.KeyValue
	key string
	o   Options

	// The holder's lease as last seen: its revision, when this process first saw
	// that revision, and its value.
	seenRev  uint64
	seenAt   time.Time
	seenInfo Info
}

func (w *waiter) acquire(ctx context.Context) (*Lease, error) {
	start := time.Now()
	deadline := start.Add(w.o.Wait)
	var updates <-chan jetstream.KeyValueEntry
	for {
		info := w.fresh()
		sent := time.Now()
		rev, err := w.kv.Create(ctx, w.key, encode(info))
		if err == nil {
			return hold(w.kv, w.o, w.key, info, rev, sent), nil
		}
		if !isConflict(err) {
			return nil, fmt.Errorf("apply lock: take %s: %w", w.key, err)
		}
		held, err := w.observe(ctx)
		if err != nil {
			return nil, err
		}
		if !held {
			continue // released between the create and the read
		}
		if time.Since(w.seenAt) >= w.o.TTL {
			// Not refreshed for a whole TTL: the holder is gone. Take over by
			// compare-and-set, so of several waiters exactly one succeeds.
			info := w.fresh()
			sent := time.Now()
			rev, err := w.kv.Update(ctx, w.key, encode(info), w.seenRev)
			if err == nil {
				return hold(w.kv, w.o, w.key, info, rev, sent), nil
			}
			if !isConflict(err) {
				return nil, fmt.Errorf("apply lock: take over %s: %w", w.key, err)
			}
			continue
		}
		now := time.Now()
		if !now.Before(deadline) {
			return nil, &HeldError{Project: w.key, Bucket: w.o.Bucket, Info: w.seenInfo, TTL: w.o.TTL, Waited: now.Sub(start)}
		}
		if updates == nil {
			kw, err := w.kv.Watch(ctx, w.key, jetstream.UpdatesOnly())
			if err != nil {
				return nil, fmt.Errorf("apply lock: watch %s: %w", w.key, err)
			}
			defer func() { _ = kw.Stop() }() // stopping only unsubscribes
			updates = kw.Updates()
			continue // look again: a release may have come before the watch started
		}
		wakeAt := w.seenAt.Add(w.o.TTL)
		if deadline.Before(wakeAt) {
			wakeAt = deadline
		}
		wake := time.NewTimer(wakeAt.Sub(now))
		select {
		case <-ctx.Done():
			wake.Stop()
			return nil, fmt.Errorf("apply lock: waiting for %s: %w", w.key, ctx.Err())
		case _, ok := <-updates:
			if !ok {
				updates = nil // the watcher ended; timers still bound the wait
			}
		case <-wake.C:
		}
		wake.Stop()
	}
}

// observe reads the current lease and notes when its revision changed. It reports
// false when there is no lease to wait for.
func (w *waiter) observe(ctx context.Context) (bool, error) {
	e, err := w.kv.Get(ctx, w.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("apply lock: read %s: %w", w.key, err)
	}
	if e.Revision() != w.seenRev {
		w.seenRev, w.seenAt = e.Revision(), time.Now()
		w.seenInfo = Info{Holder: "an unknown holder"}
		if err := json.Unmarshal(e.Value(), &w.seenInfo); err != nil {
			w.seenInfo = Info{Holder: fmt.Sprintf("an unreadable lease (%v)", err)}
		}
	}
	return true, nil
}

func (w *waiter) fresh() Info {
	now := time.Now().UTC()
	return Info{Holder: w.o.Holder, Since: now, Expires: now.Add(w.o.TTL)}
}
