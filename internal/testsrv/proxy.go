package testsrv

import (
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards TCP connections to a server, optionally delaying them, and can be cut
// to make the server look gone without stopping it.
type Proxy struct {
	// URL is the proxy's nats:// URL.
	URL string

	mu    sync.Mutex
	conns []net.Conn
	cut   bool
	delay atomic.Int64 // one way, in nanoseconds
	// stall is closed while traffic flows and replaced by an open channel while
	// the proxy holds every byte (Stall): connections stay open, nothing passes.
	stall  chan struct{}
	closed chan struct{}
}

// LatencyProxy forwards TCP connections to the server at url, delaying every chunk by
// oneWay in each direction, so a loopback server behaves like one a network round trip
// (2 x oneWay) away. Chunks stay pipelined: the delay adds latency, not a bandwidth
// limit. It returns the proxy's URL and closes everything with the test.
func LatencyProxy(tb testing.TB, url string, oneWay time.Duration) string {
	tb.Helper()
	return StartProxy(tb, url, oneWay).URL
}

// StartProxy starts a proxy to the server at url with a oneWay delay in each direction
// (0 for none) and closes everything with the test.
func StartProxy(tb testing.TB, url string, oneWay time.Duration) *Proxy {
	tb.Helper()
	target := strings.TrimPrefix(url, "nats://")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{URL: "nats://" + l.Addr().String(), stall: make(chan struct{}), closed: make(chan struct{})}
	close(p.stall)
	p.SetDelay(oneWay)
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		l.Close()
		close(p.closed)
		p.closeAll()
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
			p.mu.Lock()
			cut := p.cut
			p.mu.Unlock()
			if cut {
				in.Close() // the server is "down": refuse, as a closed port would
				continue
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); p.delayedCopy(out, in) }()
			go func() { defer wg.Done(); p.delayedCopy(in, out) }()
		}
	}()
	return p
}

// SetDelay changes the one-way delay of every connection, from the next chunk on.
func (p *Proxy) SetDelay(oneWay time.Duration) { p.delay.Store(int64(oneWay)) }

func (p *Proxy) oneWay() time.Duration { return time.Duration(p.delay.Load()) }

// Stall holds every byte in both directions, connections staying open, until Resume:
// to its clients the server looks like a stopped process (SIGSTOP) or a network that
// drops packets. What was held is delivered on Resume.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stall:
		p.stall = make(chan struct{})
	default: // already stalled
	}
}

// Resume lets the bytes Stall held pass.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stall:
	default:
		close(p.stall)
	}
}

// flowing returns a channel that is closed while traffic may pass.
func (p *Proxy) flowing() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stall
}

// Cut closes every proxied connection and refuses new ones until Restore: to its
// clients the server is gone.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
	p.closeAll()
}

// Restore accepts connections again after Cut.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// delayedCopy copies src to dst, each chunk leaving the delay after it arrived, and
// none while the proxy is stalled.
func (p *Proxy) delayedCopy(dst io.WriteCloser, src io.ReadCloser) {
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
				ch <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(p.oneWay())}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at))
		select {
		case <-p.flowing():
		case <-p.closed:
		}
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range ch {
	}
}
