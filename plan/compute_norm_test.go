package plan

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// TestNormaliseDesiredMatchesNormalizers checks that the configs Compute sends, which
// it takes from the invariant checks' normalisation and marks with ownership after, are
// exactly what normalising the marked config gives: for configs with every field set,
// server metadata, no metadata, and a consumer declared without a name.
func TestNormaliseDesiredMatchesNormalizers(t *testing.T) {
	full := filledStream()
	full.Name = "FULL"
	desired := model.New()
	desired.Project = "shop"
	desired.Streams["FULL"] = &model.Stream{Name: "FULL", Config: full, Lifecycle: model.Lifecycle{PreventDestroy: true}}
	desired.Streams["BARE"] = &model.Stream{Name: "BARE", Config: server.StreamConfig{Storage: server.FileStorage}}
	mirror := server.StreamConfig{Name: "M", Storage: server.FileStorage, Mirror: &server.StreamSource{Name: "BARE"}}
	desired.Streams["M"] = &model.Stream{Name: "M", Config: mirror}
	cfull := filled[server.ConsumerConfig]()
	cfull.Durable, cfull.Name = "full", "full"
	for _, c := range []*model.Consumer{
		{Stream: "FULL", Name: "full", Config: cfull, Lifecycle: model.Lifecycle{PreventDestroy: true}},
		{Stream: "BARE", Name: "bare", Config: server.ConsumerConfig{Durable: "bare", AckPolicy: server.AckExplicit}},
		{Stream: "BARE", Name: "nameless", Config: server.ConsumerConfig{AckPolicy: server.AckAll}},
		{Stream: "LIVE", Name: "c", Config: server.ConsumerConfig{Durable: "c", Metadata: map[string]string{"_nats.x": "1"}}},
	} {
		desired.Consumers[c.Key()] = c
	}
	live := model.New()
	live.Target = &model.Target{APILevel: 3, Limits: model.AccountLimits{MaxAckPending: 50, MaxRequestBatch: 10}}
	live.Streams["LIVE"] = &model.Stream{Name: "LIVE", Config: server.StreamConfig{Name: "LIVE",
		ConsumerLimits: server.StreamConsumerLimits{MaxAckPending: 7}}}
	c := &computer{desired: desired, live: live, want: map[string]server.StreamConfig{},
		wantC: map[model.ConsumerKey]server.ConsumerConfig{}, inv: newInvariants(desired, live)}
	c.normaliseDesired()

	for name, s := range desired.Streams {
		cfg := s.Config
		if cfg.Name == "" {
			cfg.Name = name
		}
		cfg.Metadata = c.ownership(cfg.Metadata, s.Lifecycle)
		want := NormalizeStream(cfg, live.Target)
		if name == "M" {
			want.MirrorDirect = c.want["BARE"].AllowDirect
		}
		if !reflect.DeepEqual(want, c.want[name]) {
			t.Errorf("stream %s (-normalizer +compute):\n%s", name, cmp.Diff(mapOf(want), mapOf(c.want[name])))
		}
	}
	for k, dc := range desired.Consumers {
		cfg := dc.Config
		if cfg.Durable == "" && cfg.Name == "" {
			cfg.Durable = k.Name
		}
		cfg.Metadata = c.ownership(cfg.Metadata, dc.Lifecycle)
		want := NormalizeConsumer(cfg, c.streamConfig(k.Stream), live.Target)
		if !reflect.DeepEqual(want, c.wantC[k]) {
			t.Errorf("consumer %s (-normalizer +compute):\n%s", k, cmp.Diff(mapOf(want), mapOf(c.wantC[k])))
		}
	}
	if len(c.wantC) != 4 || len(c.want) != 3 {
		t.Fatalf("normalised %d streams and %d consumers", len(c.want), len(c.wantC))
	}
}

// TestOwnedMetadataMatchesCloneJSON checks the shortcut against the round trip it skips.
func TestOwnedMetadataMatchesCloneJSON(t *testing.T) {
	for _, md := range []map[string]string{
		nil, {}, {"a": "b", "<&>": "\u2028é"}, {"bad\xff": "x"}, {"k": "bad\xfe"},
		{"_nats.ver": "2.12"}, {"_nats.level": "1", "owner": "x"}, {"_nats.req.level": "0", "bad\xff": "_nats.x"},
	} {
		want := userMetadata(cloneJSON(md))
		if got := ownedMetadata(maps.Clone(md)); !reflect.DeepEqual(got, want) {
			t.Errorf("ownedMetadata(%q) = %q, the round trip gives %q", md, got, want)
		}
	}
}

// TestOrderingTakesSentConfigs checks that the configs ordering takes from sent read
// as decoding the changes' After would: the subjects, upstreams and filters it orders by.
func TestOrderingTakesSentConfigs(t *testing.T) {
	full := filledStream()
	full.Name, full.Mirror, full.Sealed = "FULL", nil, false
	desired := model.New()
	desired.Project = "shop"
	desired.Streams["FULL"] = &model.Stream{Name: "FULL", Config: full}
	cfull := filled[server.ConsumerConfig]()
	cfull.Durable, cfull.Name = "full", "full"
	desired.Consumers[model.ConsumerKey{Stream: "FULL", Name: "full"}] = &model.Consumer{Stream: "FULL", Name: "full", Config: cfull}
	live := model.New()
	live.Target = &model.Target{APILevel: 5}
	c := &computer{desired: desired, live: live, p: &Plan{}, want: map[string]server.StreamConfig{},
		wantC: map[model.ConsumerKey]server.ConsumerConfig{}, inv: newInvariants(desired, live), sent: map[*Change]any{}}
	c.normaliseDesired()
	c.stream(desired.Streams["FULL"])
	c.consumer(desired.Consumers[model.ConsumerKey{Stream: "FULL", Name: "full"}])
	if len(c.sent) != 2 {
		t.Fatalf("%d configs sent, want 2", len(c.sent))
	}
	taken, decoded := newOrdering(c.p.Changes, c.sent), newOrdering(c.p.Changes, nil)
	for i := range c.p.Changes {
		if a, b := taken.sa[i], decoded.sa[i]; a != nil || b != nil {
			if !reflect.DeepEqual(a.Subjects, b.Subjects) || !reflect.DeepEqual(upstreams(a), upstreams(b)) {
				t.Errorf("stream: taken %v %v, decoded %v %v", a.Subjects, upstreams(a), b.Subjects, upstreams(b))
			}
		}
		if a, b := taken.ca[i], decoded.ca[i]; a != nil || b != nil {
			if !reflect.DeepEqual(filtersOf(*a), filtersOf(*b)) {
				t.Errorf("consumer: taken %v, decoded %v", filtersOf(*a), filtersOf(*b))
			}
		}
	}
}

// TestZeroRewriteMessages checks how a declared 0 the server replaces shows the value it
// keeps: durations as the files write them, counts as numbers.
func TestZeroRewriteMessages(t *testing.T) {
	cfg := server.ConsumerConfig{Durable: "c", AckPolicy: server.AckExplicit}
	norm := NormalizeConsumer(cfg, nil, nil)
	got := map[string]string{}
	for _, rw := range consumerRewrites(cfg, norm, nil, func(string) bool { return true }) {
		got[rw.path] = rw.msg
	}
	for path, want := range map[string]string{
		"ack_wait":        "the server keeps ack_wait = 30s;",
		"max_waiting":     "the server keeps max_waiting = 512;",
		"max_ack_pending": "the server keeps max_ack_pending = 1000;",
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("%s: %q does not say %q", path, got[path], want)
		}
	}
}
