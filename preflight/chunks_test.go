package preflight

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// withChunkStreams sets chunkStreams for one test.
func withChunkStreams(t *testing.T, n int) {
	t.Helper()
	old := chunkStreams
	chunkStreams = n
	t.Cleanup(func() { chunkStreams = old })
}

// liveStream is a stream as the server reports it, sourcing origins.
func liveStream(name string, origins ...string) *model.Stream {
	cfg := server.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: server.FileStorage, Replicas: 1,
		MaxMsgs: -1, MaxBytes: -1, MaxMsgsPer: -1, MaxMsgSize: -1, MaxConsumers: -1, Duplicates: 120_000_000_000}
	for _, o := range origins {
		cfg.Sources = append(cfg.Sources, &server.StreamSource{Name: o})
	}
	return &model.Stream{Name: name, Kind: model.KindStream, Config: cfg}
}

// TestChunksKeepGroupsTogether: a part never separates what the private server must
// hold together (a stream and its consumers, a mirror and its origin, a stream and the
// live streams it sources, through their own sources), every change is in exactly one
// part, each part is in plan order, and a plan that fits is one part.
func TestChunksKeepGroupsTogether(t *testing.T) {
	live := model.New()
	live.Target = &model.Target{APILevel: server.JSApiLevel}
	live.Streams["L"] = liveStream("L", "L2")
	live.Streams["L2"] = liveStream("L2")
	desired := model.New()
	add := func(name string, cfg server.StreamConfig, consumers ...string) {
		if cfg.Mirror == nil {
			cfg.Subjects = []string{name + ".>"}
		}
		cfg.Name = name
		desired.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream, Config: cfg}
		for _, c := range consumers {
			desired.Consumers[model.ConsumerKey{Stream: name, Name: c}] = &model.Consumer{Stream: name, Name: c,
				Config: server.ConsumerConfig{Durable: c, AckPolicy: server.AckExplicit}}
		}
	}
	add("A", server.StreamConfig{Mirror: &server.StreamSource{Name: "B"}})
	add("B", server.StreamConfig{}, "b1")
	add("C", server.StreamConfig{}, "c1", "c2")
	add("D", server.StreamConfig{Sources: []*server.StreamSource{{Name: "L"}}})
	add("E", server.StreamConfig{})
	p, err := plan.Compute(desired, live, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}

	withChunkStreams(t, 100)
	if parts := chunks(p, live); len(parts) != 1 || len(parts[0]) != len(p.Changes) {
		t.Fatalf("a plan that fits: %d parts, want 1 with all %d changes", len(parts), len(p.Changes))
	}

	// Room for two streams: {A, B} fill a part, C starts one, and D, which brings the
	// live L and L2 it sources, does not fit beside C.
	withChunkStreams(t, 2)
	parts := chunks(p, live)
	partOf := map[string]int{}
	seen := map[int]bool{}
	for n, part := range parts {
		if !slices.IsSorted(part) {
			t.Errorf("part %d is not in plan order: %v", n, part)
		}
		for _, i := range part {
			if seen[i] {
				t.Errorf("change %d (%s) is in two parts", i, p.Changes[i].Address)
			}
			seen[i] = true
			s := p.Changes[i].Name
			if p.Changes[i].Kind == model.KindConsumer {
				s = p.Changes[i].Stream
			}
			if prev, ok := partOf[s]; ok && prev != n {
				t.Errorf("stream %s's changes are in parts %d and %d", s, prev, n)
			}
			partOf[s] = n
		}
	}
	if len(seen) != len(p.Changes) {
		t.Fatalf("%d of %d changes are in a part", len(seen), len(p.Changes))
	}
	if partOf["A"] != partOf["B"] {
		t.Errorf("the mirror A and its origin B are in parts %d and %d", partOf["A"], partOf["B"])
	}
	if partOf["C"] == partOf["D"] || partOf["D"] == partOf["E"] {
		t.Errorf("parts %v: D, with the live L and L2 it sources, is three streams and shares no part", partOf)
	}
	if len(parts) != 4 { // {A, B}, {C}, {D with L and L2}, {E}
		t.Errorf("%d parts, want 4: %v", len(parts), parts)
	}
}

// TestCheckInPartsFindsTheSame: a plan checked in parts of one stream finds exactly
// what it finds in one private server (refused streams and consumers in different
// parts, an update checked against its recreated live stream and consumers), in plan
// order, checks as many changes, leaves none unchecked, and removes every store.
func TestCheckInPartsFindsTheSame(t *testing.T) {
	tmp := isolateTemp(t)
	live := model.New()
	live.Target = &model.Target{APILevel: server.JSApiLevel}
	live.Streams["U"] = liveStream("U")
	live.Consumers[model.ConsumerKey{Stream: "U", Name: "c"}] = &model.Consumer{Stream: "U", Name: "c", Config: server.ConsumerConfig{
		Durable: "c", Name: "c", AckPolicy: server.AckExplicit, MaxAckPending: 500, AckWait: 30_000_000_000,
	}}
	desired := desiredStream("U", server.StreamConfig{Subjects: []string{"U.>"},
		ConsumerLimits: server.StreamConsumerLimits{MaxAckPending: 100}}, "consumer_limits.max_ack_pending")
	for i := range 6 {
		name := fmt.Sprintf("S%d", i)
		cfg := server.StreamConfig{Name: name, Subjects: []string{name + ".>"}, MaxAge: time.Hour}
		if i == 4 {
			cfg.MaxAge = 50_000_000 // refused: under the duplicate window
		}
		desired.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream, Config: cfg, Decl: desired.Streams["U"].Decl}
		cc := server.ConsumerConfig{Durable: "c", AckPolicy: server.AckExplicit}
		if i == 1 {
			cc.MaxDeliver, cc.BackOff = 2, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} // refused: more backoffs than deliveries
		}
		desired.Consumers[model.ConsumerKey{Stream: name, Name: "c"}] = &model.Consumer{Stream: name, Name: "c", Config: cc}
	}
	p, err := plan.Compute(desired, live, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Check(context.Background(), p, desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Findings) != 3 {
		t.Fatalf("in one server: findings %s, want 3 (U's update, S1's consumer, S4)", jsonOf(whole.Findings))
	}
	withChunkStreams(t, 1)
	if n := len(chunks(p, live)); n != 7 {
		t.Fatalf("%d parts, want one per stream (7)", n)
	}
	parted, err := Check(context.Background(), p, desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(parted.Findings), jsonOf(whole.Findings); got != want {
		t.Errorf("in parts: findings\n%s\nwant, as in one server:\n%s", got, want)
	}
	if parted.Checked != whole.Checked || len(parted.Unchecked) != 0 || len(whole.Unchecked) != 0 {
		t.Errorf("checked %d in parts and %d in one; unchecked %q and %q", parted.Checked, whole.Checked, parted.Unchecked, whole.Unchecked)
	}
	requireEmpty(t, tmp)
}
