package plan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/ctxtest"
)

// trieCase is one subject of a test set: its group and whether it is flagged.
type trieCase struct {
	subject string
	group   int32
	flagged bool
}

// triePairs returns the pairs the trie reports, each as "x,y" with x < y, sorted.
func triePairs(t *testing.T, items []trieCase) []string {
	t.Helper()
	tr := newSubjectTrie()
	for _, it := range items {
		tr.add(it.subject, it.group, it.flagged)
	}
	var out []string
	err := tr.pairs(context.Background(), func(x, y int32) {
		out = append(out, fmt.Sprintf("%d,%d", min(x, y), max(x, y)))
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// pairwisePairs is the reference: every pair compared with the server's own function.
func pairwisePairs(items []trieCase) []string {
	var out []string
	for i, a := range items {
		for j := i + 1; j < len(items); j++ {
			b := items[j]
			if a.group != b.group && (a.flagged || b.flagged) && server.SubjectsCollide(a.subject, b.subject) {
				out = append(out, fmt.Sprintf("%d,%d", i, j))
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestSubjectTrieCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []trieCase
		want  []string
	}{
		{"equal literals", []trieCase{{"a.b", 0, true}, {"a.b", 1, true}}, []string{"0,1"}},
		{"different literals", []trieCase{{"a.b", 0, true}, {"a.c", 1, true}}, nil},
		{"star matches one token", []trieCase{{"a.*", 0, true}, {"a.b", 1, true}, {"a.b.c", 2, true}}, []string{"0,1"}},
		{"> needs at least one more token", []trieCase{{"a.>", 0, true}, {"a", 1, true}, {"a.b.c", 2, true}, {"*.>", 3, true}},
			[]string{"0,2", "0,3", "2,3"}},
		{"> against a longer star", []trieCase{{"a.>", 0, true}, {"*.b.*", 1, true}}, []string{"0,1"}},
		{"star against star in another place", []trieCase{{"a.*.c", 0, true}, {"*.b.*", 1, true}, {"*.b", 2, true}}, []string{"0,1"}},
		{"one group is never paired", []trieCase{{"a.>", 0, true}, {"a.b", 0, true}}, nil},
		{"two unflagged are never paired", []trieCase{{"a.>", 0, false}, {"a.b", 1, false}, {"a.c", 2, true}},
			[]string{"0,2"}},
		{"invalid subjects as the server compares them", []trieCase{{"a..b", 0, true}, {"a..b", 1, true}, {"a.>.b", 2, true},
			{"a.*.b", 3, true}, {"", 4, true}, {"", 5, true}}, pairwisePairs([]trieCase{{"a..b", 0, true}, {"a..b", 1, true},
			{"a.>.b", 2, true}, {"a.*.b", 3, true}, {"", 4, true}, {"", 5, true}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, triePairs(t, tc.items)); d != "" {
				t.Errorf("pairs (-want +got):\n%s", d)
			}
			if d := cmp.Diff(pairwisePairs(tc.items), tc.want); d != "" {
				t.Errorf("the case disagrees with the server (-server +case):\n%s", d)
			}
		})
	}
}

// randomPattern draws a subject pattern from a small alphabet so that collisions are common;
// now and then an invalid one.
func randomPattern(r *rand.Rand) string {
	if r.IntN(25) == 0 {
		return []string{"", "a..b", ".a", "a.", "a.>.b", "a b", ">.>"}[r.IntN(7)]
	}
	toks := make([]string, 1+r.IntN(4))
	for i := range toks {
		toks[i] = []string{"a", "b", "c", "*", "*", "a"}[r.IntN(6)]
	}
	if r.IntN(4) == 0 {
		toks[len(toks)-1] = ">"
	}
	return strings.Join(toks, ".")
}

// TestSubjectTrieMatchesPairwise compares the trie with every pair compared by
// server.SubjectsCollide, on random sets of subjects with wildcards.
func TestSubjectTrieMatchesPairwise(t *testing.T) {
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 11))
		items := make([]trieCase, r.IntN(30))
		groups := 1 + r.IntN(6)
		for i := range items {
			items[i] = trieCase{randomPattern(r), int32(r.IntN(groups)), r.IntN(3) > 0}
		}
		if d := cmp.Diff(pairwisePairs(items), triePairs(t, items)); d != "" {
			t.Fatalf("seed %d: %v\npairs (-pairwise +trie):\n%s", seed, items, d)
		}
	}
}

// TestSubjectTrieStops proves the walk looks at the context while it works: with a
// context that ends after a few looks, it returns the context's error without
// reporting every pair.
func TestSubjectTrieStops(t *testing.T) {
	tr := newSubjectTrie()
	const n = 20000
	for i := range n {
		tr.add(fmt.Sprintf("a.%d", i), 0, true)
		tr.add(fmt.Sprintf("a.%d", i), 1, true)
	}
	ctx := ctxtest.EndsAfter(2)
	pairs := 0
	err := tr.pairs(ctx, func(x, y int32) { pairs++ })
	if err != context.Canceled {
		t.Fatalf("pairs returned %v, want context.Canceled", err)
	}
	if pairs >= n {
		t.Errorf("reported %d pairs after the context ended, want fewer than all %d", pairs, n)
	}
}

// BenchmarkSubjectTrie is the overlap check alone (building the trie and walking it)
// on n subjects sharing a first token: in one stream, and in streams of ten with
// wildcards whose subjects differ from the other streams' in the second token.
func BenchmarkSubjectTrie(b *testing.B) {
	for _, perStream := range []int{0, 10} {
		for _, n := range []int{2_000, 20_000, 200_000} {
			name := fmt.Sprintf("one-stream/subjects=%d", n)
			if perStream > 0 {
				name = fmt.Sprintf("streams-of-%d/subjects=%d", perStream, n)
			}
			subjects := make([]string, n)
			groups := make([]int32, n)
			for i := range subjects {
				if perStream == 0 {
					subjects[i] = fmt.Sprintf("orders.s%d.>", i)
					continue
				}
				g := i / perStream
				groups[i] = int32(g)
				if i%perStream == 0 {
					subjects[i] = fmt.Sprintf("orders.k%d.all.>", g)
				} else {
					subjects[i] = fmt.Sprintf("orders.k%d.e%d.*", g, i%perStream)
				}
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					tr := newSubjectTrie()
					for i, s := range subjects {
						tr.add(s, groups[i], true)
					}
					if err := tr.pairs(context.Background(), func(x, y int32) { b.Fatal("no pair collides") }); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/subject")
			})
		}
	}
}

// TestCollidingSetsMatchesPairwise compares collidingSets with every pair of sets
// compared subject by subject, on random sets with wildcards; a key may be in both.
func TestCollidingSetsMatchesPairwise(t *testing.T) {
	for seed := range uint64(1000) {
		r := rand.New(rand.NewPCG(seed, 7))
		as, bs := map[int][]string{}, map[int][]string{}
		for range r.IntN(8) {
			k := r.IntN(10)
			as[k] = append(as[k], randomPattern(r))
		}
		for range r.IntN(8) {
			k := r.IntN(10)
			bs[k] = append(bs[k], randomPattern(r))
		}
		want := map[[2]int]bool{}
		for i, a := range as {
			for j, b := range bs {
				if _, _, hit := collide(a, b); hit {
					want[[2]int{i, j}] = true
				}
			}
		}
		got, err := collidingSets(context.Background(), as, bs)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("seed %d: as %v bs %v\n(-pairwise +sets):\n%s", seed, as, bs, d)
		}
	}
}
