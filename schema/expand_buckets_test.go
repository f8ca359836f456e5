package schema

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
)

// The stream natsplan declares for a bucket must be the one nats.go creates: for
// every case, create the bucket with nats.go, read the server's config back, delete
// it, create natsplan's config through the raw API under the same name, read it back,
// and compare the two readbacks (server-owned metadata aside).
func TestKVStreamConfigMatchesNatsGo(t *testing.T) {
	t.Parallel()
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Origins for mirrors and sources.
	for _, b := range []string{"origin", "other"} {
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	cases := []struct {
		name string
		kv   model.KV
	}{
		{"defaults", model.KV{}},
		{"description", model.KV{Description: "user sessions"}},
		{"max value size", model.KV{MaxValueSize: 1024}},
		{"history", model.KV{History: 64}},
		{"ttl below the duplicate window", model.KV{TTL: 30 * time.Second}},
		{"ttl above the duplicate window", model.KV{TTL: 72 * time.Hour}},
		{"max bytes", model.KV{MaxBytes: 10 << 20}},
		{"memory storage", model.KV{Storage: "memory"}},
		{"file storage", model.KV{Storage: "file"}},
		{"one replica", model.KV{Replicas: 1}},
		{"republish", model.KV{RePublish: &server.RePublish{Source: "$KV.b.>", Destination: "repub.>", HeadersOnly: true}}},
		{"republish all", model.KV{RePublish: &server.RePublish{Source: ">", Destination: "all.>"}}},
		{"compression", model.KV{Compression: "s2"}},
		{"no compression", model.KV{Compression: "none"}},
		{"limit marker ttl", model.KV{LimitMarkerTTL: 5 * time.Second, TTL: time.Hour}},
		{"metadata", model.KV{Metadata: map[string]string{"team": "shop", "tier": "gold"}}},
		{"mirror by bucket", model.KV{Mirror: &server.StreamSource{Name: "origin"}}},
		{"mirror by stream", model.KV{Mirror: &server.StreamSource{Name: "KV_origin", OptStartSeq: 3}}},
		{"mirror from a time", model.KV{Mirror: &server.StreamSource{Name: "origin", OptStartTime: &start}}},
		{"sources", model.KV{Sources: []*server.StreamSource{{Name: "origin"}, {Name: "KV_other", OptStartSeq: 2}}}},
		{"source with own transforms", model.KV{Sources: []*server.StreamSource{{Name: "PLAIN",
			SubjectTransforms: []server.SubjectTransformConfig{{Source: "plain.>", Destination: "$KV.b.>"}}}}}},
		{"external source of the same bucket", model.KV{Sources: []*server.StreamSource{{Name: "b",
			External: &server.ExternalStream{ApiPrefix: "$JS.hub.API", DeliverPrefix: "deliver.hub"}}}}},
		{"external source of another bucket", model.KV{Sources: []*server.StreamSource{{Name: "origin",
			External: &server.ExternalStream{ApiPrefix: "$JS.hub.API"}}}}},
		{"everything", model.KV{Description: "all", MaxValueSize: 4096, History: 10, TTL: time.Minute,
			MaxBytes: 1 << 30, Storage: "memory", Replicas: 1, Compression: "s2", LimitMarkerTTL: 2 * time.Second,
			RePublish: &server.RePublish{Destination: "r.>"}, Metadata: map[string]string{"a": "b"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kv := tc.kv
			kv.Bucket = "b"
			cfg, diags := KVStreamConfig(&kv)
			assertSameStream(t, nc, cfg, diags, func() error {
				_, err := js.CreateKeyValue(ctx, toNatsKV(t, &kv))
				return err
			})
		})
	}
}

// TestObjectStoreStreamConfigMatchesNatsGo is the object-store twin of the KV test.
func TestObjectStoreStreamConfigMatchesNatsGo(t *testing.T) {
	t.Parallel()
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		name string
		o    model.ObjectStore
	}{
		{"defaults", model.ObjectStore{}},
		{"description", model.ObjectStore{Description: "images"}},
		{"ttl", model.ObjectStore{TTL: 30 * time.Second}},
		{"long ttl", model.ObjectStore{TTL: 7 * 24 * time.Hour}},
		{"max bytes", model.ObjectStore{MaxBytes: 5 << 30}},
		{"memory storage", model.ObjectStore{Storage: "memory"}},
		{"one replica", model.ObjectStore{Replicas: 1}},
		{"compression", model.ObjectStore{Compression: "s2"}},
		{"metadata", model.ObjectStore{Metadata: map[string]string{"owner": "web"}}},
		{"everything", model.ObjectStore{Description: "d", TTL: time.Hour, MaxBytes: 1 << 20, Storage: "file",
			Replicas: 1, Compression: "s2", Metadata: map[string]string{"x": "y"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Bucket = "assets"
			cfg, diags := ObjectStoreStreamConfig(&o)
			assertSameStream(t, nc, cfg, diags, func() error {
				_, err := js.CreateObjectStore(ctx, toNatsObj(t, &o))
				return err
			})
		})
	}
}

// Replicas and placement need a cluster to be accepted.
func TestBucketStreamConfigInCluster(t *testing.T) {
	t.Parallel()
	c := testsrv.StartCluster(t)
	nc := testsrv.Connect(t, c.Servers[0])
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	placement := &server.Placement{Cluster: "c"}

	kv := model.KV{Bucket: "replicated", Replicas: 3, Placement: placement, History: 3}
	cfg, diags := KVStreamConfig(&kv)
	assertSameStream(t, nc, cfg, diags, func() error {
		_, err := js.CreateKeyValue(ctx, toNatsKV(t, &kv))
		return err
	})

	o := model.ObjectStore{Bucket: "replicated", Replicas: 3, Placement: placement}
	ocfg, diags := ObjectStoreStreamConfig(&o)
	assertSameStream(t, nc, ocfg, diags, func() error {
		_, err := js.CreateObjectStore(ctx, toNatsObj(t, &o))
		return err
	})
}

func TestExpandBuckets(t *testing.T) {
	t.Parallel()
	rng := func(line int) hcl.Range {
		return hcl.Range{Filename: "b.hcl", Start: hcl.Pos{Line: line, Column: 3}, End: hcl.Pos{Line: line, Column: 9}}
	}
	decl := &model.Decl{Range: rng(1), Fields: map[string]hcl.Range{
		"history": rng(2), "ttl": rng(3), "max_value_size": rng(4), "limit_marker_ttl": rng(5), "storage": rng(6),
	}}
	m := model.New()
	m.KVs["sessions"] = &model.KV{Bucket: "sessions", History: 5, TTL: time.Hour,
		Lifecycle: model.Lifecycle{PreventDestroy: true}, Decl: decl}
	m.ObjectStores["assets"] = &model.ObjectStore{Bucket: "assets", TTL: time.Hour,
		Decl: &model.Decl{Range: rng(10), Fields: map[string]hcl.Range{"ttl": rng(11)}}}
	if diags := expandBuckets(m); diags.HasErrors() {
		t.Fatal(diags)
	}
	kv := m.Streams["KV_sessions"]
	if kv == nil || kv.Kind != model.KindKV || kv.Bucket != "sessions" || !kv.Lifecycle.PreventDestroy {
		t.Fatalf("kv stream = %+v", kv)
	}
	if kv.Address() != "kv.sessions" || kv.Config.MaxMsgsPer != 5 || kv.Config.MaxAge != time.Hour {
		t.Errorf("kv stream config = %+v", kv.Config)
	}
	for path, line := range map[string]int{"max_msgs_per_subject": 2, "max_age": 3, "max_msg_size": 4,
		"subject_delete_marker_ttl": 5, "storage": 6, "history": 2, "description": 1} {
		if got := kv.Decl.FieldRange(path).Start.Line; got != line {
			t.Errorf("kv decl %s at line %d, want %d", path, got, line)
		}
	}
	obj := m.Streams["OBJ_assets"]
	if obj == nil || obj.Kind != model.KindObjectStore || obj.Address() != "object_store.assets" {
		t.Fatalf("object store stream = %+v", obj)
	}
	if got := obj.Decl.FieldRange("max_age").Start.Line; got != 11 {
		t.Errorf("object store max_age at line %d, want 11", got)
	}
}

func TestExpandBucketsDiagnostics(t *testing.T) {
	t.Parallel()
	rng := func(line int) hcl.Range {
		return hcl.Range{Filename: "b.hcl", Start: hcl.Pos{Line: line, Column: 1}, End: hcl.Pos{Line: line, Column: 5}}
	}
	decl := &model.Decl{Range: rng(1), Fields: map[string]hcl.Range{
		"history": rng(2), "limit_marker_ttl": rng(3), "storage": rng(4), "compression": rng(5), "mirror": rng(6),
	}}
	cases := []struct {
		name    string
		setup   func(m *model.Model)
		summary string
		line    int
	}{
		{"history too large", func(m *model.Model) {
			m.KVs["b"] = &model.KV{Bucket: "b", History: 65, Decl: decl}
		}, "Invalid history", 2},
		{"bad bucket name", func(m *model.Model) {
			m.KVs["a.b"] = &model.KV{Bucket: "a.b", Decl: decl}
		}, "Invalid bucket name", 1},
		{"bad object store name", func(m *model.Model) {
			m.ObjectStores["a b"] = &model.ObjectStore{Bucket: "a b", Decl: decl}
		}, "Invalid bucket name", 1},
		{"limit marker below a second", func(m *model.Model) {
			m.KVs["b"] = &model.KV{Bucket: "b", LimitMarkerTTL: 500 * time.Millisecond, Decl: decl}
		}, "Invalid limit_marker_ttl", 3},
		{"bad storage", func(m *model.Model) {
			m.KVs["b"] = &model.KV{Bucket: "b", Storage: "disk", Decl: decl}
		}, "Invalid storage", 4},
		{"bad compression", func(m *model.Model) {
			m.ObjectStores["b"] = &model.ObjectStore{Bucket: "b", Compression: "zstd", Decl: decl}
		}, "Invalid compression", 5},
		{"mirror and sources", func(m *model.Model) {
			m.KVs["b"] = &model.KV{Bucket: "b", Mirror: &server.StreamSource{Name: "x"},
				Sources: []*server.StreamSource{{Name: "y"}}, Decl: decl}
		}, "Mirror and sources together", 6},
		{"filter on a kv source", func(m *model.Model) {
			m.KVs["b"] = &model.KV{Bucket: "b", Sources: []*server.StreamSource{{Name: "y", FilterSubject: "$KV.y.a"}},
				Decl: &model.Decl{Range: rng(1), Fields: map[string]hcl.Range{"sources[0].filter_subject": rng(7)}}}
		}, "Filter on a kv source", 7},
		{"kv clashes with a stream", func(m *model.Model) {
			m.Streams["KV_b"] = &model.Stream{Name: "KV_b", Kind: model.KindStream, Decl: &model.Decl{Range: rng(9)}}
			m.KVs["b"] = &model.KV{Bucket: "b", Decl: decl}
		}, "Bucket name clashes with a stream", 1},
		{"object store clashes with a stream", func(m *model.Model) {
			m.Streams["OBJ_b"] = &model.Stream{Name: "OBJ_b", Kind: model.KindStream}
			m.ObjectStores["b"] = &model.ObjectStore{Bucket: "b", Decl: decl}
		}, "Bucket name clashes with a stream", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := model.New()
			tc.setup(m)
			diags := expandBuckets(m)
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %d: %v", len(diags), diags)
			}
			d := diags[0]
			if d.Severity != hcl.DiagError || d.Summary != tc.summary || d.Subject == nil || d.Subject.Start.Line != tc.line {
				t.Errorf("got %q at %v, want %q at line %d", d.Summary, d.Subject, tc.summary, tc.line)
			}
			if d.Detail == "" || strings.HasSuffix(d.Summary, ".") {
				t.Errorf("diagnostic %q needs a detail saying what to do", d.Summary)
			}
		})
	}
}

// assertSameStream creates the bucket with nats.go, then natsplan's config cfg under
// the same name, and fails unless the server reads both back alike.
func assertSameStream(t *testing.T, nc *nats.Conn, cfg server.StreamConfig, diags hcl.Diagnostics, natsGo func() error) {
	t.Helper()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := createAndRead(t, nc, cfg.Name, natsGo)
	got := createAndRead(t, nc, cfg.Name, func() error { return rawCreate(nc, cfg) })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("natsplan's %s differs from nats.go's (-nats.go +natsplan):\n%s", cfg.Name, d)
	}
}

// createAndRead runs create, reads the stream's config back as JSON without
// server-owned metadata, and deletes the stream so the name can be reused.
func createAndRead(t *testing.T, nc *nats.Conn, stream string, create func() error) map[string]any {
	t.Helper()
	if err := create(); err != nil {
		t.Fatalf("create %s: %v", stream, err)
	}
	cfg := jsAPI(t, nc, "$JS.API.STREAM.INFO."+stream, nil)
	jsAPI(t, nc, "$JS.API.STREAM.DELETE."+stream, nil)
	if md, ok := cfg["metadata"].(map[string]any); ok {
		for k := range md {
			if strings.HasPrefix(k, model.ServerMetaPrefix) {
				delete(md, k)
			}
		}
		if len(md) == 0 {
			delete(cfg, "metadata")
		}
	}
	return cfg
}

// rawCreate sends cfg as nats.go sends its bucket configs: not pedantic, so the
// server fills its defaults on both sides alike (plan's normalisation tests cover
// the defaults natsplan fills before its own pedantic requests).
func rawCreate(nc *nats.Conn, cfg server.StreamConfig) error {
	body, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	msg, err := nc.Request("$JS.API.STREAM.CREATE."+cfg.Name, body, 5*time.Second)
	if err != nil {
		return err
	}
	var resp struct {
		Error *server.ApiError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	return nil
}

// jsAPI calls a JetStream API subject and returns the response's config.
func jsAPI(t *testing.T, nc *nats.Conn, subject string, body []byte) map[string]any {
	t.Helper()
	msg, err := nc.Request(subject, body, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var resp struct {
		Error  *server.ApiError `json:"error"`
		Config map[string]any   `json:"config"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	if resp.Error != nil {
		t.Fatalf("%s: %v", subject, resp.Error)
	}
	return resp.Config
}

// toNatsKV converts the kv block's model into nats.go's KeyValueConfig. The nested
// types share their JSON form, so they are converted through it.
func toNatsKV(t *testing.T, kv *model.KV) jetstream.KeyValueConfig {
	t.Helper()
	c := jetstream.KeyValueConfig{
		Bucket: kv.Bucket, Description: kv.Description, MaxValueSize: kv.MaxValueSize, History: uint8(kv.History),
		TTL: kv.TTL, MaxBytes: kv.MaxBytes, Storage: natsStorage(kv.Storage), Replicas: kv.Replicas,
		Compression: kv.Compression == "s2", LimitMarkerTTL: kv.LimitMarkerTTL, Metadata: kv.Metadata,
	}
	viaJSON(t, kv.Placement, &c.Placement)
	viaJSON(t, kv.RePublish, &c.RePublish)
	viaJSON(t, kv.Mirror, &c.Mirror)
	viaJSON(t, kv.Sources, &c.Sources)
	return c
}

func toNatsObj(t *testing.T, o *model.ObjectStore) jetstream.ObjectStoreConfig {
	t.Helper()
	c := jetstream.ObjectStoreConfig{
		Bucket: o.Bucket, Description: o.Description, TTL: o.TTL, MaxBytes: o.MaxBytes,
		Storage: natsStorage(o.Storage), Replicas: o.Replicas, Compression: o.Compression == "s2", Metadata: o.Metadata,
	}
	viaJSON(t, o.Placement, &c.Placement)
	return c
}

func natsStorage(s string) jetstream.StorageType {
	if s == "memory" {
		return jetstream.MemoryStorage
	}
	return jetstream.FileStorage
}

func viaJSON(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}
