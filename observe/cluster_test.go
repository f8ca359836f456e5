package observe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
)

// TestReadCluster reads a 3-node cluster, then stops the only peer of an R1 stream:
// the read still succeeds, keeps the stream's config, and reports it offline.
func TestReadCluster(t *testing.T) {
	cl := testsrv.StartCluster(t)
	nc := connect(t, cl.URL())
	c := jsapi.New(nc, "", 10*time.Second)
	ctx := context.Background()
	addStream(t, c, `{"name":"R3","subjects":["r3.>"],"num_replicas":3}`)
	addStream(t, c, `{"name":"R1","subjects":["r1.>"],"num_replicas":1}`)
	addConsumer(t, c, "R1", "w", "")

	m, err := Read(ctx, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Target.Cluster != "c" || m.Target.Peers != 3 {
		t.Errorf("target cluster %q with %d peers, want c with 3", m.Target.Cluster, m.Target.Peers)
	}
	for _, name := range []string{"R1", "R3"} {
		s := m.Streams[name]
		if s == nil || s.State.Cluster != "c" || s.State.Leader == "" {
			t.Fatalf("stream %s: %+v", name, s)
		}
	}
	if m.Consumers[model.ConsumerKey{Stream: "R1", Name: "w"}] == nil {
		t.Fatalf("consumer R1/w not read: %v", m.ConsumerKeys())
	}

	// Stop the server that holds R1, and read through the other two.
	leader := m.Streams["R1"].State.Leader
	var rest []string
	for _, s := range cl.Servers {
		if s.Name() == leader {
			s.Stop()
		} else {
			rest = append(rest, s.ClientURL())
		}
	}
	c = jsapi.New(connect(t, strings.Join(rest, ",")), "", 10*time.Second)
	var last error
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		m, last = Read(ctx, c, Options{})
		// Until R3 has elected a new leader (when the stopped server led it) its
		// info times out and it is reported offline too; wait for that to settle.
		if last == nil && hasOffline(m, "stream.R1") && m.Streams["R3"] != nil && !hasOffline(m, "stream.R3") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if last != nil {
		t.Fatalf("read with a peer down: %v", last)
	}
	if !hasOffline(m, "stream.R1") {
		t.Fatalf("R1 not reported offline: %v", m.Offline)
	}
	if s := m.Streams["R1"]; s == nil || len(s.Config.Subjects) != 1 || s.Config.Subjects[0] != "r1.>" {
		t.Errorf("offline R1 should keep the config the meta layer holds: %+v", s)
	}
	// The consumer of the offline stream is reported offline too, and still named.
	if cn := m.Consumers[model.ConsumerKey{Stream: "R1", Name: "w"}]; cn == nil || cn.Config.Durable != "w" {
		t.Errorf("consumer R1/w of the offline stream: %v (keys %v)", cn, m.ConsumerKeys())
	}
	if len(m.Consumers) != 1 {
		t.Errorf("consumers %v, want just R1/w", m.ConsumerKeys())
	}
	if !hasOffline(m, "consumer.R1.w") {
		t.Errorf("R1/w not reported offline: %v", m.Offline)
	}
	if s := m.Streams["R3"]; s == nil {
		t.Errorf("R3 lost while one of its three peers is down")
	}
	if hasOffline(m, "stream.R3") {
		t.Errorf("R3 reported offline: %v", m.Offline)
	}
}

func hasOffline(m *model.Model, addr string) bool {
	for _, o := range m.Offline {
		if o.Address == addr && o.Reason != "" {
			return true
		}
	}
	return false
}
