// Package lock is natsplan's opt-in apply lock: a lease held in a JetStream KV bucket
// so that two applies against one account never interleave.
//
// The lease is one key per project. Acquiring it is a KV create (which fails while
// the key exists); holding it is a compare-and-set update of the key every TTL/3;
// releasing it is a delete guarded by the holder's last revision. A waiter watches
// the key and takes the lease over, again by compare-and-set, when it is released
// or when its revision has not moved for a whole TTL by the waiter's own clock: the
// holder stopped refreshing, so it crashed or lost the server. Expiry is judged from
// the revision rather than from the timestamps in the value, so clocks that
// disagree between machines can not make a live lease look expired, and the bucket
// needs no per-message TTL support from the server. A holder fences its own writes:
// Fence lets one through only while the lease is fresh by the holder's clock, and
// refreshes it first otherwise, so a holder that stalled past its TTL and was taken
// over sends nothing more. See docs/lock.md.
package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/natsplan/natsplan/model"
	"os"
	"os/user"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of the lock settings.
const (
	DefaultBucket = model.DefaultLockBucket
	defaultTTL    = 30 * time.Second
	// minTTL keeps the refresh interval (TTL/3) well above a request's round trip.
	minTTL = 300 * time.Millisecond
)

// metaRole marks the lock bucket in its metadata, so that plans can recognise it as
// natsplan's own and not report it as unmanaged.
const (
	metaRole  = model.MetaRole
	roleValue = model.RoleLock
)

// Options configure Acquire.
type Options struct {
	// Bucket is the KV bucket holding the leases (DefaultBucket when empty). It is
	// created on first use.
	Bucket string
	// TTL is how long a lease lives without a refresh (defaultTTL when zero).
	TTL time.Duration
	// Wait is how long to wait for a held lease; zero fails at once.
	Wait time.Duration
	// Holder names this process in the lease (defaultHolder() when empty).
	Holder string
	// Domain is the JetStream domain, if any.
	Domain string
	// Replicas of the bucket when it is created (1 when zero).
	Replicas int
}

// Info is the lease's value: who holds it and until when, as the holder sees it.
type Info struct {
	Holder  string    `json:"holder"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
}

// HeldError is returned when the lease stayed held for the whole wait.
type HeldError struct {
	Project string
	Bucket  string
	Info    Info
	TTL     time.Duration
	Waited  time.Duration
}

// Error names the holder, since when, and what to do.
func (e *HeldError) Error() string {
	return fmt.Sprintf("apply lock %s/%s is held by %s since %s (waited %s): wait for that apply to finish or raise --lock-timeout; "+
		"a crashed holder's lease expires %s after its last refresh",
		e.Bucket, e.Project, e.Info.Holder, e.Info.Since.UTC().Format(time.RFC3339), e.Waited.Round(time.Millisecond), e.TTL)
}

// Lease is a held lock. It refreshes itself until Release.
type Lease struct {
	kv     jetstream.KeyValue
	bucket string
	key    string
	info   Info
	ttl    time.Duration
	// refreshMu serialises refreshes (the background loop and Fence): two
	// compare-and-sets on one revision would make the second look like a takeover.
	refreshMu sync.Mutex
	mu        sync.Mutex
	rev       uint64
	// sent is when the write that produced rev was sent (with its monotonic
	// reading): no waiter takes the lease over before sent+ttl.
	sent time.Time
	// lost is closed, and lostErr set, when the lease is lost for good.
	lost    chan struct{}
	lostErr error
	stop    chan struct{}
	done    chan struct{}
}

// LostError says that this process no longer holds the lease: another apply took it
// over, or the lease could not be refreshed before it might have been.
type LostError struct {
	Bucket, Project string
	// Holder is who holds the lease now, when known.
	Holder string
	// TakenOver is set when another process took the lease over, even if it has
	// released it since (Holder is then empty).
	TakenOver bool
	// Since is how long ago this process last refreshed the lease.
	Since time.Duration
	TTL   time.Duration
	Err   error
}

// Error says what happened and what to do.
func (e *LostError) Error() string {
	held := ""
	switch {
	case e.Holder != "":
		held = " (held by " + e.Holder + ")"
	case e.TakenOver:
		held = " (another apply took it over since, and has released it)"
	}
	return fmt.Sprintf("lost the apply lock %s/%s%s: this apply last refreshed it %s ago, more than its ttl %s allows "+
		"(the process stalled or lost the server), so nothing more was sent (%v); run plan to see what is left",
		e.Bucket, e.Project, held, e.Since.Round(time.Millisecond), e.TTL, e.Err)
}

func (e *LostError) Unwrap() error { return e.Err }

// validKey is nats.go's rule for KV keys: the project is the key.
var validKey = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

// defaultHolder names this process: user@host pid N.
func defaultHolder() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	name := "unknown-user"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return fmt.Sprintf("%s@%s pid %d", name, host, os.Getpid())
}

// Acquire takes the apply lock of project, waiting up to o.Wait while another
// process holds it. It fails with a *HeldError naming the holder when the wait ends.
func Acquire(ctx context.Context, nc *nats.Conn, project string, o Options) (*Lease, error) {
	o = withDefaults(o)
	if !validKey.MatchString(project) {
		return nil, fmt.Errorf("apply lock: project %q is not a valid KV key: use letters, digits and -/_=. in the project name", project)
	}
	if o.TTL < minTTL {
		return nil, fmt.Errorf("apply lock: ttl %s is below the minimum %s: raise the lock ttl", o.TTL, minTTL)
	}
	kv, err := bucket(ctx, nc, o)
	if err != nil {
		return nil, err
	}
	w := &waiter{kv: kv, key: project, o: o}
	return w.acquire(ctx)
}

func withDefaults(o Options) Options {
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	if o.TTL == 0 {
		o.TTL = defaultTTL
	}
	if o.Holder == "" {
		o.Holder = defaultHolder()
	}
	return o
}

// bucket opens the lock bucket, creating it on first use.
func bucket(ctx context.Context, nc *nats.Conn, o Options) (jetstream.KeyValue, error) {
	var js jetstream.JetStream
	var err error
	if o.Domain != "" {
		js, err = jetstream.NewWithDomain(nc, o.Domain)
	} else {
		js, err = jetstream.New(nc)
	}
	if err != nil {
		return nil, fmt.Errorf("apply lock: %w", err)
	}
	kv, err := js.KeyValue(ctx, o.Bucket)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("apply lock: open bucket %s: %w", o.Bucket, err)
	}
	kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      o.Bucket,
		Description: "natsplan apply locks: one lease per project",
		History:     1,
		Replicas:    o.Replicas,
		Metadata:    map[string]string{metaRole: roleValue},
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		// Another process created it first.
		kv, err = js.KeyValue(ctx, o.Bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("apply lock: create bucket %s: %w", o.Bucket, err)
	}
	return kv, nil
}

// fenceMargin is how long before its TTL runs out a holder stops trusting its lease
// without a fresh refresh: TTL/3, the refresh interval. A write checked at a lease age
// below TTL-fenceMargin reaches the server before any waiter can take over, as long
// as it takes less than fenceMargin to get there.
func fenceMargin(ttl time.Duration) time.Duration { return ttl / 3 }

// Fence returns nil when this process may send a write now: the time since its last
// successful refresh was sent (by the monotonic clock, and by the wall clock, which
// also counts a suspended machine) is below TTL-fenceMargin.
// Otherwise it refreshes the lease first (a compare-and-set on its revision) and
// returns a *LostError when the lease was taken over or the refresh failed; the lease
// is then lost for good and nothing more may be written.
func (l *Lease) Fence(ctx context.Context) error {
	if ok, err := l.valid(); ok || err != nil {
		return err
	}
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()
	if ok, err := l.valid(); ok || err != nil {
		return err // refreshed, or lost, while this call waited
	}
	return l.refreshLocked(ctx, l.ttl/3)
}

// valid reports whether the lease is fresh enough to write under, or the error it was
// lost with.
func (l *Lease) valid() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr != nil {
		return false, l.lostErr
	}
	return age(l.sent) < l.ttl-fenceMargin(l.ttl), nil
}

// age is how long ago t was. It is the larger of the monotonic and the wall-clock
// difference: the monotonic clock is immune to clock steps but does not advance while
// the machine is suspended, the wall clock does. A wall clock stepped backwards only
// leaves the monotonic age; one stepped forwards costs an early refresh.
func age(t time.Time) time.Duration {
	return max(time.Since(t), time.Now().Round(0).Sub(t.Round(0)))
}

// Info returns who holds the lease, as written when it was taken.
func (l *Lease) Info() Info { return l.info }

// TTL is how long the lease holds without a refresh.
func (l *Lease) TTL() time.Duration { return l.ttl }

// lostError is why the lease was lost, or nil. Callers learn it from Fence.
func (l *Lease) lostError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr
}

// Release stops refreshing and deletes the lease if it is still this holder's. The
// delete is guarded by the holder's last revision, so a lease someone else took over
// is never deleted; one this process lost only because a refresh failed is.
func (l *Lease) Release(ctx context.Context) error {
	l.stopRefresh()
	l.mu.Lock()
	rev, lost := l.rev, l.lostErr
	l.mu.Unlock()
	err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev))
	if err != nil && (lost == nil || !isConflict(err)) {
		return fmt.Errorf("apply lock: release %s: %w", l.key, err)
	}
	return nil
}

// stopRefresh ends the refresh loop and waits for it; a second call does nothing.
func (l *Lease) stopRefresh() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// hold starts refreshing a lease taken at revision rev by a write sent at sent.
func hold(kv jetstream.KeyValue, o Options, key string, info Info, rev uint64, sent time.Time) *Lease {
	l := &Lease{kv: kv, bucket: o.Bucket, key: key, info: info, ttl: o.TTL, rev: rev, sent: sent,
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.refresh()
	return l
}

// refresh rewrites the lease every TTL/3 with compare-and-set on its last revision.
// A failed refresh is retried at the next tick; a revision conflict, or no success
// for a whole TTL, means the lease is gone.
func (l *Lease) refresh() {
	defer close(l.done)
	tick := time.NewTicker(l.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.refreshMu.Lock()
		err := l.refreshLocked(context.Background(), 0)
		l.refreshMu.Unlock()
		var lost *LostError
		if errors.As(err, &lost) {
			return
		}
	}
}

// refreshLocked rewrites the lease by compare-and-set on its revision; refreshMu is
// held. It returns a *LostError, and marks the lease lost, when the key moved on (a
// takeover) or when the lease may have expired: the refresh failed and the last
// successful one was sent more than TTL-grace ago. Other failures are returned as
// they are, for the next tick to retry.
func (l *Lease) refreshLocked(ctx context.Context, grace time.Duration) error {
	l.mu.Lock()
	rev, last, lost := l.rev, l.sent, l.lostErr
	l.mu.Unlock()
	if lost != nil {
		return lost
	}
	info := l.info
	info.Expires = time.Now().Add(l.ttl)
	ctx, cancel := context.WithTimeout(ctx, l.ttl/3)
	defer cancel()
	sent := time.Now()
	newRev, err := l.kv.Update(ctx, l.key, encode(info), rev)
	if err == nil {
		l.mu.Lock()
		l.rev, l.sent = newRev, sent
		l.mu.Unlock()
		return nil
	}
	if !isConflict(err) && age(last) < l.ttl-grace {
		return fmt.Errorf("apply lock: refresh %s: %w", l.key, err)
	}
	lostErr := &LostError{Bucket: l.bucket, Project: l.key, Since: age(last), TTL: l.ttl, Err: err}
	if isConflict(err) {
		lostErr.TakenOver, lostErr.Holder = true, l.holderNow()
	}
	l.mu.Lock()
	l.lostErr = lostErr
	l.mu.Unlock()
	close(l.lost)
	return lostErr
}

// holderNow reads who holds the lease now, for the error that says it was lost; ""
// when nobody does (or it can not tell).
func (l *Lease) holderNow() string {
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
	defer cancel()
	e, err := l.kv.Get(ctx, l.key)
	if err != nil {
		return ""
	}
	var i Info
	if json.Unmarshal(e.Value(), &i) != nil || i.Holder == "" {
		return "an unknown holder"
	}
	return i.Holder
}

func encode(i Info) []byte {
	b, _ := json.Marshal(i) // Info always marshals
	return b
}

// isConflict reports whether a create or compare-and-set failed because the key
// exists or moved on: another process wrote it.
func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}
