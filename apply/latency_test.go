package apply

import (
	"net"
	"testing"
	"time"
)

// delayProxy forwards TCP connections to target, holding every chunk for delay in each
// direction, so a loopback server behaves like one a network round trip (2×delay) away.
// Chunks are pipelined, not serialised: the delay adds latency, not a bandwidth limit.
func delayProxy(tb testing.TB, target string, delay time.Duration) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			go delayCopy(out, in, delay)
			go delayCopy(in, out, delay)
		}
	}()
	return ln.Addr().String()
}

func delayCopy(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{buf[:n], time.Now().Add(delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range q { // let the reader finish
	}
}
