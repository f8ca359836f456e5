package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// The cases of the peers' corpus: the .txtar format of test/peers and its manifest.

// peerCase is one .txtar of the corpus.
type peerCase struct {
	name    string // peer/file, without .txtar
	peer    string // "terraform" or "nack"
	source  string
	derived string // set when the case is not the peer's configuration as it is
	expect  string // "accepted" or "refused"
	pending string // why a refused case is not refused by plan yet
	server  string // "plain", or "limited": max_request_batch 1 as in the provider's tests
	// refusedBy is "server" (the server refuses it, so plan must) or "natsplan" (the
	// server takes it; a natsplan rule refuses it on purpose).
	refusedBy string
	// rewrites are declared values the server replaces even in pedantic mode: the
	// server must hold the rewritten value, and plan must say so at the attribute.
	rewrites []peerAssert
	asserts  []peerAssert
	steps    [][]txtar.File   // one configuration per step, applied in order
	before   map[int][]string // out-of-band actions before step i (1-based)
	flags    []string         // extra apply flags (--allow-delete)
	gone     []string         // addresses that must not exist after the last step
	notes    map[string][]string
}

// peerAssert is a value the peer's test asserts the server holds after apply.
type peerAssert struct {
	addr string // "stream.NAME" or "consumer.STREAM.NAME"
	path string // JSON path into the config: "mirror.subject_transforms[0].src"
	want any    // JSON value; a duration field's value may be written "10s"
	line string
}

var peerHeader = regexp.MustCompile(`^([a-z-]+):\s*(.*)$`)

func loadPeerCases(t *testing.T) []*peerCase {
	t.Helper()
	var out []*peerCase
	for _, peer := range []string{"terraform", "nack"} {
		paths, err := filepath.Glob(filepath.Join(peersDir, peer, "*.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			t.Fatalf("no cases in %s/%s", peersDir, peer)
		}
		for _, p := range paths {
			c, err := parsePeerCase(peer, p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out = append(out, c)
		}
	}
	return out
}

func parsePeerCase(peer, path string) (*peerCase, error) {
	a, err := txtar.ParseFile(path)
	if err != nil {
		return nil, err
	}
	c := &peerCase{
		name: peer + "/" + strings.TrimSuffix(filepath.Base(path), ".txtar"), peer: peer,
		before: map[int][]string{}, notes: map[string][]string{}, server: "plain", refusedBy: "server",
	}
	for i, line := range strings.Split(string(a.Comment), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := peerHeader.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: want `key: value`, got %q", i+1, line)
		}
		key, val := m[1], m[2]
		switch key {
		case "source":
			c.source = val
		case "derived":
			c.derived = val
		case "expect":
			c.expect = val
		case "pending":
			c.pending = val
		case "refused-by":
			if val != "server" && val != "natsplan" {
				return nil, fmt.Errorf("line %d: refused-by: %q, want server or natsplan", i+1, val)
			}
			c.refusedBy = val
		case "rewrites":
			rw, err := parsePeerAssert(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			c.rewrites = append(c.rewrites, rw)
		case "server":
			if val != "plain" && val != "limited" {
				return nil, fmt.Errorf("line %d: server: %q, want plain or limited", i+1, val)
			}
			c.server = val
		case "assert":
			as, err := parsePeerAssert(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			c.asserts = append(c.asserts, as)
		case "before":
			n, action, ok := strings.Cut(val, " ")
			step, err := strconv.Atoi(n)
			if !ok || err != nil || step < 1 {
				return nil, fmt.Errorf("line %d: want `before: STEP ACTION ARGS`, STEP from 1", i+1)
			}
			c.before[step] = append(c.before[step], action)
		case "flags":
			for _, f := range strings.Fields(val) {
				if f != "--allow-delete" {
					return nil, fmt.Errorf("line %d: flags: only --allow-delete, got %q", i+1, f)
				}
				c.flags = append(c.flags, f)
			}
		case "gone":
			c.gone = append(c.gone, val)
		case "map", "gap", "note", "peer-error":
			c.notes[key] = append(c.notes[key], val)
		default:
			return nil, fmt.Errorf("line %d: unknown key %q", i+1, key)
		}
	}
	switch {
	case c.source == "":
		return nil, fmt.Errorf("no source: line")
	case c.expect != "accepted" && c.expect != "refused":
		return nil, fmt.Errorf("expect: %q, want accepted or refused", c.expect)
	case c.expect == "accepted" && c.pending != "" && len(c.rewrites) == 0:
		return nil, fmt.Errorf("pending: is for refused cases and rewrites")
	case c.expect == "refused" && len(c.notes["peer-error"]) == 0:
		return nil, fmt.Errorf("a refused case quotes the refusal (peer-error:)")
	case c.expect == "refused" && (len(c.asserts) > 0 || len(c.rewrites) > 0 || len(c.gone) > 0):
		return nil, fmt.Errorf("a refused case asserts nothing on the server")
	case c.refusedBy == "natsplan" && (c.expect != "refused" || c.pending != ""):
		return nil, fmt.Errorf("refused-by: natsplan is for refused cases that plan refuses already")
	}
	// Files are NAME.hcl (one step) or N/NAME.hcl (steps 1, 2, ...).
	steps := map[int][]txtar.File{}
	for _, f := range a.Files {
		step := 1
		if dir, _, ok := strings.Cut(f.Name, "/"); ok {
			n, err := strconv.Atoi(dir)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("file %s: a step folder is a number from 1", f.Name)
			}
			step = n
		}
		steps[step] = append(steps[step], f)
	}
	for i := 1; i <= len(steps); i++ {
		if len(steps[i]) == 0 {
			return nil, fmt.Errorf("step %d has no files", i)
		}
		c.steps = append(c.steps, steps[i])
	}
	if len(c.steps) == 0 {
		return nil, fmt.Errorf("no files")
	}
	for step := range c.before {
		if step > len(c.steps) {
			return nil, fmt.Errorf("before: step %d, the case has %d steps", step, len(c.steps))
		}
	}
	return c, nil
}

// parsePeerAssert reads `ADDRESS PATH = JSON`.
func parsePeerAssert(s string) (peerAssert, error) {
	lhs, rhs, ok := strings.Cut(s, " = ")
	f := strings.Fields(lhs)
	if !ok || len(f) != 2 {
		return peerAssert{}, fmt.Errorf("assert: want `ADDRESS PATH = JSON`, got %q", s)
	}
	a := peerAssert{addr: f[0], path: f[1], line: s}
	if !strings.HasPrefix(a.addr, "stream.") && !strings.HasPrefix(a.addr, "consumer.") {
		return a, fmt.Errorf("assert: address %q is not stream.NAME or consumer.STREAM.NAME", a.addr)
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(rhs)), &a.want); err != nil {
		return a, fmt.Errorf("assert: value %q: %v", rhs, err)
	}
	return a, nil
}

// TestPeersManifest keeps test/peers/README.md true (its counts and its table of cases
// match the cases' own headers) and the cases' files formatted.
func TestPeersManifest(t *testing.T) {
	cases := loadPeerCases(t)
	b, err := os.ReadFile(filepath.Join(peersDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.Trim(strings.TrimSpace(c), "`"))
		}
		rows[cells[0]] = cells
	}
	type counts struct{ accepted, derived, acceptedPending, refused, pending, byRule int }
	got := map[string]*counts{"terraform": {}, "nack": {}}
	for _, c := range cases {
		n := got[c.peer]
		want := []string{c.name, c.expect, ""}
		switch {
		case c.expect == "accepted":
			n.accepted++
			switch {
			case c.derived != "":
				n.derived++
				want[2] = "derived"
			case c.pending != "":
				n.acceptedPending++
				want[2] = "pending"
			}
		case c.pending != "":
			n.refused++
			n.pending++
			want[2] = "pending"
		case c.refusedBy == "natsplan":
			n.refused++
			n.byRule++
			want[2] = "natsplan rule"
		default:
			n.refused++
		}
		row := rows[c.name]
		if len(row) < 3 || row[1] != want[1] || row[2] != want[2] {
			t.Errorf("README.md: want the row | %s | %s | %s | ..., got %q", want[0], want[1], want[2], row)
		}
		delete(rows, c.name)
	}
	for peer, n := range got {
		want := []string{peer, strconv.Itoa(n.accepted), strconv.Itoa(n.derived), strconv.Itoa(n.refused), strconv.Itoa(n.pending + n.acceptedPending), strconv.Itoa(n.byRule)}
		if row := rows[peer]; !reflect.DeepEqual(row, want) {
			t.Errorf("README.md counts: want | %s |, got %q", strings.Join(want, " | "), row)
		}
		delete(rows, peer)
	}
	// The project's README cites the same counts.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for peer, title := range map[string]string{"terraform": "Terraform provider", "nack": "NACK"} {
		n := got[peer]
		want := fmt.Sprintf("| %s | %d | %d of %d | %d of %d |", title, n.accepted+n.refused, n.accepted-n.acceptedPending, n.accepted, n.refused-n.pending, n.refused)
		if !strings.Contains(string(readme), want+"\n") {
			t.Errorf("README.md's comparison lacks the row %s", want)
		}
	}
	// Every file is in natsplan's canonical format, as a user's would be.
	for _, c := range cases {
		for i, files := range c.steps {
			if code, out, errOut := cli(t, "", "fmt", "--check", "--diff", writeStep(t, files)); code != 0 {
				t.Errorf("%s step %d is not formatted (natsplan fmt):\n%s%s", c.name, i+1, out, errOut)
			}
		}
	}
	for name, row := range rows {
		if strings.HasPrefix(name, "terraform/") || strings.HasPrefix(name, "nack/") {
			t.Errorf("README.md lists %s, which is not a case: %q", name, row)
		}
	}
}
