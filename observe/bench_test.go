package observe

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
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
	proxied := jsapi.New(connect(b, latencyProxy(b, s.ClientURL(), 500*time.Microsecond)), "", 30*time.Second)
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

// latencyProxy forwards TCP connections to the server at url, delaying every chunk by
// oneWay in each direction while keeping the stream pipelined, and returns its URL.
func latencyProxy(tb testing.TB, url string, oneWay time.Duration) string {
	tb.Helper()
	target := strings.TrimPrefix(url, "nats://")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	tb.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); delayedCopy(out, in, oneWay) }()
			go func() { defer wg.Done(); delayedCopy(in, out, oneWay) }()
		}
	}()
	return "nats://" + l.Addr().String()
}

// delayedCopy copies src to dst, each chunk leaving d after it arrived.
func delayedCopy(dst io.WriteCloser, src io.ReadCloser, d time.Duration) {
	type chunk struct {
		data []byte
		at   time.Time
	}
	ch := make(chan chunk, 4096)
	go func() {
		defer close(ch)
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(d)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range ch {
	}
}
