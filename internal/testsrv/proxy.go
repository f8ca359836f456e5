package testsrv

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// LatencyProxy forwards TCP connections to the server at url, delaying every chunk by
// oneWay in each direction, so a loopback server behaves like one a network round trip
// (2 x oneWay) away. Chunks stay pipelined: the delay adds latency, not a bandwidth
// limit. It returns the proxy's URL and closes everything with the test.
func LatencyProxy(tb testing.TB, url string, oneWay time.Duration) string {
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
