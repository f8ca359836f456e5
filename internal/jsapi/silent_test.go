package jsapi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestRequestToASilentServer: a server that answers nothing (a stalled process, a
// cluster without a meta leader) makes a request fail with what that means and what
// to do, not a bare "context deadline exceeded"; the error still wraps the deadline.
func TestRequestToASilentServer(t *testing.T) {
	s := testsrv.Start(t)
	proxy := testsrv.StartProxy(t, s.ClientURL(), 0)
	nc, err := nats.Connect(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	proxy.Stall()
	defer proxy.Resume()
	c := New(nc, "", 100*time.Millisecond)
	_, err = c.AccountInfo(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
	for _, want := range []string{"account info: no answer within 100ms", "meta leader", "raise --timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
