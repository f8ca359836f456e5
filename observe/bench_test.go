package observe

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// BenchmarkRead reads 1,000 streams with 2 consumers each from one embedded server at
// several parallelisms, directly and through a proxy that adds a network round trip
// of 1ms, as a server in the same region would; DefaultParallelism is chosen from
// its results.
func BenchmarkRead(b *testing.B) {
	s := testsrv.Start(b)
	c := jsapi.New(testsrv.Connect(b, s), "", 30*time.Second)
	const nStreams = 1000
	for i := range nStreams {
		name := addStream(b, c, fmt.Sprintf(`{"name":"B%04d","subjects":["b.%04d"],"storage":"memory"}`, i, i))
		addConsumer(b, c, name, "one", "")
		addConsumer(b, c, name, "two", "")
	}
	proxied := jsapi.New(connect(b, testsrv.LatencyProxy(b, s.ClientURL(), 500*time.Microsecond)), "", 30*time.Second)
	for _, rtt := range []struct {
		name string
		c    *jsapi.Client
	}{{"rtt=0", c}, {"rtt=1ms", proxied}} {
		for _, par := range []int{1, 4, 16, 64} {
			b.Run(fmt.Sprintf("%s/parallelism=%d", rtt.name, par), func(b *testing.B) {
				for b.Loop() {
					m, err := Read(context.Background(), rtt.c, Options{Parallelism: par})
					if err != nil {
						b.Fatal(err)
					}
					if len(m.Streams) != nStreams || len(m.Consumers) != 2*nStreams {
						b.Fatalf("read %d streams, %d consumers", len(m.Streams), len(m.Consumers))
					}
				}
			})
		}
	}
}
