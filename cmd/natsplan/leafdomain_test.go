package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// leafBucket is the lock bucket of the tests below: not the default one, so that the
// bucket found proves the plan's lock block was read.
const leafBucket = "edge-locks"

// startHubAndLeaf starts a hub with JetStream domain "hub" and a leafnode listener,
// and a leaf with JetStream domain "leaf" whose remote is the hub (both in the
// global account), and returns them once a client of the hub reaches the leaf's
// JetStream through $JS.leaf.API. The domains differ, so the servers deny each other
// the plain $JS.API and each maps its own $JS.<domain>.API onto it: only a request
// sent with the leaf's domain prefix crosses the leafnode connection.
func startHubAndLeaf(t *testing.T) (hub, leaf *server.Server) {
	t.Helper()
	hub = testsrv.StartOptions(t, &server.Options{ServerName: "hub", Host: "127.0.0.1", Port: -1,
		JetStream: true, JetStreamDomain: "hub", StoreDir: t.TempDir(),
		LeafNode: server.LeafNodeOpts{Host: "127.0.0.1", Port: -1}})
	vz, err := hub.Varz(&server.VarzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := url.Parse(fmt.Sprintf("nats-leaf://127.0.0.1:%d", vz.LeafNode.Port))
	if err != nil {
		t.Fatal(err)
	}
	leaf = testsrv.StartOptions(t, &server.Options{ServerName: "leaf", Host: "127.0.0.1", Port: -1,
		JetStream: true, JetStreamDomain: "leaf", StoreDir: t.TempDir(),
		LeafNode: server.LeafNodeOpts{Remotes: []*server.RemoteLeafOpts{{URLs: []*url.URL{remote}}}}})

	js, err := jetstream.NewWithDomain(peerConn(t, hub.ClientURL()), "leaf")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var domain string
		var err error
		if hub.NumLeafNodes() == 1 && leaf.NumLeafNodes() == 1 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			var ai *jetstream.AccountInfo
			if ai, err = js.AccountInfo(ctx); err == nil {
				domain = ai.Domain
			}
			cancel()
			if domain == "leaf" {
				return hub, leaf
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leaf's JetStream does not answer through the hub: leafnode connections hub %d, leaf %d; $JS.leaf.API.INFO: domain %q, %v",
				hub.NumLeafNodes(), leaf.NumLeafNodes(), domain, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// localStreams lists the streams of s's own JetStream, read on a connection to s.
func localStreams(t *testing.T, s *server.Server) []string {
	t.Helper()
	js, err := jetstream.New(peerConn(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	l := js.StreamNames(context.Background())
	for n := range l.Name() {
		names = append(names, n)
	}
	if err := l.Err(); err != nil {
		t.Fatalf("listing the streams of %s: %v", s.Name(), err)
	}
	slices.Sort(names)
	return names
}

// leafDomainConfig is a project with two streams whose applies take the lock in
// leafBucket; envBlock, when set, is added as is.
func leafDomainConfig(envBlock string) string {
	return fmt.Sprintf(`natsplan {
  project = "shop"
  lock {
    bucket = %q
    ttl    = "5s"
  }
}
%s
stream "ORDERS" {
  subjects = ["orders.>"]
}

stream "AUDIT" {
  subjects = ["audit.>"]
}
`, leafBucket, envBlock)
}

// TestApplyLockInLeafDomain: natsplan connected to a hub and told to manage the leaf's
// JetStream domain, by the --js-domain flag, by an environment's js_domain or by a
// nats CLI context's jetstream_domain, creates the streams and takes the apply lock in
// the leaf's JetStream, and leaves the hub's untouched. Only a request sent with the
// leaf's prefix, $JS.leaf.API, crosses to the leaf (which maps it onto its own API):
// a lock taken without it lands in the hub's JetStream. On a single server both would
// land in the same JetStream, so the test needs the two.
func TestApplyLockInLeafDomain(t *testing.T) {
	cases := []struct {
		name string
		// run applies the configuration, connected to hubURL, managing domain "leaf".
		run func(t *testing.T, hubURL string) (int, string, string)
	}{
		{"flag", func(t *testing.T, hubURL string) (int, string, string) {
			dir := writeConfig(t, map[string]string{"shop.hcl": leafDomainConfig("")})
			return cli(t, hubURL, "apply", "--auto-approve", "--js-domain", "leaf", dir)
		}},
		{"environment", func(t *testing.T, hubURL string) (int, string, string) {
			env := fmt.Sprintf("\nenvironment \"edge\" {\n  servers   = %q\n  js_domain = \"leaf\"\n}\n", hubURL)
			dir := writeConfig(t, map[string]string{"shop.hcl": leafDomainConfig(env)})
			return envCLI(t, map[string]string{"NATS_URL": nowhere}, "apply", "--auto-approve", dir)
		}},
		{"context", func(t *testing.T, hubURL string) (int, string, string) {
			config := t.TempDir()
			ctxDir := filepath.Join(config, "nats", "context")
			if err := os.MkdirAll(ctxDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ctxDir, "edge.json"), []byte(`{"url":"`+hubURL+`","jetstream_domain":"leaf"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := writeConfig(t, map[string]string{"shop.hcl": leafDomainConfig("")})
			return envCLI(t, map[string]string{"XDG_CONFIG_HOME": config}, "apply", "--auto-approve", "--context", "edge", dir)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hub, leaf := startHubAndLeaf(t)
			code, out, errOut := tc.run(t, hub.ClientURL())
			if code != 0 {
				t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
			}
			if !strings.Contains(errOut, "Taking the apply lock of project shop") {
				t.Errorf("apply does not say it takes the lock\n%s", errOut)
			}
			lockStream := "KV_" + leafBucket
			want := []string{"AUDIT", lockStream, "ORDERS"} // sorted, as localStreams returns them
			leafStreams := localStreams(t, leaf)
			if !slices.Equal(leafStreams, want) {
				t.Errorf("the leaf's JetStream has streams %q, want %q: the streams and the lock bucket in the managed domain", leafStreams, want)
			}
			if got := localStreams(t, hub); len(got) != 0 {
				t.Errorf("the hub's JetStream has streams %q, want none: the lock (or the streams) went to the connection's own domain, not the managed one", got)
			}
			if !slices.Contains(leafStreams, lockStream) {
				return
			}
			// The lease was written in the leaf's bucket, and released.
			js, err := jetstream.New(peerConn(t, leaf.ClientURL()))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if st, err := js.Stream(ctx, lockStream); err != nil || st.CachedInfo().State.LastSeq == 0 {
				t.Errorf("the leaf's lock bucket: %v, or no lease ever written in it", err)
			}
			if kv, err := js.KeyValue(ctx, leafBucket); err != nil {
				t.Errorf("the leaf's lock bucket: %v", err)
			} else if _, err := kv.Get(ctx, "shop"); err != jetstream.ErrKeyNotFound {
				t.Errorf("the lease of project shop in the leaf's bucket: %v, want released (not found)", err)
			}
		})
	}
}
