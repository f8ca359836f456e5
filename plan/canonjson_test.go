package plan

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// canonSeeds are documents whose canonical form is hard to get right byte-wise.
func canonSeeds(t testing.TB) [][]byte {
	docs := []any{
		filledStream(),
		filled[server.ConsumerConfig](),
		map[string]any{"project": "p", "streams": map[string]any{"B": filledStream(), "A": server.StreamConfig{Name: "A", Storage: server.FileStorage}}},
		map[string]any{"metadata": map[string]any{"_nats.x": "1"}, "b": []any{map[string]any{"metadata": map[string]string{"_nats.y": "2", "k": "v"}}}},
		map[string]any{"metadata": map[string]any{"k": map[string]any{"metadata": map[string]string{"_nats.z": "kept"}}}},
		map[string]any{"metadata": []any{map[string]any{"metadata": map[string]string{"_nats.z": "dropped"}}}},
		map[string]any{"metadata": "not an object", "Metadata": map[string]string{"_nats.q": "kept"}},
		map[string]string{"<&>": "\u2028", "é": "\x00\x7f", "\"\\": "a\tb", "bad": "\xff"},
		[]any{1.5e300, math.Copysign(0, -1), int64(-1 << 62), uint64(1<<64 - 1), nil, true, false, ""},
	}
	var out [][]byte
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return append(out,
		[]byte(` { "b" : [ 1 , {"z":1, "a" : "\u0041\/"} ] , "a":null } `),
		[]byte(`{"a":1,"a":2}`),
		[]byte(`{"metadata":{}}`),
		[]byte(`"\ud800"`),
		[]byte(`1E+2`),
	)
}

// TestCanonicalJSONMatchesGeneric checks the byte-wise canonical form against decoding
// and re-encoding, on documents chosen to break it.
func TestCanonicalJSONMatchesGeneric(t *testing.T) {
	for i, in := range canonSeeds(t) {
		checkCanonical(t, in)
		// Configs and plan documents must take the fast path: that is its point.
		if _, err := canonicalJSON(in); i < 3 && err != nil {
			t.Errorf("seed %d fell back to the generic path: %v", i, err)
		}
	}
}

// FuzzCanonicalJSON checks the byte-wise canonical form against decoding and
// re-encoding, on any valid JSON.
func FuzzCanonicalJSON(f *testing.F) {
	for _, in := range canonSeeds(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if json.Valid(in) {
			checkCanonical(t, in)
		}
	})
}

func checkCanonical(t *testing.T, in []byte) {
	t.Helper()
	want, werr := genericCanonical(in)
	got, gerr := canonicalJSON(in)
	if gerr != nil {
		return // Hash takes the generic path
	}
	if werr != nil || string(got) != string(want) {
		t.Errorf("canonical form of %q:\n got %s\nwant %s (%v)", in, got, want, werr)
	}
}
