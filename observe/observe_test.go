package observe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
)

// TestReadPaging reads more streams, and more consumers of one stream, than fit on
// one list page (256), and checks that every object arrives once with its config
// and state.
func TestReadPaging(t *testing.T) {
	c := testkit.Client(t)
	const nStreams, nConsumers = 300, 300
	for i := range nStreams {
		addStream(t, c, fmt.Sprintf(`{"name":"S%03d","subjects":["s.%03d"],"storage":"memory","max_msgs":%d}`, i, i, i+1))
	}
	for i := range nConsumers {
		addConsumer(t, c, "S000", fmt.Sprintf("C%03d", i), fmt.Sprintf(`,"max_deliver":%d`, i+1))
	}
	addConsumer(t, c, "S299", "last", `,"filter_subject":"s.299"`)
	publish(t, c.NC, "s.001")

	for _, par := range []int{1, 4} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			m, err := Read(context.Background(), c, Options{Parallelism: par})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Streams) != nStreams {
				t.Fatalf("read %d streams, want %d", len(m.Streams), nStreams)
			}
			for i := range nStreams {
				s := m.Streams[fmt.Sprintf("S%03d", i)]
				if s == nil {
					t.Fatalf("stream S%03d missing", i)
				}
				if s.Kind != model.KindStream || s.Config.MaxMsgs != int64(i+1) || s.Config.Storage != server.MemoryStorage {
					t.Errorf("stream %s: kind %s max_msgs %d storage %s", s.Name, s.Kind, s.Config.MaxMsgs, s.Config.Storage)
				}
				if s.State == nil {
					t.Fatalf("stream %s has no state", s.Name)
				}
			}
			if got := m.Streams["S001"].State.Msgs; got != 1 {
				t.Errorf("S001 holds %d messages, want 1", got)
			}
			if got := m.Streams["S000"].State.Consumers; got != nConsumers {
				t.Errorf("S000 state reports %d consumers, want %d", got, nConsumers)
			}
			if len(m.Consumers) != nConsumers+1 {
				t.Fatalf("read %d consumers, want %d", len(m.Consumers), nConsumers+1)
			}
			for i := range nConsumers {
				cn := m.Consumers[model.ConsumerKey{Stream: "S000", Name: fmt.Sprintf("C%03d", i)}]
				if cn == nil {
					t.Fatalf("consumer S000/C%03d missing", i)
				}
				if cn.Config.MaxDeliver != i+1 || cn.Config.Durable != cn.Name || cn.State == nil {
					t.Errorf("consumer %s: max_deliver %d durable %q state %v", cn.Key(), cn.Config.MaxDeliver, cn.Config.Durable, cn.State)
				}
			}
			if cn := m.Consumers[model.ConsumerKey{Stream: "S299", Name: "last"}]; cn == nil || cn.Config.FilterSubject != "s.299" {
				t.Errorf("consumer S299/last: %+v", cn)
			}
			if len(m.Offline) != 0 {
				t.Errorf("offline: %v", m.Offline)
			}
		})
	}
}

func TestReadTarget(t *testing.T) {
	c := testkit.Client(t)
	m, err := Read(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Target{
		URL:      c.NC.ConnectedUrlRedacted(),
		Server:   "t1",
		Account:  server.DEFAULT_GLOBAL_ACCOUNT,
		APILevel: server.JSApiLevel,
		Version:  server.VERSION,
		Limits:   model.AccountLimits{MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1},
		Tiers: map[string]server.JetStreamAccountLimits{"": {MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: -1,
			MaxAckPending: -1, MemoryMaxStreamBytes: -1, StoreMaxStreamBytes: -1}},
		Peers: 1,
	}
	if diff := cmp.Diff(want, m.Target); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
	if len(m.Streams) != 0 || len(m.Consumers) != 0 {
		t.Errorf("empty server read as %d streams, %d consumers", len(m.Streams), len(m.Consumers))
	}
}

// TestReadTargetAccount reads the account name and limits of a configured account.
func TestReadTargetAccount(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "server.conf")
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`
server_name: acc1
listen: "127.0.0.1:-1"
jetstream { store_dir: %q }
accounts {
  SHOP {
    jetstream { max_streams: 10, max_consumers: 20, max_ack_pending: 50, max_bytes_required: true, max_file: 1G, max_mem: 1G }
    users [{ user: u, password: p }]
  }
}
`, t.TempDir())), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	s := testsrv.StartOptions(t, opts)
	nc := connect(t, strings.Replace(s.ClientURL(), "nats://", "nats://u:p@", 1))

	m, err := Read(context.Background(), jsapi.New(nc, "", 5*time.Second), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Target.Account != "SHOP" {
		t.Errorf("account %q, want SHOP", m.Target.Account)
	}
	want := model.AccountLimits{MaxStreams: 10, MaxConsumers: 20, MaxAckPending: 50, MaxBytesRequired: true}
	if diff := cmp.Diff(want, m.Target.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if strings.Contains(m.Target.URL, ":p@") {
		t.Errorf("target URL leaks the password: %s", m.Target.URL)
	}
}

func TestRedactToken(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":             "nats://127.0.0.1:4222",
		"nats://s3cret@127.0.0.1:4222":      "nats://xxxxx@127.0.0.1:4222",
		"nats://alice:xxxxx@127.0.0.1:4222": "nats://alice:xxxxx@127.0.0.1:4222",
		"tls://tok@h:4222":                  "tls://xxxxx@h:4222",
	} {
		if got := redactToken(in); got != want {
			t.Errorf("redactToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLimitsTiers(t *testing.T) {
	ai := &server.JetStreamAccountStats{Tiers: map[string]server.JetStreamTier{
		"R1": {Limits: server.JetStreamAccountLimits{MaxStreams: 10, MaxConsumers: -1, MaxAckPending: 100}},
		"R3": {Limits: server.JetStreamAccountLimits{MaxStreams: 4, MaxConsumers: 8, MaxAckPending: -1, MaxBytesRequired: true}},
	}}
	want := model.AccountLimits{MaxStreams: 4, MaxConsumers: 8, MaxAckPending: 100, MaxBytesRequired: true}
	if diff := cmp.Diff(want, limits(ai)); diff != "" {
		t.Errorf("tiered limits (-want +got):\n%s", diff)
	}
}

// TestReadDomain reads a server with a JetStream domain through $JS.<domain>.API.
func TestReadDomain(t *testing.T) {
	s := testsrv.StartOptions(t, &server.Options{ServerName: "hub1", Host: "127.0.0.1", Port: -1,
		JetStream: true, JetStreamDomain: "hub", StoreDir: t.TempDir()})
	nc := connect(t, s.ClientURL())

	c := jsapi.New(nc, "hub", 5*time.Second)
	if c.Prefix != "$JS.hub.API" {
		t.Fatalf("prefix %q", c.Prefix)
	}
	addStream(t, c, `{"name":"ORDERS","subjects":["orders.>"],"storage":"memory"}`)
	addConsumer(t, c, "ORDERS", "audit", "")
	m, err := Read(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Target.Domain != "hub" {
		t.Errorf("domain %q, want hub", m.Target.Domain)
	}
	if m.Streams["ORDERS"] == nil || m.Consumers[model.ConsumerKey{Stream: "ORDERS", Name: "audit"}] == nil {
		t.Errorf("read through the domain: streams %v consumers %v", m.StreamNames(), m.ConsumerKeys())
	}

	_, err = Read(context.Background(), jsapi.New(nc, "elsewhere", time.Second), Options{})
	if err == nil || !strings.Contains(err.Error(), "observe account") || !strings.Contains(err.Error(), "$JS.elsewhere.API") {
		t.Errorf("read of an unknown domain: %v, want an error naming the prefix", err)
	}
}

func TestReadObjects(t *testing.T) {
	c := testkit.Client(t)
	addStream(t, c, `{"name":"A","subjects":["a.>"],"storage":"memory","metadata":{"team":"x"}}`)
	addStream(t, c, `{"name":"B","subjects":["b.>"],"storage":"memory"}`)
	addConsumer(t, c, "A", "c1", `,"max_ack_pending":7`)
	addConsumer(t, c, "A", "c2", "")
	if err := c.PauseConsumer(context.Background(), "A", "c2", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	all, err := Read(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadObjects(context.Background(), c,
		[]string{"A", "MISSING"},
		[]model.ConsumerKey{{Stream: "A", Name: "c1"}, {Stream: "A", Name: "c2"}, {Stream: "A", Name: "nope"}, {Stream: "MISSING", Name: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.StreamNames(); !cmp.Equal(got, []string{"A"}) {
		t.Errorf("streams %v, want [A]: B was not asked for and MISSING does not exist", got)
	}
	if got := m.ConsumerKeys(); !cmp.Equal(got, []model.ConsumerKey{{Stream: "A", Name: "c1"}, {Stream: "A", Name: "c2"}}) {
		t.Errorf("consumers %v, want A/c1 and A/c2", got)
	}
	if m.Target == nil || m.Target.Server != "t1" {
		t.Errorf("target %+v", m.Target)
	}
	// INFO replies carry response-only metadata that LIST replies lack; the two
	// readers must still agree, or a saved plan's hashes would never match.
	if diff := cmp.Diff(all.Streams["A"].Config, m.Streams["A"].Config); diff != "" {
		t.Errorf("stream A read by Read and ReadObjects differs (-Read +ReadObjects):\n%s", diff)
	}
	for _, k := range m.ConsumerKeys() {
		if diff := cmp.Diff(all.Consumers[k].Config, m.Consumers[k].Config); diff != "" {
			t.Errorf("consumer %s read by Read and ReadObjects differs (-Read +ReadObjects):\n%s", k, diff)
		}
	}
	if _, ok := m.Streams["A"].Config.Metadata["_nats.ver"]; ok {
		t.Errorf("response-only _nats.ver kept: %v", m.Streams["A"].Config.Metadata)
	}
	if m.Streams["A"].Config.Metadata["team"] != "x" {
		t.Errorf("user metadata lost: %v", m.Streams["A"].Config.Metadata)
	}
	if m.Consumers[model.ConsumerKey{Stream: "A", Name: "c2"}].Config.PauseUntil == nil {
		t.Errorf("pause_until of a paused consumer not read")
	}
}

// TestReadCancelled proves a read stops with the context and says what it was doing.
func TestReadCancelled(t *testing.T) {
	c := testkit.Client(t)
	addStream(t, c, `{"name":"A","storage":"memory"}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read(ctx, c, Options{})
	if err == nil || !strings.Contains(err.Error(), "observe") {
		t.Fatalf("Read with a cancelled context: %v", err)
	}
}

func TestRecordMissing(t *testing.T) {
	var offline []model.Offline
	seen := map[string]bool{"A": true, "B": true}
	// B came back in streams and in missing (a clustered list does that when all of
	// a stream's peers are offline); C is offline with a reason; D just did not answer.
	fresh := recordMissing(&offline, seen, []string{"B", "C", "D"}, map[string]string{"C": "unsupported - required API level: 9, current API level: 5"}, streamAddress)
	if fresh != 2 {
		t.Errorf("fresh %d, want 2 (C and D; B was already counted)", fresh)
	}
	want := []model.Offline{
		{Address: "stream.B", Reason: "no response from the servers that hold it"},
		{Address: "stream.C", Reason: "unsupported - required API level: 9, current API level: 5"},
		{Address: "stream.D", Reason: "no response from the servers that hold it"},
	}
	if diff := cmp.Diff(want, offline); diff != "" {
		t.Errorf("offline (-want +got):\n%s", diff)
	}
}

// TestReadState reads what the data-loss judgement needs: the state of the named streams
// (how many messages on how many subjects, and the oldest one's time by the server's
// clock), and all consumers of only the streams asked for.
func TestReadState(t *testing.T) {
	c := testkit.Client(t)
	addStream(t, c, `{"name":"A","subjects":["a.>"],"storage":"memory"}`)
	addStream(t, c, `{"name":"B","subjects":["b.>"],"storage":"memory"}`)
	addConsumer(t, c, "A", "ca", "")
	addConsumer(t, c, "B", "cb", "")
	for _, subj := range []string{"a.1", "a.1", "a.2"} {
		publish(t, c.NC, subj)
	}
	// The server counts a consumer's pending messages a moment after the publish is
	// acknowledged: read until it has (bounded), then check everything once.
	var m *model.Model
	for range 250 {
		var err error
		m, err = ReadState(context.Background(), c, []string{"A", "B", "MISSING"}, func(s *model.Stream) bool { return s.Name == "A" })
		if err != nil {
			t.Fatal(err)
		}
		if ca := m.Consumers[model.ConsumerKey{Stream: "A", Name: "ca"}]; ca == nil || ca.State.NumPending == 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := m.Streams["A"].State
	if st.Msgs != 3 || st.NumSubjects != 2 || st.FirstTime.IsZero() || st.ReadAt.IsZero() || st.ReadAt.Before(st.FirstTime) {
		t.Errorf("state of A %+v: want 3 messages on 2 subjects, the first stored before the read", st)
	}
	if got := m.ConsumerKeys(); !cmp.Equal(got, []model.ConsumerKey{{Stream: "A", Name: "ca"}}) {
		t.Errorf("consumers %v, want only A's", got)
	}
	if m.Consumers[model.ConsumerKey{Stream: "A", Name: "ca"}].State.NumPending != 3 {
		t.Errorf("consumer ca: %+v, want 3 pending", m.Consumers[model.ConsumerKey{Stream: "A", Name: "ca"}].State)
	}
	if m.Streams["B"] == nil || m.Streams["MISSING"] != nil {
		t.Errorf("streams %v, want A and B", m.StreamNames())
	}
}
