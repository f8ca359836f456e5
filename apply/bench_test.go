package apply

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// benchStreams is how many streams (each with two consumers) one operation creates.
const benchStreams = 1000

// BenchmarkApply creates benchStreams streams with two consumers each on a fresh
// embedded server per operation: through Run at several parallelisms, and with raw API
// requests (one at a time, and from a pool of goroutines) as the floor to compare with.
// It does so with file storage, with memory storage (which leaves the disk out), and with
// memory storage behind a proxy that adds a 2ms round trip, as a server across a network
// has. docs/apply.md records the numbers DefaultParallelism was chosen from.
//
//	go test ./apply -run '^$' -bench BenchmarkApply -benchtime 1x -count 3
func BenchmarkApply(b *testing.B) {
	setups := []struct {
		name    string
		storage string
		rtt     time.Duration
	}{
		{"file", "file", 0},
		{"memory", "memory", 0},
		{"memory-rtt2ms", "memory", 2 * time.Millisecond},
	}
	for _, su := range setups {
		p := benchPlan(benchStreams, su.storage)
		for _, par := range []int{1, 4, 16, 64} {
			b.Run(fmt.Sprintf("%s/apply/parallelism=%d", su.name, par), func(b *testing.B) {
				benchOnFreshServer(b, len(p.Changes), su.rtt, func(c *jsapi.Client) error {
					res, err := Run(context.Background(), c, p, Options{Parallelism: par})
					if err == nil && !res.OK() {
						err = fmt.Errorf("not all done: %+v", res.Counts())
					}
					return err
				})
			})
		}
		for _, par := range []int{1, 16, 64} {
			name := fmt.Sprintf("%s/raw/parallel=%d", su.name, par)
			if par == 1 {
				name = su.name + "/raw/sequential"
			}
			b.Run(name, func(b *testing.B) {
				benchOnFreshServer(b, len(p.Changes), su.rtt, func(c *jsapi.Client) error { return rawCreate(c, p, par) })
			})
		}
	}
}

// benchPlan is a plan creating n streams in step 1 and two consumers of each in step 2.
func benchPlan(n int, storage string) *plan.Plan {
	p := &plan.Plan{}
	for i := range n {
		name := fmt.Sprintf("B%05d", i)
		p.Changes = append(p.Changes, stream(plan.ActCreate, name, 1, fmt.Sprintf(`{"subjects":["%s.>"],"storage":%q}`, strings.ToLower(name), storage)))
	}
	for i := range n {
		name := fmt.Sprintf("B%05d", i)
		for _, d := range []string{"a", "b"} {
			p.Changes = append(p.Changes, consumer(plan.ActCreate, name, d, 2, `{"ack_policy":"explicit"}`, "stream."+name))
		}
	}
	return p
}

// benchOnFreshServer times op against a new server each iteration (reached through a
// delay proxy when rtt is set), leaving the start and stop of the server out, and
// reports changes per second.
func benchOnFreshServer(b *testing.B, changes int, rtt time.Duration, op func(*jsapi.Client) error) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := embedded.Start(embedded.Options{StoreDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		url := s.ClientURL()
		if rtt > 0 {
			url = testsrv.LatencyProxy(b, url, rtt/2)
		}
		nc, err := nats.Connect(url)
		if err != nil {
			b.Fatal(err)
		}
		c := jsapi.New(nc, "", 30*time.Second)
		b.StartTimer()
		start := time.Now()
		err = op(c)
		total += time.Since(start)
		b.StopTimer()
		nc.Close()
		s.Stop()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(changes*b.N)/total.Seconds(), "changes/s")
}

// rawCreate sends p's creates straight to the API from par goroutines: all streams,
// then all consumers, with no scheduling, progress or result keeping.
func rawCreate(c *jsapi.Client, p *plan.Plan, par int) error {
	ctx := context.Background()
	for _, step := range []int{1, 2} {
		work := make(chan *plan.Change)
		errs := make(chan error, par)
		var wg sync.WaitGroup
		for range par {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ch := range work {
					var err error
					if ch.Kind == model.KindConsumer {
						_, err = c.WriteConsumer(ctx, ch.Stream, ch.Name, ch.After, jsapi.ConsumerCreate)
					} else {
						_, err = c.CreateStream(ctx, ch.Name, ch.After)
					}
					if err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				}
			}()
		}
		for _, ch := range p.Changes {
			if ch.Step == step {
				work <- ch
			}
		}
		close(work)
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
		}
	}
	return nil
}
