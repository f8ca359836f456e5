// Package testsrv starts real in-process nats-servers for tests: one server, or a
// 3-node cluster on loopback, cleaned up with the test.
package testsrv

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/embedded"
)

// Start starts a single JetStream server for the test and returns it.
func Start(t testing.TB, opts ...func(*embedded.Options)) *embedded.Server {
	t.Helper()
	o := embedded.Options{StoreDir: t.TempDir(), Name: "t1"}
	for _, f := range opts {
		f(&o)
	}
	s, err := embedded.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Connect connects to s and closes the connection with the test.
func Connect(t testing.TB, s *embedded.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Cluster is a 3-node JetStream cluster on loopback.
type Cluster struct {
	Servers []*embedded.Server
}

// URL returns a comma-separated list of the nodes' client URLs.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = s.ClientURL()
	}
	return strings.Join(urls, ",")
}

// StartCluster starts a 3-node cluster named "c" and waits for a meta leader and for
// every peer to report, so replica changes right after it succeed.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	// The route ports are free when chosen but are bound only when each server starts;
	// a test running beside this one can take one in between, and that server then never
	// gets ready. So a start that fails is tried again on new ports, twice.
	var c *Cluster
	var err error
	for range 3 {
		if c, err = startNodes(t); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		leaders, current := 0, 0
		for _, s := range c.Servers {
			if s.JetStreamIsLeader() {
				leaders++
			}
			if s.JetStreamIsCurrent() {
				current++
			}
		}
		if leaders == 1 && current == 3 && c.peersReported() {
			return c
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("cluster: no meta leader within 20s")
	return nil
}

// startNodes starts the cluster's three nodes on route ports free just before, or stops
// those it started and returns why one did not start.
func startNodes(t testing.TB) (*Cluster, error) {
	ports, err := embedded.FreePorts(3)
	if err != nil {
		return nil, err
	}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	c := &Cluster{}
	for i := range 3 {
		s, err := embedded.Start(embedded.Options{
			StoreDir: t.TempDir(), Name: fmt.Sprintf("n%d", i+1),
			Cluster: "c", ClusterPort: ports[i], Routes: routes,
		})
		if err != nil {
			for _, started := range c.Servers {
				started.Stop()
			}
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	for _, s := range c.Servers {
		t.Cleanup(s.Stop)
	}
	return c, nil
}

// peersReported reports whether the meta leader sees every peer as online with stats,
// which placement needs before it can scale a stream up.
func (c *Cluster) peersReported() bool {
	for _, s := range c.Servers {
		if !s.JetStreamIsLeader() {
			continue
		}
		info := s.JetStreamClusterPeers()
		return len(info) == 3
	}
	return false
}

// StartOptions starts a server from hand-built options (auth, accounts, a JetStream
// domain: what embedded.Options does not cover), quiet, and stops it with the test.
func StartOptions(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready after 10s")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}
