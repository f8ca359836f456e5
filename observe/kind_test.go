package observe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/model"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name       string
		cfg        server.StreamConfig
		wantKind   model.Kind
		wantBucket string
	}{
		{"kv", server.StreamConfig{Name: "KV_sessions", Subjects: []string{"$KV.sessions.>"}}, model.KindKV, "sessions"},
		{"kv mirror", server.StreamConfig{Name: "KV_copy", Mirror: &server.StreamSource{Name: "KV_sessions"}}, model.KindKV, "copy"},
		{"object store", server.StreamConfig{Name: "OBJ_assets", Subjects: []string{"$O.assets.C.>", "$O.assets.M.>"}}, model.KindObjectStore, "assets"},
		{"object store, subjects reordered", server.StreamConfig{Name: "OBJ_assets", Subjects: []string{"$O.assets.M.>", "$O.assets.C.>"}}, model.KindObjectStore, "assets"},
		{"plain stream", server.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}, model.KindStream, ""},
		{"KV_ name, other subjects", server.StreamConfig{Name: "KV_x", Subjects: []string{"x.>"}}, model.KindStream, ""},
		{"KV_ name, another bucket's subjects", server.StreamConfig{Name: "KV_x", Subjects: []string{"$KV.y.>"}}, model.KindStream, ""},
		{"KV_ name, extra subject", server.StreamConfig{Name: "KV_x", Subjects: []string{"$KV.x.>", "more"}}, model.KindStream, ""},
		{"KV_ alone", server.StreamConfig{Name: "KV_", Subjects: []string{"$KV..>"}}, model.KindStream, ""},
		{"mirror of a plain stream", server.StreamConfig{Name: "KV_m", Mirror: &server.StreamSource{Name: "ORDERS"}}, model.KindStream, ""},
		{"OBJ_ name, one subject", server.StreamConfig{Name: "OBJ_a", Subjects: []string{"$O.a.C.>"}}, model.KindStream, ""},
		{"OBJ_ name, another store's subjects", server.StreamConfig{Name: "OBJ_a", Subjects: []string{"$O.b.C.>", "$O.b.M.>"}}, model.KindStream, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, bucket := classify(&tc.cfg)
			if kind != tc.wantKind || bucket != tc.wantBucket {
				t.Errorf("classify = %s %q, want %s %q", kind, bucket, tc.wantKind, tc.wantBucket)
			}
		})
	}
}

// TestReadKinds creates buckets with nats.go, the way applications do, and checks
// that observe recognises what it made.
func TestReadKinds(t *testing.T) {
	c := testkit.Client(t)
	ctx := context.Background()
	js, err := jetstream.New(c.NC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "sessions", History: 5, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "sessions_copy", Storage: jetstream.MemoryStorage,
		Mirror: &jetstream.StreamSource{Name: "sessions"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "assets", Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	addStream(t, c, `{"name":"KV_fake","subjects":["fake.>"],"storage":"memory"}`)

	m, err := Read(ctx, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		kind    model.Kind
		bucket  string
		address string
	}{
		"KV_sessions":      {model.KindKV, "sessions", "kv.sessions"},
		"KV_sessions_copy": {model.KindKV, "sessions_copy", "kv.sessions_copy"},
		"OBJ_assets":       {model.KindObjectStore, "assets", "object_store.assets"},
		"KV_fake":          {model.KindStream, "", "stream.KV_fake"},
	}
	if len(m.Streams) != len(want) {
		t.Errorf("streams %v", m.StreamNames())
	}
	for name, w := range want {
		s := m.Streams[name]
		if s == nil {
			t.Errorf("stream %s missing", name)
			continue
		}
		if s.Kind != w.kind || s.Bucket != w.bucket || s.Address() != w.address {
			t.Errorf("%s: kind %s bucket %q address %s, want %s %q %s", name, s.Kind, s.Bucket, s.Address(), w.kind, w.bucket, w.address)
		}
	}
	if got := m.Streams["KV_sessions"].Config.MaxMsgsPer; got != 5 {
		t.Errorf("KV history read as max_msgs_per_subject %d, want 5", got)
	}
}

// TestReadSourcingConsumer checks that the durable consumer a sourcing stream makes
// on an interest-retention origin is read and recognised as the server's own.
func TestReadSourcingConsumer(t *testing.T) {
	c := testkit.Client(t)
	ctx := context.Background()
	addStream(t, c, `{"name":"ORIGIN","subjects":["orig.>"],"retention":"interest","storage":"memory"}`)
	addConsumer(t, c, "ORIGIN", "worker", "")
	addStream(t, c, `{"name":"COPY","sources":[{"name":"ORIGIN"}],"storage":"memory"}`)
	publish(t, c.NC, "orig.1")

	var src *model.Consumer
	deadline := time.Now().Add(10 * time.Second)
	for src == nil && time.Now().Before(deadline) {
		m, err := Read(ctx, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cn := range m.ConsumersOf("ORIGIN") {
			if cn.Name != "worker" {
				src = cn
			}
		}
		if src == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if src == nil {
		t.Fatal("no sourcing consumer appeared on ORIGIN")
	}
	if !strings.HasPrefix(src.Name, "JS_SRC_") || !src.Config.Sourcing || src.Config.Durable == "" {
		t.Errorf("sourcing consumer %s: sourcing %v durable %q", src.Name, src.Config.Sourcing, src.Config.Durable)
	}
	if !src.IsSystem() {
		t.Errorf("consumer %s not recognised as the server's own", src.Key())
	}
	if src.Config.Metadata["_nats.src.stream"] != "COPY" {
		t.Errorf("sourcing consumer metadata %v", src.Config.Metadata)
	}
}
