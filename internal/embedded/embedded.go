// Package embedded runs an in-process nats-server with JetStream. The --embedded flag
// uses it so every command works on a machine with no server, and tests use it so
// they run against the real server, never a mock.
package embedded

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Options configure an embedded server.
type Options struct {
	// StoreDir is where JetStream keeps its data; it persists across runs.
	StoreDir string
	// Name is the server name (default "natsplan-embedded").
	Name string
	// Port is the client port; 0 picks a free loopback port.
	Port int
	// Cluster, when set, joins a cluster of that name on ClusterPort with Routes.
	Cluster     string
	ClusterPort int
	Routes      []string
	// Limits tune server-wide JetStream limits (tests use them to reach edge cases).
	MaxRequestBatch     int
	MaxAckPending       int
	DefaultMaxConsumers int
}

// Server is a running embedded server.
type Server struct {
	*server.Server
}

// Start starts a server and waits until it accepts clients and JetStream is ready.
func Start(o Options) (*Server, error) {
	if o.StoreDir == "" {
		return nil, fmt.Errorf("embedded server: a store directory is required")
	}
	dir, err := filepath.Abs(o.StoreDir)
	if err != nil {
		return nil, fmt.Errorf("embedded server: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedded server: create store %s: %w", dir, err)
	}
	name := o.Name
	if name == "" {
		name = "natsplan-embedded"
	}
	port := o.Port
	if port == 0 {
		port = -1
	}
	opts := &server.Options{
		ServerName: name,
		Host:       "127.0.0.1",
		Port:       port,
		NoLog:      true,
		NoSigs:     true,
		JetStream:  true,
		StoreDir:   dir,
		// Keep the embedded server small: tests start many of them at once.
		JetStreamMaxMemory: 1 << 30,
		JetStreamMaxStore:  8 << 30,
	}
	opts.JetStreamLimits.MaxRequestBatch = o.MaxRequestBatch
	opts.JetStreamLimits.MaxAckPending = o.MaxAckPending
	opts.JetStreamLimits.DefaultMaxConsumers = o.DefaultMaxConsumers
	if o.Cluster != "" {
		opts.Cluster = server.ClusterOpts{Name: o.Cluster, Host: "127.0.0.1", Port: o.ClusterPort}
		for _, r := range o.Routes {
			opts.Routes = append(opts.Routes, server.RoutesFromStr(r)...)
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded server: not ready after 10s (store %s)", dir)
	}
	return &Server{s}, nil
}

// Stop shuts the server down and waits for it to finish writing.
func (s *Server) Stop() {
	s.Shutdown()
	s.WaitForShutdown()
}

// FreePorts returns n free loopback TCP ports.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
