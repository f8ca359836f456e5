package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// Short TTLs keep the tests fast; minTTL is the floor.
const testTTL = 600 * time.Millisecond

// Several applies, each on its own connection as separate processes would be, contend
// for one lease: every one gets it in turn and no two hold it at once.
func TestConcurrentAcquirersNeverInterleave(t *testing.T) {
	s := testsrv.Start(t)
	ctx := context.Background()
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}

	// The first holder is in before the others start, so they must wait.
	first, err := Acquire(ctx, testsrv.Connect(t, s), "shop", Options{TTL: testTTL, Holder: "apply-0"})
	if err != nil {
		t.Fatal(err)
	}
	record("enter apply-0")

	const n = 4
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 1; i < n; i++ {
		nc := testsrv.Connect(t, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("apply-%d", i)
			l, err := Acquire(ctx, nc, "shop", Options{TTL: testTTL, Wait: 30 * time.Second, Holder: holder})
			if err != nil {
				errs <- err
				return
			}
			record("enter " + holder)
			time.Sleep(50 * time.Millisecond) // an apply's work
			record("exit " + holder)
			errs <- l.Release(ctx)
		}()
	}
	time.Sleep(200 * time.Millisecond) // let the others queue up behind apply-0
	record("exit apply-0")
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	if len(events) != 2*n {
		t.Fatalf("events = %v, want %d", events, 2*n)
	}
	seen := map[string]bool{}
	for i := 0; i < len(events); i += 2 {
		enter, exit := events[i], events[i+1]
		holder := strings.TrimPrefix(enter, "enter ")
		if !strings.HasPrefix(enter, "enter ") || exit != "exit "+holder {
			t.Fatalf("holders interleaved: %v", events)
		}
		seen[holder] = true
	}
	if len(seen) != n {
		t.Errorf("not every apply got the lease: %v", events)
	}
}

// A holder that stops refreshing without releasing (a killed process) loses the
// lease after its TTL; the next acquirer takes it over, and the dead holder's late
// release can not delete the new holder's lease.
func TestCrashedHoldersLeaseExpires(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	ctx := context.Background()

	crashed, err := Acquire(ctx, nc, "shop", Options{TTL: testTTL, Holder: "crashed"})
	if err != nil {
		t.Fatal(err)
	}
	crashed.stopRefresh() // killed: no refresh, no release

	next, err := Acquire(ctx, testsrv.Connect(t, s), "shop", Options{TTL: testTTL, Wait: 30 * time.Second, Holder: "next"})
	if err != nil {
		t.Fatalf("the crashed holder's lease did not expire: %v", err)
	}
	defer func() { _ = next.Release(ctx) }()
	if got := leaseHolder(t, nc, DefaultBucket, "shop"); got != "next" {
		t.Errorf("lease held by %q, want next", got)
	}
	if err := crashed.Release(ctx); err == nil {
		t.Error("the crashed holder released a lease it no longer holds")
	}
	if got := leaseHolder(t, nc, DefaultBucket, "shop"); got != "next" {
		t.Errorf("after the stale release the lease is held by %q, want next", got)
	}
}

// A live holder refreshes its lease, so a waiter that waits longer than several TTLs
// still finds it held, and the error names the holder and what to do.
func TestHeldLeaseIsRefreshedAndNamed(t *testing.T) {
	s := testsrv.Start(t)
	ctx := context.Background()
	holder, err := Acquire(ctx, testsrv.Connect(t, s), "shop", Options{Bucket: "locks", TTL: testTTL, Holder: "ci@runner-7 pid 42"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Release(ctx) }()

	for _, wait := range []time.Duration{0, 4 * testTTL} {
		t.Run(fmt.Sprintf("wait %s", wait), func(t *testing.T) {
			_, err := Acquire(ctx, testsrv.Connect(t, s), "shop", Options{Bucket: "locks", TTL: testTTL, Wait: wait, Holder: "other"})
			var held *HeldError
			if !errors.As(err, &held) {
				t.Fatalf("want a *HeldError, got %v", err)
			}
			if held.Info.Holder != "ci@runner-7 pid 42" || !held.Info.Since.Equal(holder.Info().Since) {
				t.Errorf("held by %+v, want the first holder", held.Info)
			}
			for _, want := range []string{"locks/shop", "ci@runner-7 pid 42", "since " + holder.Info().Since.Format(time.RFC3339), "--lock-timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
	select {
	case <-holder.lost:
		t.Fatalf("the holder lost its lease while refreshing: %v", holder.lostError())
	default:
	}
}

// Another writer taking the key over is noticed at the next refresh.
func TestLeaseLostWhenTakenOver(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	ctx := context.Background()
	l, err := Acquire(ctx, nc, "shop", Options{TTL: testTTL, Holder: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "shop", encode(Info{Holder: "thief"})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the lease was taken over but Lost was not closed")
	}
	if l.lostError() == nil || !strings.Contains(l.lostError().Error(), "lost") {
		t.Errorf("Err = %v", l.lostError())
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := leaseHolder(t, nc, DefaultBucket, "shop"); got != "thief" {
		t.Errorf("releasing a lost lease deleted the new holder's: holder %q", got)
	}
	md := bucketMetadata(t, js, DefaultBucket)
	if md[metaRole] != roleValue {
		t.Errorf("lock bucket metadata = %v, want %s=%s", md, metaRole, roleValue)
	}
}

func TestAcquireRefusesBadSettings(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	cases := []struct {
		name, project string
		o             Options
		want          string
	}{
		{"project not a key", "my shop", Options{}, "not a valid KV key"},
		{"ttl too short", "shop", Options{TTL: 10 * time.Millisecond}, "below the minimum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Acquire(context.Background(), nc, tc.project, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func leaseHolder(t *testing.T, nc *nats.Conn, bucket, key string) string {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(e.Value(), &info); err != nil {
		t.Fatal(err)
	}
	return info.Holder
}

func bucketMetadata(t *testing.T, js jetstream.JetStream, bucket string) map[string]string {
	t.Helper()
	st, err := js.Stream(context.Background(), "KV_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	return st.CachedInfo().Config.Metadata
}
