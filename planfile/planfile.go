// Package planfile saves and reads plan documents: the JSON a reviewer reads and
// apply runs, with a checksum so that an edited plan is refused. It is the only place
// plans meet the file system; package plan itself never does I/O.
package planfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/natsplan/natsplan/plan"
)

// Marshal returns the plan document as indented JSON with its checksum set, so that
// an edit of a saved plan is detected before it is applied.
func Marshal(p *plan.Plan) ([]byte, error) {
	p.Checksum = ""
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	p.Checksum = checksum(body)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// Subjects stay readable ("orders.>", not "orders.\u003e") for the reviewer; the
	// checksum is over json.Marshal's bytes, which Unmarshal recomputes the same way.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return buf.Bytes(), nil
}

func checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ReadFile reads a saved plan and checks that it is a natsplan plan of a format this
// version understands and that nobody edited it.
func ReadFile(name string) (*plan.Plan, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	return Unmarshal(name, data)
}

// Unmarshal decodes a saved plan document (see ReadFile). A plan of several
// environments is refused with a message that says so: read it with UnmarshalAny.
func Unmarshal(name string, data []byte) (*plan.Plan, error) {
	if isMulti(data) {
		return nil, fmt.Errorf("%s holds the plans of several environments, which this command does not read", name)
	}
	return unmarshalPlan(name, data)
}

func unmarshalPlan(name string, data []byte) (*plan.Plan, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty: a saved plan never is; if it came from an earlier CI step, that step (or the artifact download) failed: write one with `natsplan plan --out FILE`", name)
	}
	var p plan.Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s is not a natsplan plan file (%v): write one with `natsplan plan --out FILE`", name, err)
	}
	if p.FormatVersion == "" {
		return nil, fmt.Errorf("%s is not a natsplan plan file (no format_version): write one with `natsplan plan --out FILE`", name)
	}
	if p.FormatVersion != plan.FormatVersion {
		return nil, fmt.Errorf("%s has plan format %q; this natsplan reads format %q: plan again with this version", name, p.FormatVersion, plan.FormatVersion)
	}
	want := p.Checksum
	p.Checksum = ""
	body, err := json.Marshal(&p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if want == "" || checksum(body) != want {
		return nil, fmt.Errorf("%s was edited after plan wrote it (checksum mismatch): a saved plan is applied exactly as reviewed or not at all; plan again", name)
	}
	p.Checksum = want
	return &p, nil
}

// IsPlanFile reports whether path names a saved plan rather than a configuration file
// or folder: a regular file that is not .hcl and holds a JSON object.
func IsPlanFile(path string) bool {
	if strings.HasSuffix(path, ".hcl") || strings.HasSuffix(path, ".tfvars") {
		return false
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.Read(head)
	return bytes.HasPrefix(bytes.TrimSpace(head[:n]), []byte("{"))
}

// MarshalMulti returns the plan document of several environments as indented JSON.
// Each environment's plan gets its own checksum (of its document without it, as
// Marshal computes one), and the whole document one over everything else, so that an
// edit anywhere is refused.
func MarshalMulti(m *plan.Multi) ([]byte, error) {
	for _, p := range m.Environments {
		p.Checksum = ""
		body, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode plan of environment %s: %w", p.Environment, err)
		}
		p.Checksum = checksum(body)
	}
	m.Checksum = ""
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	m.Checksum = checksum(body)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return buf.Bytes(), nil
}

// ReadFileAny reads a saved plan of one server (the first result) or of several
// environments (the second), checked as ReadFile checks a plan.
func ReadFileAny(name string) (*plan.Plan, *plan.Multi, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("read plan: %w", err)
	}
	return UnmarshalAny(name, data)
}

// UnmarshalAny decodes a saved plan document of one server or of several
// environments (see ReadFileAny).
func UnmarshalAny(name string, data []byte) (*plan.Plan, *plan.Multi, error) {
	if !isMulti(data) {
		p, err := unmarshalPlan(name, data)
		return p, nil, err
	}
	m, err := unmarshalMulti(name, data)
	return nil, m, err
}

// isMulti reports whether data is a JSON object with an "environments" key: the
// document of several environments.
func isMulti(data []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) != nil {
		return false
	}
	_, ok := keys["environments"]
	return ok
}

func unmarshalMulti(name string, data []byte) (*plan.Multi, error) {
	var m plan.Multi
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s is not a natsplan plan file (%v): write one with `natsplan plan --out FILE`", name, err)
	}
	if m.FormatVersion != plan.FormatVersion {
		return nil, fmt.Errorf("%s has plan format %q; this natsplan reads format %q: plan again with this version", name, m.FormatVersion, plan.FormatVersion)
	}
	edited := fmt.Errorf("%s was edited after plan wrote it (checksum mismatch): a saved plan is applied exactly as reviewed or not at all; plan again", name)
	want := m.Checksum
	m.Checksum = ""
	body, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if want == "" || checksum(body) != want {
		return nil, edited
	}
	m.Checksum = want
	for i, p := range m.Environments {
		if p == nil || p.Environment == "" {
			return nil, fmt.Errorf("%s: part %d names no environment: write the file with `natsplan plan --out FILE`", name, i+1)
		}
		if p.FormatVersion != plan.FormatVersion {
			return nil, fmt.Errorf("%s: the plan of environment %s has format %q; this natsplan reads format %q: plan again with this version", name, p.Environment, p.FormatVersion, plan.FormatVersion)
		}
		sum := p.Checksum
		p.Checksum = ""
		body, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if sum == "" || checksum(body) != sum {
			return nil, fmt.Errorf("%s: the plan of environment %s was edited after plan wrote it (checksum mismatch): plan again", name, p.Environment)
		}
		p.Checksum = sum
	}
	return &m, nil
}
