package planfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/plan"
)

func saved(t *testing.T) []byte {
	t.Helper()
	p := &plan.Plan{FormatVersion: plan.FormatVersion, NatsplanVersion: "test",
		Changes:  []*plan.Change{{Address: "stream.ORDERS", Kind: "stream", Name: "ORDERS", Action: plan.ActCreate, Step: 1}},
		Findings: []*finding.Finding{{Code: finding.CodeFanOut, Severity: finding.SevWarning, Address: "consumer.ORDERS.c", Message: "jobs.>"}}}
	b, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b := saved(t)
	if !bytes.Contains(b, []byte(`"jobs.>"`)) {
		t.Errorf("subjects are escaped in the saved plan:\n%s", b)
	}
	name := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsPlanFile(name) {
		t.Errorf("IsPlanFile(%s) = false", name)
	}
	p, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Address != "stream.ORDERS" || len(p.Findings) != 1 || p.Findings[0].Code != finding.CodeFanOut {
		t.Errorf("read back %+v", p)
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	t.Parallel()
	good := string(saved(t))
	for _, tc := range []struct{ name, data, says string }{
		{"empty", "  \n", "is empty"},
		{"not json", "hello", "not a natsplan plan file"},
		{"unknown field", `{"format_version":"1","extra":1}`, "not a natsplan plan file"},
		{"no format", `{"changes":[]}`, "no format_version"},
		{"other format", strings.Replace(good, `"format_version": "1"`, `"format_version": "99"`, 1), `plan format "99"`},
		{"edited", strings.Replace(good, "ORDERS", "ORDERZ", 1), "checksum mismatch"},
	} {
		if _, err := Unmarshal("p.json", []byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.says)
		}
	}
}

func TestIsPlanFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, data string
		want       bool
	}{
		{"plan.json", "{}", true},
		{"plan", " \n{", true},
		{"main.hcl", "{}", false},
		{"vars.tfvars", "{}", false},
		{"config", "stream \"A\" {}", false},
	} {
		name := filepath.Join(dir, tc.name)
		if err := os.WriteFile(name, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := IsPlanFile(name); got != tc.want {
			t.Errorf("IsPlanFile(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if IsPlanFile(dir) || IsPlanFile(filepath.Join(dir, "missing")) {
		t.Error("a folder or a missing file is not a plan file")
	}
}
