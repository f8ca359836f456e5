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
// needs no per-message TTL support from the server. See docs/lock.md.
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
	DefaultBucket = "natsplan_lock"
	DefaultTTL    = 30 * time.Second
	// MinTTL keeps the refresh interval (TTL/3) well above a request's round trip.
	MinTTL = 300 * time.Millisecond
)

// MetaRole marks the lock bucket in its metadata, so that plans can recognise it as
// natsplan's own and not report it as unmanaged.
const (
	MetaRole  = model.MetaRole
	RoleValue = "lock"
)

// Options configure Acquire.
type Options struct {
	// Bucket is the KV bucket holding the leases (DefaultBucket when empty). It is
	// created on first use.
	Bucket string
	// TTL is how long a lease lives without a refresh (DefaultTTL when zero).
	TTL time.Duration
	// Wait is how long to wait for a held lease; zero fails at once.
	Wait time.Duration
	// Holder names this process in the lease (DefaultHolder() when empty).
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
	kv      jetstream.KeyValue
	key     string
	info    Info
	ttl     time.Duration
	mu      sync.Mutex
	rev     uint64
	lost    chan struct{}
	lostErr error
	stop    chan struct{}
	done    chan struct{}
}

// validKey is nats.go's rule for KV keys: the project is the key.
var validKey = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)

// DefaultHolder names this process: user@host pid N.
func DefaultHolder() string {
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
	if o.TTL < MinTTL {
		return nil, fmt.Errorf("apply lock: ttl %s is below the minimum %s: raise the lock ttl", o.TTL, MinTTL)
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
		o.TTL = DefaultTTL
	}
	if o.Holder == "" {
		o.Holder = DefaultHolder()
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
		Metadata:    map[string]string{MetaRole: RoleValue},
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

// Info returns who holds the lease, as written when it was taken.
func (l *Lease) Info() Info { return l.info }

// Lost is closed when the lease was lost while held: a refresh found that another
// process had taken it over (this one stalled for longer than the TTL). The caller
// should stop writing; Err says why.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err is why the lease was lost, or nil.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr
}

// Release stops refreshing and deletes the lease if it is still this holder's.
func (l *Lease) Release(ctx context.Context) error {
	l.stopRefresh()
	l.mu.Lock()
	rev, lost := l.rev, l.lostErr
	l.mu.Unlock()
	if lost != nil {
		return nil // someone else holds it now; theirs is not ours to delete
	}
	if err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev)); err != nil {
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

// hold starts refreshing a lease taken at revision rev.
func hold(kv jetstream.KeyValue, key string, info Info, ttl time.Duration, rev uint64) *Lease {
	l := &Lease{kv: kv, key: key, info: info, ttl: ttl, rev: rev,
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
	lastOK := time.Now()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		rev := l.rev
		l.mu.Unlock()
		info := l.info
		info.Expires = time.Now().Add(l.ttl)
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
		newRev, err := l.kv.Update(ctx, l.key, encode(info), rev)
		cancel()
		switch {
		case err == nil:
			l.mu.Lock()
			l.rev = newRev
			l.mu.Unlock()
			lastOK = time.Now()
		case isConflict(err), time.Since(lastOK) >= l.ttl:
			l.mu.Lock()
			l.lostErr = fmt.Errorf("apply lock %s lost: not refreshed within its ttl %s, so another apply may have taken it: %w", l.key, l.ttl, err)
			l.mu.Unlock()
			close(l.lost)
			return
		}
	}
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
