package apply

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// TestRunStopsOnASilentServer: the server stops answering while the connection stays
// up (a SIGSTOPped process, a network that drops packets), here a proxy that holds
// every byte. The first request that times out makes apply ping the server before
// sending anything more; the ping gets no answer within the reconnect window, so the
// run stops, saying why, with at most the changes that were in flight unknown and the
// rest not started, rather than sending every change left into the silence.
func TestRunStopsOnASilentServer(t *testing.T) {
	s := testsrv.Start(t)
	direct := jsapi.New(testsrv.Connect(t, s), "", 5*time.Second)
	proxy := testsrv.StartProxy(t, s.ClientURL(), 0)
	nc, err := nats.Connect(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := jsapi.New(nc, "", 200*time.Millisecond)

	const n, par = 60, 2
	p := &plan.Plan{}
	for i := range n {
		p.Changes = append(p.Changes, stream(plan.ActCreate, fmt.Sprintf("S%02d", i), 1, fmt.Sprintf(`{"subjects":["s%d.>"]}`, i)))
	}
	// Stall once the server has created a few streams.
	go func() {
		for {
			info, err := direct.AccountInfo(t.Context())
			if err != nil || info.Streams >= 5 {
				proxy.Stall()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := Run(t.Context(), c, p, Options{Parallelism: par, ReconnectWindow: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var unreachable *UnreachableError
	if !errors.As(res.Stopped, &unreachable) || !unreachable.Silent {
		t.Fatalf("stopped by %v, want a silent server", res.Stopped)
	}
	if !strings.Contains(res.Stopped.Error(), "stopped answering") {
		t.Errorf("the reason does not say the server stopped answering: %v", res.Stopped)
	}
	count := map[Status]int{}
	for _, st := range statuses(res) {
		count[st]++
	}
	if count[StatusUnknown] == 0 || count[StatusUnknown] > par {
		t.Errorf("%d changes with an unknown outcome, want 1..%d (those in flight when it went silent): %v", count[StatusUnknown], par, count)
	}
	// Everything else was done before the stall or never sent: nothing was sent into
	// the silence beyond what was in flight.
	if count[StatusNotStarted] == 0 || count[StatusDone]+count[StatusUnknown]+count[StatusNotStarted] != n {
		t.Errorf("want every change done, in flight (unknown) or not started, and some not started: %v", count)
	}
	proxy.Resume()
}
