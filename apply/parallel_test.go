package apply

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// inflight watches the wire from a second connection: a JetStream API request is in
// flight from when the server routes it until its reply goes out. Both arrive on one
// channel in the order the server delivered them, so counting needs no clock.
type inflight struct {
	msgs chan *nats.Msg
	subs []*nats.Subscription
}

func watch(t *testing.T, nc *nats.Conn) *inflight {
	t.Helper()
	w := &inflight{msgs: make(chan *nats.Msg, 1<<16)}
	for _, subj := range []string{"$JS.API.>", "_INBOX.>"} {
		sub, err := nc.ChanSubscribe(subj, w.msgs)
		if err != nil {
			t.Fatal(err)
		}
		w.subs = append(w.subs, sub)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// max drains what was seen and returns the most requests in flight at once, and how
// many requests were seen. pub is the connection the requests were sent on: the
// server may answer a request before it has passed the request on to nc (the API
// handler runs first), so a flush of nc alone is no barrier; one of pub is, since the
// server handles pub's messages in order, fan-out included.
func (w *inflight) max(t *testing.T, pub, nc *nats.Conn) (most, requests int) {
	t.Helper()
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	answered := map[string]bool{} // replies seen before their request (delivery races)
	for {
		select {
		case m := <-w.msgs:
			switch {
			case strings.HasPrefix(m.Subject, "$JS.API."):
				requests++
				if answered[m.Reply] {
					delete(answered, m.Reply)
					continue
				}
				open[m.Reply] = true
				most = max(most, len(open))
			case open[m.Subject]:
				delete(open, m.Subject)
			default:
				answered[m.Subject] = true
			}
		default:
			return most, requests
		}
	}
}

// TestRunParallelism checks that no more than Parallelism requests are in flight, and
// that with room for several, several do run at once.
func TestRunParallelism(t *testing.T) {
	s := testsrv.Start(t)
	c := jsapi.New(testsrv.Connect(t, s), "", 5*time.Second)
	mon := testsrv.Connect(t, s)
	const n = 40
	for _, par := range []int{1, 4, 8} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			var changes []*plan.Change
			for i := range n {
				name := fmt.Sprintf("P%d_%d", par, i)
				changes = append(changes,
					stream(plan.ActCreate, name, 1, fmt.Sprintf(`{"subjects":["%s.>"],"storage":"memory"}`, strings.ToLower(name))),
					consumer(plan.ActCreate, name, "c", 2, `{"ack_policy":"explicit"}`, "stream."+name))
			}
			w := watch(t, mon)
			res := mustRun(t, c, &plan.Plan{Changes: changes}, Options{Parallelism: par})
			if !res.OK() {
				t.Fatalf("counts %+v", res.Counts())
			}
			most, requests := w.max(t, c.NC, mon)
			for _, sub := range w.subs {
				sub.Unsubscribe()
			}
			if requests != 2*n {
				t.Fatalf("saw %d requests, want %d", requests, 2*n)
			}
			if most > par {
				t.Errorf("%d requests in flight at once, parallelism %d", most, par)
			}
			if par > 1 && most < 2 {
				t.Errorf("never more than one request in flight with parallelism %d", par)
			}
			t.Logf("parallelism %d: at most %d in flight", par, most)
		})
	}
}
