package plan_test

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// overlapModel declares n subjects that all share their first token: in one stream,
// or spread over streams of ten subjects each, with wildcards, where each stream's
// subjects differ from the others' only in the second token.
func overlapModel(n int, oneStream bool) *model.Model {
	m := model.New()
	m.Project = "bench"
	add := func(name string, subjects []string) {
		m.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream,
			Config: server.StreamConfig{Name: name, Subjects: subjects}}
	}
	if oneStream {
		subjects := make([]string, n)
		for i := range subjects {
			subjects[i] = fmt.Sprintf("orders.s%d.>", i)
		}
		add("ORDERS", subjects)
		return m
	}
	for s := range n / 10 {
		subjects := []string{fmt.Sprintf("orders.k%d.all.>", s)}
		for j := range 9 {
			subjects = append(subjects, fmt.Sprintf("orders.k%d.e%d.*", s, j))
		}
		add(fmt.Sprintf("S%d", s), subjects)
	}
	return m
}

// BenchmarkOverlap validates n subjects that share a first token (NP402 and every
// other offline check); it grew with the square of n before the subject trie.
func BenchmarkOverlap(b *testing.B) {
	for _, shape := range []struct {
		name string
		one  bool
	}{{"one-stream", true}, {"streams-of-10", false}} {
		for _, n := range []int{2_000, 20_000, 200_000} {
			b.Run(fmt.Sprintf("%s/subjects=%d", shape.name, n), func(b *testing.B) {
				m := overlapModel(n, shape.one)
				for b.Loop() {
					if fs := plan.Validate(m); len(fs) != 0 {
						b.Fatalf("%d findings, want none: %s", len(fs), fs[0].Message)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/subject")
			})
		}
	}
}

// BenchmarkRenameStreams plans n streams that take over the subjects of n other
// streams this project owns and deletes: each create must wait for its delete, found
// among n freed subject sets (pairwise, n² comparisons, before the subject trie).
func BenchmarkRenameStreams(b *testing.B) {
	for _, n := range []int{1_000, 5_000} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			desired, live := model.New(), model.New()
			desired.Project = "bench"
			live.Target = &model.Target{APILevel: 5}
			for i := range n {
				subjects := []string{fmt.Sprintf("orders.s%d.>", i)}
				name, old := fmt.Sprintf("NEW%d", i), fmt.Sprintf("OLD%d", i)
				desired.Streams[name] = &model.Stream{Name: name, Kind: model.KindStream,
					Config: server.StreamConfig{Name: name, Subjects: subjects}}
				cfg := plan.NormalizeStream(server.StreamConfig{Name: old, Subjects: subjects,
					Metadata: map[string]string{model.MetaProject: "bench"}}, nil)
				live.Streams[old] = &model.Stream{Name: old, Kind: model.KindStream, Config: cfg, State: &model.StreamState{}}
			}
			for b.Loop() {
				p, err := plan.Compute(desired, live, plan.Options{})
				if err != nil || len(p.Changes) != 2*n {
					b.Fatalf("compute: %v, %d changes", err, len(p.Changes))
				}
			}
		})
	}
}
