package plan_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// overlapStream is a stream of a random overlap case.
type overlapStream struct {
	name     string
	subjects []string
	live     bool // live only: not declared
	owned    bool // live and this project's, so the plan deletes it
}

// referenceOverlaps is NP402 as it was specified before the index: every subject of
// every declared stream, in declared order, compared with every subject of every other
// stream, sorted by stream and subject; the first hit per other stream is reported.
func referenceOverlaps(streams []overlapStream) []string {
	type entry struct {
		stream, subject string
		declared        bool
	}
	var all []entry
	for _, s := range streams {
		if s.live && s.owned {
			continue // deleted by the plan
		}
		for _, subj := range s.subjects {
			all = append(all, entry{s.name, subj, !s.live})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].stream != all[j].stream {
			return all[i].stream < all[j].stream
		}
		return all[i].subject < all[j].subject
	})
	var out []string
	for _, a := range streams {
		if a.live {
			continue
		}
		reported := map[string]bool{}
		for _, s1 := range a.subjects {
			for _, e := range all {
				if e.stream == a.name || reported[e.stream] || e.declared && e.stream < a.name ||
					!server.SubjectsCollide(s1, e.subject) {
					continue
				}
				reported[e.stream] = true
				out = append(out, fmt.Sprintf("stream.%s: %q of %s / %q of %s (declared %v)", a.name, s1, a.name, e.subject, e.stream, e.declared))
			}
		}
	}
	return out
}

// computedOverlaps is NP402 as Compute reports it, in the reference's words.
func computedOverlaps(t *testing.T, streams []overlapStream) []string {
	t.Helper()
	desired, live := model.New(), model.New()
	desired.Project = "shop"
	live.Target = &model.Target{APILevel: 5}
	for _, s := range streams {
		cfg := server.StreamConfig{Name: s.name, Subjects: s.subjects}
		if !s.live {
			desired.Streams[s.name] = &model.Stream{Name: s.name, Kind: model.KindStream, Config: cfg}
			continue
		}
		if s.owned {
			cfg.Metadata = map[string]string{model.MetaProject: "shop"}
		}
		live.Streams[s.name] = &model.Stream{Name: s.name, Kind: model.KindStream, Config: plan.NormalizeStream(cfg, nil),
			State: &model.StreamState{}}
	}
	p, err := plan.Compute(desired, live, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range p.Findings {
		if f.Code != finding.CodeOverlap {
			continue
		}
		var s1, a, s2, b string
		declared := !strings.Contains(f.Message, "of live stream")
		msg := strings.Replace(f.Message, "of live stream", "of stream", 1)
		if _, err := fmt.Sscanf(msg, "subject %q of stream %s overlaps subject %q of stream %s", &s1, &a, &s2, &b); err != nil {
			t.Fatalf("unexpected NP402 message %q: %v", f.Message, err)
		}
		b = strings.TrimSuffix(b, ":")
		b = strings.TrimSuffix(b, ",")
		out = append(out, fmt.Sprintf("%s: %q of %s / %q of %s (declared %v)", f.Address, s1, a, s2, b, declared))
	}
	return out
}

// TestOverlapsMatchReference compares NP402 with the pairwise reference on random
// declared and live streams whose subjects use wildcards.
func TestOverlapsMatchReference(t *testing.T) {
	tokens := []string{"a", "b", "*", "a", "c"}
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 402))
		var streams []overlapStream
		for i := range 1 + r.IntN(7) {
			s := overlapStream{name: fmt.Sprintf("S%d", r.IntN(4)*10+i), live: r.IntN(3) == 0}
			s.owned = s.live && r.IntN(3) == 0
			for range 1 + r.IntN(5) {
				toks := make([]string, 1+r.IntN(3))
				for k := range toks {
					toks[k] = tokens[r.IntN(len(tokens))]
				}
				if r.IntN(4) == 0 {
					toks[len(toks)-1] = ">"
				}
				s.subjects = append(s.subjects, strings.Join(toks, "."))
			}
			streams = append(streams, s)
		}
		sort.Slice(streams, func(i, j int) bool { return streams[i].name < streams[j].name })
		if d := cmp.Diff(referenceOverlaps(streams), computedOverlaps(t, streams)); d != "" {
			t.Fatalf("seed %d: %+v\nNP402 (-reference +computed):\n%s", seed, streams, d)
		}
	}
}
