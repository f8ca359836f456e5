package finding

import (
	"encoding/json"
	"testing"
)

func TestErrors(t *testing.T) {
	t.Parallel()
	e1 := &Finding{Code: CodeDataLoss, Severity: SevError}
	w := &Finding{Code: CodeFanOut, Severity: SevWarning}
	e2 := &Finding{Code: CodeOffline, Severity: SevError}
	for _, tc := range []struct {
		name string
		in   []*Finding
		want []*Finding
	}{
		{"none", nil, nil},
		{"warnings only", []*Finding{w}, nil},
		{"mixed keeps order", []*Finding{e1, w, e2}, []*Finding{e1, e2}},
	} {
		got := Errors(tc.in)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: got %d errors, want %d", tc.name, len(got), len(tc.want))
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: error %d is %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
		if HasErrors(tc.in) != (len(tc.want) > 0) {
			t.Errorf("%s: HasErrors = %v", tc.name, HasErrors(tc.in))
		}
	}
}

// TestJSON pins the wire form plan files and --format json carry: typed codes and
// severities encode as the plain strings they were.
func TestJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(&Finding{Code: CodeDataLoss, Severity: SevError, Address: "stream.A", Message: "m", Overridable: OverrideDataLoss})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"NP301","severity":"error","address":"stream.A","message":"m","overridable":"allow-data-loss"}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}
