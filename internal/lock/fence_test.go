package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestFence: a holder may write while its lease is fresh by its own clock; once the
// lease is older than TTL-fenceMargin (the process stalled: its refresher did not
// run), Fence refreshes first, and refuses for good when another apply took the lease
// over meanwhile or the refresh can not reach the server.
func TestFence(t *testing.T) {
	cases := []struct {
		name string
		// stall stops the refresher and returns when the lease is stale; it may let
		// another process take the lease over, or cut the holder from the server.
		stall      func(t *testing.T, l *Lease, s *testsrv.Proxy, url string)
		wantHolder string // "" with wantLost: the refresh failed, nobody took over
		wantLost   bool
	}{
		{
			name:  "fresh",
			stall: func(t *testing.T, l *Lease, _ *testsrv.Proxy, _ string) {},
		},
		{
			name: "stalled, nobody waiting: refreshed, then written",
			stall: func(t *testing.T, l *Lease, _ *testsrv.Proxy, _ string) {
				l.stopRefresh()
				waitStale(t, l)
			},
		},
		{
			name: "stalled past the ttl and taken over",
			stall: func(t *testing.T, l *Lease, _ *testsrv.Proxy, url string) {
				l.stopRefresh()
				next, err := Acquire(context.Background(), connectURL(t, url), "shop", Options{TTL: testTTL, Wait: 30 * time.Second, Holder: "second apply"})
				if err != nil {
					t.Fatalf("the stalled lease was not taken over: %v", err)
				}
				t.Cleanup(func() { _ = next.Release(context.Background()) })
			},
			wantLost: true, wantHolder: "second apply",
		},
		{
			name: "stalled and cut from the server",
			stall: func(t *testing.T, l *Lease, p *testsrv.Proxy, _ string) {
				l.stopRefresh()
				p.Cut()
				waitStale(t, l)
			},
			wantLost: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			proxy := testsrv.StartProxy(t, s.ClientURL(), 0)
			ctx := context.Background()
			l, err := Acquire(ctx, connectURL(t, proxy.URL), "shop", Options{TTL: testTTL, Holder: "first apply"})
			if err != nil {
				t.Fatal(err)
			}
			l.mu.Lock()
			rev := l.rev
			l.mu.Unlock()
			tc.stall(t, l, proxy, s.ClientURL())

			err = l.Fence(ctx)
			if !tc.wantLost {
				if err != nil {
					t.Fatalf("Fence = %v, want nil", err)
				}
				l.mu.Lock()
				fresh := time.Since(l.sent) < testTTL-fenceMargin(testTTL)
				refreshed := l.rev != rev
				l.mu.Unlock()
				if !fresh {
					t.Error("Fence let a write through on a stale lease")
				}
				if strings.HasPrefix(tc.name, "stalled") && !refreshed {
					t.Error("Fence passed a stale lease without refreshing it")
				}
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
				return
			}
			var lost *LostError
			if !errors.As(err, &lost) {
				t.Fatalf("Fence = %v, want a *LostError", err)
			}
			if lost.Holder != tc.wantHolder {
				t.Errorf("lost to %q, want %q", lost.Holder, tc.wantHolder)
			}
			for _, want := range []string{"lost the apply lock natsplan_lock/shop", "nothing more was sent", "run plan"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if tc.wantHolder != "" && !strings.Contains(err.Error(), "(held by "+tc.wantHolder+")") {
				t.Errorf("error %q does not name the new holder", err)
			}
			select {
			case <-l.lost:
			default:
				t.Error("Lost is not closed")
			}
			// Lost is for good: no later Fence lets a write through.
			if err := l.Fence(ctx); !errors.As(err, &lost) {
				t.Errorf("a second Fence = %v, want the *LostError again", err)
			}
			if tc.wantHolder != "" {
				_ = l.Release(ctx)
				if got := leaseHolder(t, connectURL(t, s.ClientURL()), DefaultBucket, "shop"); got != tc.wantHolder {
					t.Errorf("after the lost holder's release the lease is held by %q, want %q", got, tc.wantHolder)
				}
			}
		})
	}
}

// waitStale waits until l is too old to write under without a refresh.
func waitStale(t *testing.T, l *Lease) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ok, _ := l.valid(); !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease never went stale")
		}
	}
}

// connectURL connects to url; nothing is buffered while the connection is down, as in
// natsplan itself, and the connection closes with the test.
func connectURL(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.ReconnectBufSize(-1), nats.ReconnectWait(50*time.Millisecond), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
