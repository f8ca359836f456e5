package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// The peers' corpus (test/peers, described in its README.md) is the Terraform JetStream
// provider's and NACK's test configurations in natsplan's language. Every case runs
// through the real CLI against a real server, each in its own account.

const peersDir = "../../test/peers"

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

// natsplanBlock finds a natsplan block in a case's file.
var natsplanBlock = regexp.MustCompile(`(?m)^natsplan\s*\{`)

// writeStep writes a step's files and the project block into a fresh folder. A case
// that declares its own natsplan block (to state the server's limits) writes
// project = "peers" in it.
func writeStep(t *testing.T, files []txtar.File) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.ContainsFunc(files, func(f txtar.File) bool { return natsplanBlock.Match(f.Data) }) {
		write("project.hcl", []byte("natsplan {\n  project = \"peers\"\n}\n"))
	}
	for _, f := range files {
		write(filepath.Base(f.Name), f.Data)
	}
	return dir
}

// TestPeersRefusedAtPlan proves that every configuration the server refuses is refused
// by validate or plan (exit 1), never first by apply. Earlier steps must apply cleanly.
// A case whose plan passes fails here, and the message shows what apply then does.
func TestPeersRefusedAtPlan(t *testing.T) {
	var mu sync.Mutex
	var pending, regressed []string
	t.Cleanup(func() {
		sort.Strings(pending)
		sort.Strings(regressed)
		if len(pending)+len(regressed) > 0 {
			t.Logf("not refused at plan: %d marked pending %v; %d not marked (a regression) %v",
				len(pending), pending, len(regressed), regressed)
		}
	})
	runPeers(t, func(c *peerCase) bool { return c.expect == "refused" }, func(t *testing.T, c *peerCase, url string) {
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
		mu.Lock()
		if c.pending != "" {
			pending = append(pending, c.name)
		} else {
			regressed = append(regressed, c.name)
		}
		mu.Unlock()
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

// TestPeersAccepted applies every configuration the peers' tests expect the server to
// accept: apply succeeds, plan and drift are empty afterwards, the server holds every
// value the files declare, and every value the peer's test asserts. Cases that declare
// a value the server replaces are TestPeersRewritesReported's.
func TestPeersAccepted(t *testing.T) {
	runPeers(t, func(c *peerCase) bool { return c.expect == "accepted" && len(c.rewrites) == 0 },
		func(t *testing.T, c *peerCase, url string) {
			for i := range c.steps {
				applyPeerStep(t, c, url, i)
			}
		})
}

// TestPeersRewritesReported runs the cases that declare a value the server replaces even
// in pedantic mode (rewrites: lines): plan reports it at the attribute (NP305) before and
// after the apply, apply succeeds, the server holds the rewritten value and everything
// else declared, and plan shows no difference but the rewritten attributes.
func TestPeersRewritesReported(t *testing.T) {
	runPeers(t, func(c *peerCase) bool { return len(c.rewrites) > 0 }, func(t *testing.T, c *peerCase, url string) {
		last := len(c.steps) - 1
		for i := range last {
			applyPeerStep(t, c, url, i)
		}
		runBefore(t, c, url, last+1)
		dir := writeStep(t, c.steps[last])
		_, before := planJSON(t, url, dir)
		checkRewritesReported(t, c, before, "before apply")
		applyStep(t, c, url, last, dir)
		_, after := planJSON(t, url, dir)
		checkRewritesReported(t, c, after, "after apply")
		allowed := map[string]bool{}
		for _, rw := range c.rewrites {
			allowed[rw.addr+" "+rw.path] = true
		}
		for _, ch := range after.Changes {
			if len(ch.Fields) == 0 {
				t.Errorf("after apply, plan still has %s %s", ch.Action, ch.Address)
			}
			for _, f := range ch.Fields {
				if !allowed[ch.Address+" "+f.Path] {
					t.Errorf("after apply, plan still changes %s %s, which is not a rewrite", ch.Address, f.Path)
				}
			}
		}
		checkStepHeld(t, c, url, last, dir)
		if c.pending != "" && !t.Failed() {
			t.Errorf("passes now: remove the case's pending: line (%s)", c.pending)
		}
	})
}

func checkRewritesReported(t *testing.T, c *peerCase, p *plan.Plan, when string) {
	t.Helper()
	for _, rw := range c.rewrites {
		field := rw.path[strings.LastIndex(rw.path, ".")+1:]
		found := false
		for _, f := range p.Findings {
			found = found || f.Address == rw.addr && strings.Contains(f.Message, field)
		}
		if !found {
			t.Errorf("%s, plan does not report that the server replaces %s %s (it holds %s): findings %+v",
				when, rw.addr, rw.path, jsonString(rw.want), p.Findings)
		}
	}
}

// runPeers runs the cases that pick selects, in parallel, each in its own account.
func runPeers(t *testing.T, pick func(*peerCase) bool, run func(*testing.T, *peerCase, string)) {
	var cases []*peerCase
	for _, c := range loadPeerCases(t) {
		if pick(c) {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Fatal("no case to run")
	}
	ps := startPeerServers(t, cases)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run(t, c, ps.urls[c.name])
		})
	}
}

// applyPeerStep applies step i and checks that it converged and holds what it declares.
func applyPeerStep(t *testing.T, c *peerCase, url string, i int) {
	t.Helper()
	runBefore(t, c, url, i+1)
	dir := writeStep(t, c.steps[i])
	applyStep(t, c, url, i, dir)
	step := fmt.Sprintf("step %d of %d", i+1, len(c.steps))
	if code, out, errOut := cli(t, url, "plan", "--detailed-exitcode", dir); code != 0 {
		t.Fatalf("%s: plan after apply exit %d, want 0 (no changes)\n%s%s", step, code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "drift", dir); code != 0 {
		t.Fatalf("%s: drift after apply exit %d, want 0\n%s%s", step, code, out, errOut)
	}
	checkStepHeld(t, c, url, i, dir)
}

func applyStep(t *testing.T, c *peerCase, url string, i int, dir string) {
	t.Helper()
	if code, out, errOut := cli(t, url, append([]string{"apply", "--auto-approve"}, append(c.flags, dir)...)...); code != 0 {
		t.Fatalf("step %d of %d: apply exit %d\n%s%s", i+1, len(c.steps), code, out, errOut)
	}
}

// checkStepHeld checks the server against step i's files and, after the last step, the
// peer's assertions.
func checkStepHeld(t *testing.T, c *peerCase, url string, i int, dir string) {
	t.Helper()
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
	checkDeclaredHeld(t, fmt.Sprintf("step %d of %d", i+1, len(c.steps)), dir, api, rewritten)
}
