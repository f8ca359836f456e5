package schema

import (
	"context"
	"os"
	"testing"
)

// FuzzLoad decodes arbitrary files: whatever the input, Load must return
// diagnostics, never panic, and every error must say what is wrong. Run it with a
// short minimisation time, or the first interesting inputs stall the workers:
//
//	go test ./schema -run '^$' -fuzz FuzzLoad -fuzztime 30s -fuzzminimizetime 1s
func FuzzLoad(f *testing.F) {
	for _, p := range testConfigs(f) {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, diags := NewLoader().load(context.Background(), []string{"fuzz.hcl"}, [][]byte{src}, Vars{})
		for _, d := range diags {
			if d.Summary == "" {
				t.Errorf("diagnostic without a summary: %+v", d)
			}
		}
		if out, diags := Format(src, "fuzz.hcl"); !diags.HasErrors() {
			again, _ := Format(out, "fuzz.hcl")
			if string(again) != string(out) {
				t.Errorf("Format is not idempotent:\n%q\n%q", out, again)
			}
		}
	})
}
