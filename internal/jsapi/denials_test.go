package jsapi

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestDenialsFailAtOnce: a request the user may not publish gets no reply from the
// server; with Denials it fails with a *PermissionError as soon as the server reports
// the violation, long before its deadline, and the violation is not passed on as an
// unexplained asynchronous error. Other requests are not affected.
func TestDenialsFailAtOnce(t *testing.T) {
	s := testsrv.StartPermissioned(t)
	cases := []struct {
		name, subject string
		wantDenied    bool
		wantPerm      string
	}{
		{"stream create", "$JS.API.STREAM.CREATE.ORDERS", true, "$JS.API.STREAM.CREATE.>"},
		{"consumer create", "$JS.API.CONSUMER.CREATE.ORDERS.c", true, "$JS.API.CONSUMER.CREATE.>"},
		{"account name", "$SYS.REQ.USER.INFO", true, "$SYS.REQ.USER.INFO"},
		{"allowed read", "$JS.API.INFO", false, ""},
	}
	var mu sync.Mutex
	var others []error
	d := NewDenials(func(err error) {
		mu.Lock()
		others = append(others, err)
		mu.Unlock()
	})
	nc, err := nats.Connect(s.URL(testsrv.UserReader), nats.ErrorHandler(d.Handle))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := New(nc, "", time.Hour)
	c.Denials = d
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// An hour: a request that waited for its deadline would never return.
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			msg, err := c.RawRequest(ctx, tc.subject, nil)
			var pe *PermissionError
			if got := errors.As(err, &pe); got != tc.wantDenied {
				t.Fatalf("denied = %v (err %v), want %v", got, err, tc.wantDenied)
			}
			if !tc.wantDenied {
				if msg == nil {
					t.Fatal("no reply")
				}
				return
			}
			if pe.Subject != tc.subject || !strings.Contains(err.Error(), "permission denied for "+tc.subject) ||
				!strings.Contains(err.Error(), "needs publish permission on "+tc.wantPerm) {
				t.Errorf("err = %v", err)
			}
		})
	}
	// A violation nobody waits for is passed on.
	if err := nc.Publish("$JS.API.STREAM.DELETE.X", nil); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(others)
		var got []string
		for _, e := range others {
			got = append(got, e.Error())
		}
		mu.Unlock()
		if n > 0 {
			if n != 1 || !strings.Contains(got[0], "STREAM.DELETE.X") {
				t.Errorf("passed on %v, want only the unmatched STREAM.DELETE.X violation", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the unmatched violation was not passed on")
		}
	}
}
