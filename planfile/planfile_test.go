package planfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
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

func savedMulti(t *testing.T) []byte {
	t.Helper()
	m := &plan.Multi{FormatVersion: plan.FormatVersion, NatsplanVersion: "test"}
	for _, env := range []string{"prod", "staging"} {
		m.Environments = append(m.Environments, &plan.Plan{FormatVersion: plan.FormatVersion, NatsplanVersion: "test", Environment: env,
			Connection: &model.Connection{Servers: model.Setting{Literal: "nats://" + env + ":4222"}, Password: model.Setting{Env: "PW_" + env}},
			Changes:    []*plan.Change{{Address: "stream.ORDERS", Kind: "stream", Name: "ORDERS", Action: plan.ActCreate, Step: 1}}})
	}
	m.Environments = append(m.Environments, &plan.Plan{FormatVersion: plan.FormatVersion, NatsplanVersion: "test", Environment: "dr", Error: "no server at nats://dr:4222"})
	b, err := MarshalMulti(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMultiRoundTrip(t *testing.T) {
	t.Parallel()
	b := savedMulti(t)
	if n := strings.Count(string(b), `"checksum": "sha256:`); n != 4 {
		t.Errorf("%d checksums in the saved multi plan, want one per environment and one for the whole (4):\n%s", n, b)
	}
	name := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsPlanFile(name) {
		t.Errorf("IsPlanFile(%s) = false for a multi plan", name)
	}
	p, m, err := ReadFileAny(name)
	if err != nil || p != nil || m == nil {
		t.Fatalf("ReadFileAny: plan %v, multi %v, err %v", p, m, err)
	}
	var names []string
	for _, e := range m.Environments {
		names = append(names, e.Environment)
	}
	if strings.Join(names, ",") != "prod,staging,dr" {
		t.Errorf("environments read back in order %v", names)
	}
	if c := m.Environments[0].Connection; c == nil || c.Password.Env != "PW_prod" || c.Servers.Literal != "nats://prod:4222" {
		t.Errorf("the connection of prod read back as %+v", c)
	}
	if m.Environments[2].Error == "" {
		t.Error("the failed environment lost its error")
	}
	// A single plan reads back as one, through the same function.
	p, m, err = UnmarshalAny("one.json", saved(t))
	if err != nil || p == nil || m != nil {
		t.Fatalf("UnmarshalAny of a single plan: plan %v, multi %v, err %v", p, m, err)
	}
	// The reader of single plans refuses a multi plan, saying what it is.
	if _, err := Unmarshal("plan.json", b); err == nil || !strings.Contains(err.Error(), "several environments") {
		t.Errorf("Unmarshal of a multi plan: %v", err)
	}
}

func TestMultiRefuses(t *testing.T) {
	t.Parallel()
	good := string(savedMulti(t))
	// An edited part with its own checksum recomputed: the whole document's checksum
	// still refuses it.
	var m plan.Multi
	if err := json.Unmarshal([]byte(good), &m); err != nil {
		t.Fatal(err)
	}
	m.Environments[1].Changes[0].Name = "ORDERZ"
	m.Environments[1].Checksum = ""
	body, _ := json.Marshal(m.Environments[1])
	m.Environments[1].Checksum = checksum(body)
	partOK, _ := json.Marshal(&m)
	// A part edited with the whole checksum recomputed: the part's checksum refuses it.
	m2 := plan.Multi{}
	if err := json.Unmarshal([]byte(good), &m2); err != nil {
		t.Fatal(err)
	}
	m2.Environments[0].Changes[0].Name = "ORDERZ"
	m2.Checksum = ""
	whole, _ := json.Marshal(&m2)
	m2.Checksum = checksum(whole)
	wholeOK, _ := json.Marshal(&m2)
	for _, tc := range []struct{ name, data, says string }{
		{"edited", strings.Replace(good, "nats://prod:4222", "nats://evil:4222", 1), "checksum mismatch"},
		{"part edited, its checksum redone", string(partOK), "checksum mismatch"},
		{"part edited, whole checksum redone", string(wholeOK), "the plan of environment prod was edited"},
		{"other format", strings.Replace(good, `"format_version": "1"`, `"format_version": "99"`, 1), `plan format "99"`},
		{"unknown field", `{"format_version":"1","environments":[],"colour":1}`, "not a natsplan plan file"},
	} {
		if _, _, err := UnmarshalAny("p.json", []byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.says)
		}
	}
}
