package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/schema"
)

// The peers' corpus (test/peers, described in its README.md) is the Terraform JetStream
// provider's and NACK's test configurations in natsplan's language. Every case runs
// through the real CLI against a real server, each in its own account.

const peersDir = "../../test/peers"

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
	case c.expect == "accepted" && c.pending != "":
		return nil, fmt.Errorf("pending: is for refused cases only")
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

// peerServers runs the corpus on two servers, each with one JetStream account per case:
// "plain" (a server's defaults, as NACK's tests and the peers' examples assume) and
// "limited" (max_request_batch 1, the server of the provider's acceptance tests).
type peerServers struct {
	urls map[string]string // case name -> URL with the account's user
}

func startPeerServers(t *testing.T, cases []*peerCase) *peerServers {
	t.Helper()
	ps := &peerServers{urls: map[string]string{}}
	for _, kind := range []string{"plain", "limited"} {
		var b strings.Builder
		fmt.Fprintf(&b, "listen: \"127.0.0.1:-1\"\nserver_name: %s\n", kind)
		fmt.Fprintf(&b, "jetstream {\n  store_dir: %q\n  max_memory_store: 1GB\n  max_file_store: 8GB\n", t.TempDir())
		if kind == "limited" {
			b.WriteString("  limits { max_request_batch: 1 }\n")
		}
		b.WriteString("}\naccounts {\n")
		users := map[string]string{}
		for i, c := range cases {
			if c.server != kind {
				continue
			}
			user := fmt.Sprintf("c%d", i)
			users[c.name] = user
			fmt.Fprintf(&b, "  A%d { jetstream: enabled, users: [{user: %q, password: \"p\"}] }\n", i, user)
		}
		b.WriteString("}\n")
		if len(users) == 0 {
			continue
		}
		conf := filepath.Join(t.TempDir(), kind+".conf")
		if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		opts, err := server.ProcessConfigFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		s := testsrv.StartOptions(t, opts)
		host := strings.TrimPrefix(s.ClientURL(), "nats://")
		for name, user := range users {
			ps.urls[name] = fmt.Sprintf("nats://%s:p@%s", user, host)
		}
	}
	return ps
}

// writeStep writes a step's files and the project block into a fresh folder.
func writeStep(t *testing.T, files []txtar.File) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("project.hcl", []byte("natsplan {\n  project = \"peers\"\n}\n"))
	for _, f := range files {
		write(filepath.Base(f.Name), f.Data)
	}
	return dir
}

// TestPeersAccepted applies every configuration the peers' tests expect the server to
// accept: apply succeeds, plan and drift are empty afterwards, the server holds every
// value the files declare, and every value the peer's test asserts.
func TestPeersAccepted(t *testing.T) {
	runPeers(t, "accepted", func(t *testing.T, c *peerCase, url string) {
		for i := range c.steps {
			applyPeerStep(t, c, url, i)
		}
	})
}

// TestPeersRefusedAtPlan proves that every configuration the server refuses is refused
// by validate or plan (exit 1), never first by apply. Earlier steps must apply cleanly.
// A case whose plan passes fails here, and the message shows what apply then does.
func TestPeersRefusedAtPlan(t *testing.T) {
	runPeers(t, "refused", func(t *testing.T, c *peerCase, url string) {
		last := len(c.steps) - 1
		for i := range last {
			applyPeerStep(t, c, url, i)
		}
		runBefore(t, c, url, last+1)
		dir := writeStep(t, c.steps[last])
		refused := func(by, out string) {
			t.Logf("refused by %s: %s", by, firstError(out))
			if c.pending != "" {
				t.Errorf("refused by %s now: remove the case's pending: line (%s)", by, c.pending)
			}
		}
		if code, out, errOut := cli(t, url, "validate", dir); code == exitError {
			refused("validate", out+errOut)
			return
		}
		code, out, errOut := cli(t, url, "plan", dir)
		if code == exitError {
			refused("plan", out+errOut)
			return
		}
		// Plan let it through: say what the server does with it, so the report shows
		// whether the case is refused at apply or silently changed.
		acode, aout, aerr := cli(t, url, append([]string{"apply", "--auto-approve"}, append(c.flags, dir)...)...)
		what := "apply then succeeded: the server accepted or rewrote it"
		if acode != 0 {
			what = "apply then failed: " + lastLines(aout+aerr, 3)
		}
		t.Errorf("plan accepted a configuration the server refuses (exit %d: %s)\npeer: %s\npending: %s\n%s",
			code, lastLines(out+errOut, 1), strings.Join(c.notes["peer-error"], "; "), c.pending, what)
	})
}

// firstError is the first line of output that reports an error, for the test log.
func firstError(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, "error") {
			if i+1 < len(lines) {
				l += " " + strings.TrimSpace(lines[i+1])
			}
			return strings.TrimSpace(l)
		}
	}
	return lastLines(s, 1)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func runPeers(t *testing.T, expect string, run func(*testing.T, *peerCase, string)) {
	all := loadPeerCases(t)
	var cases []*peerCase
	for _, c := range all {
		if c.expect == expect {
			cases = append(cases, c)
		}
	}
	ps := startPeerServers(t, cases)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run(t, c, ps.urls[c.name])
		})
	}
}

// applyPeerStep applies step i and checks that it converged.
func applyPeerStep(t *testing.T, c *peerCase, url string, i int) {
	t.Helper()
	runBefore(t, c, url, i+1)
	dir := writeStep(t, c.steps[i])
	step := fmt.Sprintf("step %d of %d", i+1, len(c.steps))
	if code, out, errOut := cli(t, url, append([]string{"apply", "--auto-approve"}, append(c.flags, dir)...)...); code != 0 {
		t.Fatalf("%s: apply exit %d\n%s%s", step, code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "plan", "--detailed-exitcode", dir); code != 0 {
		t.Fatalf("%s: plan after apply exit %d, want 0 (no changes)\n%s%s", step, code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "drift", dir); code != 0 {
		t.Fatalf("%s: drift after apply exit %d, want 0\n%s%s", step, code, out, errOut)
	}
	api := peerAPI(t, url)
	rewritten := map[string]bool{}
	if i == len(c.steps)-1 {
		for _, rw := range c.rewrites {
			rewritten[rw.addr+" "+rw.path] = true
			checkPeerAssert(t, api, rw)
		}
		for _, a := range c.asserts {
			checkPeerAssert(t, api, a)
		}
		for _, addr := range c.gone {
			checkGone(t, api, addr)
		}
	}
	checkDeclaredHeld(t, step, dir, api, rewritten)
}

func peerAPI(t *testing.T, url string) *jsapi.Client {
	t.Helper()
	return jsapi.New(peerConn(t, url), "", 5*time.Second)
}

func peerConn(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// checkGone checks that the object at addr (stream.NAME, consumer.STREAM.NAME) is gone.
func checkGone(t *testing.T, api *jsapi.Client, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	parts := strings.Split(addr, ".")
	var found bool
	var err error
	switch {
	case parts[0] == "stream" && len(parts) == 2:
		var info *server.StreamInfo
		info, err = api.StreamInfo(ctx, parts[1])
		found = info != nil
	case parts[0] == "consumer" && len(parts) == 3:
		var info *server.ConsumerInfo
		info, err = api.ConsumerInfo(ctx, parts[1], parts[2])
		found = info != nil
	default:
		t.Fatalf("gone: bad address %q", addr)
	}
	if err != nil || found {
		t.Errorf("gone: %s is still on the server (%v)", addr, err)
	}
}

// runBefore performs the out-of-band actions listed for step (1-based): what the
// peer's test does to the server behind the tool's back.
func runBefore(t *testing.T, c *peerCase, url string, step int) {
	t.Helper()
	if len(c.before[step]) == 0 {
		return
	}
	api := peerAPI(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, action := range c.before[step] {
		f := strings.Fields(action)
		var err error
		switch {
		case len(f) == 2 && f[0] == "delete-stream":
			err = api.DeleteStream(ctx, f[1])
		case len(f) == 3 && f[0] == "delete-consumer":
			err = api.DeleteConsumer(ctx, f[1], f[2])
		case len(f) >= 3 && f[0] == "create-stream":
			_, err = api.CreateStream(ctx, f[1], json.RawMessage(strings.Join(f[2:], " ")))
		case len(f) >= 4 && f[0] == "create-consumer":
			_, err = api.WriteConsumer(ctx, f[1], f[2], json.RawMessage(strings.Join(f[3:], " ")), jsapi.ConsumerCreate)
		case len(f) >= 2 && f[0] == "create-kv":
			// As a client library creates a bucket: nats.go's jetstream package.
			var cfg jetstream.KeyValueConfig
			if err = json.Unmarshal([]byte(strings.Join(f[1:], " ")), &cfg); err == nil {
				var js jetstream.JetStream
				if js, err = jetstream.New(peerConn(t, url)); err == nil {
					_, err = js.CreateKeyValue(ctx, cfg)
				}
			}
		default:
			t.Fatalf("before: unknown action %q", action)
		}
		if err != nil {
			t.Fatalf("before step %d: %s: %v", step, action, err)
		}
	}
}

// checkDeclaredHeld loads the step's files as natsplan does and proves the server holds
// every attribute they set, with the value set: normalisation may fill in what a file
// leaves out, never change what it says.
func checkDeclaredHeld(t *testing.T, step, dir string, api *jsapi.Client, rewritten map[string]bool) {
	t.Helper()
	desired, diags := schema.Load([]string{dir}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("%s: load: %v", step, diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range sortedStreams(desired) {
		info, err := api.StreamInfo(ctx, s.Name)
		if err != nil || info == nil {
			t.Fatalf("%s: %s: not on the server (%v)", step, s.Address(), err)
		}
		cfg := s.Config
		if _, ok := s.Decl.Fields["storage"]; !ok {
			cfg.Storage = info.Config.Storage // the zero StorageType does not marshal
		}
		compareDeclared(t, step, "stream."+s.Name, s.Decl, cfg, info.Config, rewritten)
	}
	for _, c := range sortedConsumers(desired) {
		info, err := api.ConsumerInfo(ctx, c.Stream, c.Name)
		if err != nil || info == nil {
			t.Fatalf("%s: %s: not on the server (%v)", step, c.Address(), err)
		}
		compareDeclared(t, step, c.Address(), c.Decl, c.Config, *info.Config, rewritten)
	}
}

func sortedStreams(m *model.Model) []*model.Stream {
	var out []*model.Stream
	for _, s := range m.Streams {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func sortedConsumers(m *model.Model) []*model.Consumer {
	var out []*model.Consumer
	for _, c := range m.Consumers {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address() < out[j].Address() })
	return out
}

// compareDeclared compares, at every declared leaf path, the declared value with the
// live one (objects and maps by the keys declared).
func compareDeclared(t *testing.T, step, addr string, decl *model.Decl, desired, live any, rewritten map[string]bool) {
	t.Helper()
	if decl == nil {
		t.Fatalf("%s: %s has no declaration", step, addr)
	}
	for _, m := range declaredMismatches(addr, decl, toJSONDoc(t, desired), toJSONDoc(t, live), rewritten) {
		t.Errorf("%s: %s", step, m)
	}
}

// declaredMismatches lists the declared paths whose live value differs. A declared path
// absent from the desired JSON is a zero value the wire omits (deny_delete = false,
// opt_start_seq = 0) or a field natsplan keeps to itself (lifecycle): live must be zero
// or absent there too.
func declaredMismatches(addr string, decl *model.Decl, desired, live any, rewritten map[string]bool) []string {
	var paths []string
	for p := range decl.Fields {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		if isPathPrefix(p, paths) || rewritten[addr+" "+p] {
			continue // a container, whose declared leaves are compared; or a known rewrite
		}
		want, _ := jsonAt(desired, p)
		got, _ := jsonAt(live, p)
		if !jsonSubset(want, got) {
			out = append(out, fmt.Sprintf("%s %s: the file declares %s, the server holds %s", addr, p, jsonString(want), jsonString(got)))
		}
	}
	return out
}

func isPathPrefix(p string, paths []string) bool {
	for _, q := range paths {
		if len(q) > len(p) && strings.HasPrefix(q, p) && (q[len(p)] == '.' || q[len(p)] == '[') {
			return true
		}
	}
	return false
}

func toJSONDoc(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

var pathPart = regexp.MustCompile(`^([^.\[]+)((?:\[\d+\])*)$`)

// jsonAt walks a path of keys and [index]es.
func jsonAt(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		m := pathPart.FindStringSubmatch(part)
		if m == nil {
			return nil, false
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[m[1]]; !ok {
			return nil, false
		}
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			n, _ := strconv.Atoi(idx)
			arr, ok := cur.([]any)
			if !ok || n >= len(arr) {
				return nil, false
			}
			cur = arr[n]
		}
	}
	return cur, true
}

// jsonSubset: every key of an object in want is in got with a matching value; arrays
// match element by element; an empty want matches an absent got.
func jsonSubset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		for k, v := range w {
			if !jsonSubset(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, _ := got.([]any)
		if len(w) != len(g) {
			return false
		}
		for i := range w {
			if !jsonSubset(w[i], g[i]) {
				return false
			}
		}
		return true
	case nil:
		return got == nil || isEmptyJSON(got)
	}
	if isEmptyJSON(want) && got == nil {
		return true
	}
	return reflect.DeepEqual(normNumber(want), normNumber(got))
}

func isEmptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		return x.String() == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func normNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return v
}

func jsonString(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkPeerAssert checks one value the peer's test asserts.
func checkPeerAssert(t *testing.T, api *jsapi.Client, a peerAssert) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var live any
	parts := strings.Split(a.addr, ".")
	switch {
	case parts[0] == "stream" && len(parts) == 2:
		info, err := api.StreamInfo(ctx, parts[1])
		if err != nil || info == nil {
			t.Errorf("assert %s: no stream (%v)", a.line, err)
			return
		}
		live = info.Config
	case parts[0] == "consumer" && len(parts) == 3:
		info, err := api.ConsumerInfo(ctx, parts[1], parts[2])
		if err != nil || info == nil {
			t.Errorf("assert %s: no consumer (%v)", a.line, err)
			return
		}
		live = info.Config
	default:
		t.Errorf("assert %s: bad address", a.line)
		return
	}
	got, _ := jsonAt(toJSONDoc(t, live), a.path)
	want := assertWant(t, a)
	if !jsonSubset(want, got) || (want != nil && !isEmptyJSON(want) && got == nil) {
		t.Errorf("peer assertion %s: the server holds %s", a.line, jsonString(got))
	}
}

// assertWant converts durations written as "10s" into the wire's nanoseconds.
func assertWant(t *testing.T, a peerAssert) any {
	t.Helper()
	field := a.path[strings.LastIndex(a.path, ".")+1:]
	if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i]
	}
	conv := func(v any) any {
		if n, ok := v.(float64); ok {
			return json.Number(strconv.FormatFloat(n, 'f', -1, 64))
		}
		s, ok := v.(string)
		if !ok || !model.IsDurationField(field) {
			return v
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("assert %s: %v", a.line, err)
		}
		return json.Number(strconv.FormatInt(int64(d), 10))
	}
	if arr, ok := a.want.([]any); ok {
		out := make([]any, len(arr))
		for i, v := range arr {
			out[i] = conv(v)
		}
		return out
	}
	return conv(a.want)
}

// TestPeersRewritesReported proves that where the server replaces a declared value even
// in pedantic mode (the case's rewrites: lines), plan reports it at that attribute
// before the step that causes it is applied.
func TestPeersRewritesReported(t *testing.T) {
	all := loadPeerCases(t)
	var cases []*peerCase
	for _, c := range all {
		if len(c.rewrites) > 0 {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Fatal("no case declares a rewrite")
	}
	ps := startPeerServers(t, cases)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := ps.urls[c.name]
			last := len(c.steps) - 1
			for i := range last {
				applyPeerStep(t, c, url, i)
			}
			runBefore(t, c, url, last+1)
			dir := writeStep(t, c.steps[last])
			_, out, errOut := cli(t, url, "plan", "--format", "json", dir)
			var doc struct {
				Findings []struct {
					Address, Message, Severity string
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("plan --format json: %v\n%s%s", err, out, errOut)
			}
			for _, rw := range c.rewrites {
				field := rw.path[strings.LastIndex(rw.path, ".")+1:]
				found := false
				for _, f := range doc.Findings {
					found = found || f.Address == rw.addr && strings.Contains(f.Message, field)
				}
				if !found {
					t.Errorf("plan does not report that the server replaces %s %s (it will hold %s): findings %+v",
						rw.addr, rw.path, jsonString(rw.want), doc.Findings)
				}
			}
		})
	}
}

// TestPeersManifest keeps test/peers/README.md true: its counts and its table of cases
// match the cases' own headers.
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
	type counts struct{ accepted, derived, refused, pending, byRule int }
	got := map[string]*counts{"terraform": {}, "nack": {}}
	for _, c := range cases {
		n := got[c.peer]
		want := []string{c.name, c.expect, ""}
		switch {
		case c.expect == "accepted":
			n.accepted++
			if c.derived != "" {
				n.derived++
				want[2] = "derived"
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
		want := []string{peer, strconv.Itoa(n.accepted), strconv.Itoa(n.derived), strconv.Itoa(n.refused), strconv.Itoa(n.pending), strconv.Itoa(n.byRule)}
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
		want := fmt.Sprintf("| %s | %d | %d of %d | %d of %d |", title, n.accepted+n.refused, n.accepted, n.accepted, n.refused-n.pending, n.refused)
		if !strings.Contains(string(readme), want+"\n") {
			t.Errorf("README.md's comparison lacks the row %s", want)
		}
	}
	for name, row := range rows {
		if strings.HasPrefix(name, "terraform/") || strings.HasPrefix(name, "nack/") {
			t.Errorf("README.md lists %s, which is not a case: %q", name, row)
		}
	}
}

// TestDeclaredMismatches checks the comparison the corpus relies on: it must catch a
// changed value, a zero value the server replaced, and an extra list element, and accept
// server-filled keys beside the declared ones.
func TestDeclaredMismatches(t *testing.T) {
	decl := &model.Decl{Fields: map[string]hcl.Range{
		"ack_wait": {}, "deny_delete": {}, "metadata": {}, "filter_subjects": {}, "placement": {}, "placement.tags": {},
	}}
	desired := `{"ack_wait": 10000000000, "metadata": {"a": "b"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`
	cases := []struct {
		live string
		want int
	}{
		{`{"ack_wait": 10000000000, "metadata": {"a": "b", "natsplan.project": "p"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`, 0},
		{`{"ack_wait": 1000000000, "metadata": {"a": "b"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`, 1},
		{`{"ack_wait": 10000000000, "deny_delete": true, "metadata": {"a": "b"}, "filter_subjects": ["x"], "placement": {"tags": ["t"]}}`, 1},
		{`{"ack_wait": 10000000000, "metadata": {}, "filter_subjects": ["x", "y"], "placement": {"tags": []}}`, 3},
	}
	for i, c := range cases {
		var d, l any
		if err := json.Unmarshal([]byte(desired), &d); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(c.live))
		dec.UseNumber()
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		d = toJSONDoc(t, d)
		if got := declaredMismatches("consumer.S.C", decl, d, l, nil); len(got) != c.want {
			t.Errorf("case %d: %d mismatches, want %d: %q", i, len(got), c.want, got)
		}
	}
}
