package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/lock"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// envNames are the environments of the tests below, in declaration order.
var envNames = []string{"dev", "staging", "prod"}

// envServers starts one server per environment, each with its own server name.
func envServers(t *testing.T, names ...string) map[string]*embedded.Server {
	t.Helper()
	out := map[string]*embedded.Server{}
	for _, n := range names {
		out[n] = testsrv.Start(t, func(o *embedded.Options) { o.Name = "srv-" + n })
	}
	return out
}

// applyEnvConfig declares an environment per server, each with its own max_age, and a
// stream with a consumer whose max_age is the variable. extra is added to every
// environment block; lockTTL, when set, enables the apply lock.
func applyEnvConfig(srv map[string]*embedded.Server, names []string, maxAge map[string]string, extra map[string]string, lockTTL string) string {
	var b strings.Builder
	b.WriteString("variable \"max_age\" {\n  default = \"1h\"\n}\n")
	b.WriteString("natsplan {\n  project = \"shop\"\n")
	if lockTTL != "" {
		fmt.Fprintf(&b, "  lock {\n    ttl = %q\n  }\n", lockTTL)
	}
	b.WriteString("}\n")
	for _, n := range names {
		fmt.Fprintf(&b, "environment %q {\n  servers   = %q\n  variables = { max_age = %q }\n%s}\n", n, srv[n].ClientURL(), maxAge[n], extra[n])
	}
	b.WriteString("stream \"ORDERS\" {\n  subjects = [\"orders.>\"]\n  max_age  = var.max_age\n}\n")
	b.WriteString("consumer \"ORDERS\" \"audit\" {\n  ack_policy = \"explicit\"\n}\n")
	return b.String()
}

// maxAgeOf reads stream ORDERS's max_age back from s; 0 when the stream is absent.
func maxAgeOf(t *testing.T, s *embedded.Server) time.Duration {
	t.Helper()
	st, err := jetStream(t, s).Stream(context.Background(), "ORDERS")
	if err == jetstream.ErrStreamNotFound {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.CachedInfo().Config.MaxAge
}

// lockFree reports whether project shop's apply lock is free on s: no key, or a
// deleted one (a released lease).
func lockFree(t *testing.T, s *embedded.Server) bool {
	t.Helper()
	ctx := context.Background()
	kv, err := jetStream(t, s).KeyValue(ctx, lock.DefaultBucket)
	if err == jetstream.ErrBucketNotFound {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = kv.Get(ctx, "shop")
	return err == jetstream.ErrKeyNotFound
}

// nowhere is a URL no server listens on: with environments, NATS_URL is not used.
const nowhere = "nats://127.0.0.1:1"

// TestApplyAcrossEnvironments: one apply, three environments on three servers, each
// with its own value of max_age: every server gets its own value, each environment
// takes and releases its own lock, progress is prefixed by the environment, there is
// one confirmation for all, and the report has a line per environment and one for
// all. A second apply has nothing to do.
func TestApplyAcrossEnvironments(t *testing.T) {
	srv := envServers(t, envNames...)
	ages := map[string]string{"dev": "1h", "staging": "2h", "prod": "3h"}
	dir := writeConfig(t, map[string]string{"shop.hcl": applyEnvConfig(srv, envNames, ages, nil, "5s")})

	// One prompt on a terminal, answered once, for the three environments: "no"
	// changes nothing anywhere and releases every lock, "yes" applies them all.
	env := map[string]string{"NATS_URL": nowhere, "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	var out, errOut bytes.Buffer
	code := run([]string{"apply", dir}, &IOStreams{In: strings.NewReader("no\n"), Out: &out, ErrOut: &errOut, StdinTTY: true},
		func(k string) string { return env[k] })
	if code != exitError || !strings.Contains(errOut.String(), "apply cancelled: nothing was changed") {
		t.Fatalf("apply answered no: exit %d, want 1 and cancelled\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, n := range envNames {
		if maxAgeOf(t, srv[n]) != 0 || !lockFree(t, srv[n]) {
			t.Fatalf("%s: changed, or its lock held, after the apply was cancelled", n)
		}
	}
	out.Reset()
	errOut.Reset()
	code = run([]string{"apply", dir}, &IOStreams{In: strings.NewReader("yes\n"), Out: &out, ErrOut: &errOut, StdinTTY: true},
		func(k string) string { return env[k] })
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if n := strings.Count(errOut.String(), "Do you want to apply these changes?"); n != 1 {
		t.Errorf("asked %d times, want once for all environments:\n%s", n, errOut.String())
	}
	for _, n := range envNames {
		want, _ := time.ParseDuration(ages[n])
		if got := maxAgeOf(t, srv[n]); got != want {
			t.Errorf("%s: ORDERS max_age %s, want %s", n, got, want)
		}
		if !lockFree(t, srv[n]) {
			t.Errorf("%s: the apply lock is still held after apply", n)
		}
		if !strings.Contains(errOut.String(), "["+n+"] Taking the apply lock of project shop") {
			t.Errorf("%s: no prefixed lock line on stderr:\n%s", n, errOut.String())
		}
		if !strings.Contains(errOut.String(), "["+n+"] stream.ORDERS: created") {
			t.Errorf("%s: no prefixed progress on stderr:\n%s", n, errOut.String())
		}
		if !strings.Contains(out.String(), n+": Apply complete: 2 changes done.") {
			t.Errorf("%s: no summary line:\n%s", n, out.String())
		}
	}
	// The sections come in declaration order, before the report.
	last := -1
	for _, n := range envNames {
		i := strings.Index(out.String(), n)
		if i < last {
			t.Errorf("%s's section is out of declaration order:\n%s", n, out.String())
		}
		last = i
	}
	if !strings.HasSuffix(out.String(), "Apply across 3 environments: 3 applied.\n") {
		t.Errorf("no aggregate line last:\n%s", out.String())
	}

	code, again, errAgain := cli(t, nowhere, "apply", "--auto-approve", dir)
	if code != 0 || !strings.Contains(again, "Apply across 3 environments: 0 applied, 3 with no changes.") {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, again, errAgain)
	}

	// --env applies only the selected environments.
	ages2 := map[string]string{"dev": "4h", "staging": "5h", "prod": "6h"}
	dir2 := writeConfig(t, map[string]string{"shop.hcl": applyEnvConfig(srv, envNames, ages2, nil, "")})
	out2 := mustCLI(t, nowhere, "apply", "--auto-approve", "--env", "dev", "--env", "st*", dir2)
	if maxAgeOf(t, srv["dev"]) != 4*time.Hour || maxAgeOf(t, srv["staging"]) != 5*time.Hour || maxAgeOf(t, srv["prod"]) != 3*time.Hour {
		t.Fatalf("--env dev --env st* changed the wrong servers:\n%s", out2)
	}
}

// TestApplyAcrossRefusal: an environment refused while preparing (its target guard
// fails) does not stop the others, and the apply exits 1 naming it; with --fail-fast
// nothing is applied anywhere and every lock taken is released.
func TestApplyAcrossRefusal(t *testing.T) {
	srv := envServers(t, envNames...)
	ages := map[string]string{"dev": "1h", "staging": "2h", "prod": "3h"}
	guard := map[string]string{"staging": "  expect {\n    server = \"elsewhere\"\n  }\n"}
	dir := writeConfig(t, map[string]string{"shop.hcl": applyEnvConfig(srv, envNames, ages, guard, "5s")})

	code, out, errOut := cli(t, nowhere, "apply", "--auto-approve", "--fail-fast", dir)
	if code != exitError {
		t.Fatalf("apply --fail-fast: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, n := range envNames {
		if got := maxAgeOf(t, srv[n]); got != 0 {
			t.Errorf("--fail-fast with staging refused: %s was applied (max_age %s)", n, got)
		}
		if !lockFree(t, srv[n]) {
			t.Errorf("%s: the apply lock is still held after a --fail-fast refusal", n)
		}
	}
	if !strings.Contains(out, "staging: not applied:") || !strings.Contains(out, "elsewhere") ||
		!strings.Contains(out, "prod: not applied (--fail-fast: staging refused") {
		t.Errorf("the report does not say staging was refused and the rest held:\n%s", out)
	}

	code, out, errOut = cli(t, nowhere, "apply", "--auto-approve", dir)
	if code != exitError {
		t.Fatalf("apply: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if maxAgeOf(t, srv["dev"]) != time.Hour || maxAgeOf(t, srv["prod"]) != 3*time.Hour || maxAgeOf(t, srv["staging"]) != 0 {
		t.Errorf("staging refused: want dev and prod applied, staging untouched\n%s", out)
	}
	if !strings.Contains(out, "staging: not applied:") || !strings.Contains(out, "=== environment staging: nats://") || !strings.HasSuffix(out, "Apply across 3 environments: 2 applied, 1 refused.\n") {
		t.Errorf("report:\n%s", out)
	}
	for _, n := range envNames {
		if !lockFree(t, srv[n]) {
			t.Errorf("%s: the apply lock is still held", n)
		}
	}
}

// TestApplySavedMultiPlan: a saved plan of three environments is applied, each part on
// its own server; then a new saved plan where staging's stream changes on the server
// after planning: staging is refused naming what changed, the others are applied, exit
// 1; with --fail-fast nothing is applied.
func TestApplySavedMultiPlan(t *testing.T) {
	srv := envServers(t, envNames...)
	ages := map[string]string{"dev": "1h", "staging": "2h", "prod": "3h"}
	dir := writeConfig(t, map[string]string{"shop.hcl": applyEnvConfig(srv, envNames, ages, nil, "5s")})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	mustCLI(t, nowhere, "plan", "--out", planFile, dir)
	out := mustCLI(t, nowhere, "apply", "--auto-approve", planFile)
	for _, n := range envNames {
		want, _ := time.ParseDuration(ages[n])
		if got := maxAgeOf(t, srv[n]); got != want {
			t.Errorf("%s: max_age %s after the saved plan, want %s\n%s", n, got, want, out)
		}
	}

	ages2 := map[string]string{"dev": "4h", "staging": "5h", "prod": "6h"}
	dir2 := writeConfig(t, map[string]string{"shop.hcl": applyEnvConfig(srv, envNames, ages2, nil, "5s")})
	stale := filepath.Join(t.TempDir(), "plan.json")
	mustCLI(t, nowhere, "plan", "--out", stale, dir2)
	// Someone changes staging's stream between plan and apply.
	editStream("ORDERS", func(c *jetstream.StreamConfig) { c.MaxMsgs = 1000 })(t, jetStream(t, srv["staging"]))
	before := map[string]map[string]string{}
	for _, n := range envNames {
		before[n] = serverState(t, jetStream(t, srv[n]))
	}

	code, out, errOut := cli(t, nowhere, "apply", "--auto-approve", "--fail-fast", stale)
	if code != exitError {
		t.Fatalf("apply --fail-fast of a stale part: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, n := range envNames {
		if got := serverState(t, jetStream(t, srv[n])); fmt.Sprint(got) != fmt.Sprint(before[n]) {
			t.Errorf("--fail-fast with staging stale: %s was changed\n%s", n, out)
		}
		if !lockFree(t, srv[n]) {
			t.Errorf("%s: the apply lock is still held", n)
		}
	}

	code, out, errOut = cli(t, nowhere, "apply", "--auto-approve", stale)
	if code != exitError {
		t.Fatalf("apply of a stale part: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "staging: not applied: refusing the saved plan") || !strings.Contains(out, "stream.ORDERS changed on the server after planning") {
		t.Errorf("staging's refusal does not name it and what changed:\n%s", out)
	}
	if maxAgeOf(t, srv["dev"]) != 4*time.Hour || maxAgeOf(t, srv["prod"]) != 6*time.Hour || maxAgeOf(t, srv["staging"]) != 2*time.Hour {
		t.Errorf("want dev and prod applied and staging left as it was\n%s", out)
	}
}

// TestApplySavedMultiPlanParts: a part whose environment could not be planned (its
// server was down) is refused with that reason while the others are applied; --env
// applies only the selected parts; the connection flags are a usage error with more
// than one part selected, and with exactly one they override its saved connection.
func TestApplySavedMultiPlanParts(t *testing.T) {
	names := []string{"dev", "prod"}
	srv := envServers(t, names...)
	ages := map[string]string{"dev": "1h", "prod": "3h"}
	// staging's server is not there when planning.
	cfg := applyEnvConfig(srv, names, ages, nil, "") + "environment \"staging\" {\n  servers   = \"" + nowhere + "\"\n  variables = { max_age = \"2h\" }\n}\n"
	dir := writeConfig(t, map[string]string{"shop.hcl": cfg})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if code, out, errOut := cli(t, nowhere, "plan", "--out", planFile, dir); code != exitError {
		t.Fatalf("plan with staging down: exit %d, want 1\n%s\n%s", code, out, errOut)
	}

	code, out, errOut := cli(t, nowhere, "apply", "--auto-approve", "--env", "st*", "--env", "prod", planFile)
	if code != exitError {
		t.Fatalf("apply of a part that could not be planned: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "staging: not applied: environment staging could not be planned:") {
		t.Errorf("staging's part is not refused with its reason:\n%s", out)
	}
	if maxAgeOf(t, srv["prod"]) != 3*time.Hour || maxAgeOf(t, srv["dev"]) != 0 {
		t.Errorf("--env 'st*' --env prod: want prod applied and dev untouched\n%s", out)
	}
	if strings.Contains(out, "=== environment dev") || !strings.HasSuffix(out, "Apply across 2 environments: 1 applied, 1 refused.\n") {
		t.Errorf("dev was not selected, yet reported:\n%s", out)
	}

	if code, out, errOut := cli(t, nowhere, "apply", "--auto-approve", "--env", "nope", planFile); code != exitError || !strings.Contains(errOut, "dev, prod, staging") {
		t.Errorf("--env matching no part: exit %d, want 1 listing the parts\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, nowhere, "apply", "--auto-approve", "-s", srv["dev"].ClientURL(), planFile); code != exitError || !strings.Contains(errOut, "--server sets the connection of one environment") {
		t.Errorf("--server with every part selected: exit %d, want a usage error\n%s\n%s", code, out, errOut)
	}
	// dev's saved connection goes nowhere; --server names its server instead.
	other := filepath.Join(t.TempDir(), "plan.json")
	cfg = applyEnvConfig(map[string]*embedded.Server{"dev": srv["dev"]}, []string{"dev"}, ages, nil, "")
	cfg = strings.Replace(cfg, srv["dev"].ClientURL(), nowhere, 1)
	dir = writeConfig(t, map[string]string{"shop.hcl": cfg})
	mustCLI(t, nowhere, "plan", "--out", other, "--env", "dev", "-s", srv["dev"].ClientURL(), dir)
	if code, out, errOut := cli(t, nowhere, "apply", "--auto-approve", other); code != exitError || !strings.Contains(out, "dev: not applied:") {
		t.Errorf("apply on dev's saved connection (nowhere): exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	out = mustCLI(t, nowhere, "apply", "--auto-approve", "--env", "dev", "-s", srv["dev"].ClientURL(), other)
	if maxAgeOf(t, srv["dev"]) != time.Hour {
		t.Errorf("--env dev --server: dev was not applied\n%s", out)
	}
}

// promptWriter is a terminal's stderr that says when apply asks for confirmation.
type promptWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	asked  chan struct{}
	closed bool
}

func (w *promptWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if !w.closed && strings.Contains(w.b.String(), "Do you want to apply these changes?") {
		w.closed = true
		close(w.asked)
	}
	return len(p), nil
}

func (w *promptWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestApplyFailFastWhileExecuting: with --fail-fast, the first change failing in one
// environment stops the others from starting anything new. While apply waits at its
// prompt, a stream that takes NEW's subjects appears on dev (so dev's create fails)
// and prod's server becomes slow (so prod still has changes to start when dev fails).
func TestApplyFailFastWhileExecuting(t *testing.T) {
	srv := envServers(t, "dev", "prod")
	proxy := testsrv.StartProxy(t, srv["prod"].ClientURL(), 0)
	var b strings.Builder
	b.WriteString("natsplan {\n  project = \"shop\"\n}\n")
	fmt.Fprintf(&b, "environment \"dev\" {\n  servers = %q\n}\n", srv["dev"].ClientURL())
	fmt.Fprintf(&b, "environment \"prod\" {\n  servers = %q\n}\n", proxy.URL)
	for _, name := range []string{"NEW", "P1", "P2", "P3"} {
		fmt.Fprintf(&b, "stream %q {\n  subjects = [\"%s.>\"]\n}\n", name, strings.ToLower(name))
	}
	dir := writeConfig(t, map[string]string{"shop.hcl": b.String()})

	in, answer := io.Pipe()
	defer answer.Close()
	var out bytes.Buffer
	errOut := &promptWriter{asked: make(chan struct{})}
	env := map[string]string{"NATS_URL": nowhere, "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"apply", "--fail-fast", "--parallelism", "1", dir}, &IOStreams{In: in, Out: &out, ErrOut: errOut, StdinTTY: true},
			func(k string) string { return env[k] })
	}()
	select {
	case <-errOut.asked:
	case code := <-done:
		t.Fatalf("apply ended (exit %d) without asking\n%s\n%s", code, out.String(), errOut.String())
	}
	if _, err := jetStream(t, srv["dev"]).CreateStream(context.Background(), jetstream.StreamConfig{Name: "TAKEN", Subjects: []string{"new.>"}}); err != nil {
		t.Fatal(err)
	}
	proxy.SetDelay(300 * time.Millisecond)
	if _, err := answer.Write([]byte("yes\n")); err != nil {
		t.Fatal(err)
	}
	code := <-done
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out.String(), errOut.String())
	}
	stored := func(s *embedded.Server) int {
		n := 0
		for name := range serverState(t, jetStream(t, s)) {
			if name != "stream TAKEN" {
				n++
			}
		}
		return n
	}
	if n := stored(srv["dev"]); n != 0 {
		t.Errorf("dev: %d streams created after its first change failed, want none (parallelism 1)", n)
	}
	if n := stored(srv["prod"]); n == 4 {
		t.Errorf("prod applied all 4 changes although dev failed first\n%s", out.String())
	}
	if !strings.Contains(out.String(), "dev: Apply incomplete: 0 done, 1 failed") ||
		!strings.Contains(out.String(), "(--fail-fast: stopped because dev failed).") ||
		!strings.Contains(out.String(), "Apply across 2 environments: 0 applied, 1 failed, 1 stopped.") {
		t.Errorf("report:\n%s\n%s", out.String(), errOut.String())
	}
}

// TestApplyAcrossEnvironmentsOnly: --only cuts every environment's plan, not just the
// first factory's.
func TestApplyAcrossEnvironmentsOnly(t *testing.T) {
	names := []string{"dev", "prod"}
	srv := envServers(t, names...)
	ages := map[string]string{"dev": "1h", "prod": "2h"}
	cfg := applyEnvConfig(srv, names, ages, nil, "") + "stream \"OTHER\" {\n  subjects = [\"other.>\"]\n}\n"
	dir := writeConfig(t, map[string]string{"shop.hcl": cfg})
	out := mustCLI(t, nowhere, "apply", "--auto-approve", "--only", "stream.OTHER", dir)
	for _, n := range names {
		state := serverState(t, jetStream(t, srv[n]))
		if _, ok := state["stream OTHER"]; !ok || len(state) != 1 {
			t.Errorf("%s holds %d objects after --only stream.OTHER, want OTHER alone\n%s", n, len(state), out)
		}
	}
}

// TestApplySavedMultiPlanSecrets: a saved part keeps env("NAME"), never the value, and
// reads it when applied: unset then, that environment alone is refused naming the
// variable. A saved plan of one server takes no --env.
func TestApplySavedMultiPlanSecrets(t *testing.T) {
	names := []string{"dev", "prod"}
	srv := envServers(t, names...)
	ages := map[string]string{"dev": "1h", "prod": "2h"}
	token := map[string]string{"prod": "  token = env(\"PROD_TOKEN\")\n"}
	dir := writeConfig(t, map[string]string{"shop.hcl": applyEnvConfig(srv, names, ages, token, "")})
	planFile := filepath.Join(t.TempDir(), "plan.json")
	const secret = "s3cr3t-t0ken"
	if code, out, errOut := envCLI(t, map[string]string{"PROD_TOKEN": secret}, "plan", "--out", planFile, dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	saved, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(saved), secret) || !strings.Contains(string(saved), "PROD_TOKEN") {
		t.Fatalf("the saved plan holds the token's value, or not its reference:\n%s", saved)
	}
	code, out, errOut := envCLI(t, map[string]string{}, "apply", "--auto-approve", planFile)
	if code != exitError || !strings.Contains(out, "prod: not applied:") || !strings.Contains(out, "PROD_TOKEN") {
		t.Fatalf("apply with PROD_TOKEN unset: exit %d, want prod refused naming it\n%s\n%s", code, out, errOut)
	}
	if maxAgeOf(t, srv["dev"]) != time.Hour || maxAgeOf(t, srv["prod"]) != 0 {
		t.Fatalf("want dev applied and prod untouched\n%s", out)
	}
	code, out, errOut = envCLI(t, map[string]string{"PROD_TOKEN": secret}, "apply", "--auto-approve", "--env", "prod", planFile)
	if code != 0 || maxAgeOf(t, srv["prod"]) != 2*time.Hour || strings.Contains(out+errOut, secret) {
		t.Fatalf("apply --env prod with PROD_TOKEN set: exit %d\n%s\n%s", code, out, errOut)
	}

	single := filepath.Join(t.TempDir(), "plan.json")
	mustCLI(t, srv["dev"].ClientURL(), "plan", "--out", single, writeConfig(t, map[string]string{"shop.hcl": savedNext}))
	if code, out, errOut := cli(t, srv["dev"].ClientURL(), "apply", "--auto-approve", "--env", "dev", single); code != exitError || !strings.Contains(errOut, "saved plan of one server") {
		t.Fatalf("--env with a saved plan of one server: exit %d, want a usage error\n%s\n%s", code, out, errOut)
	}
}

// TestApplyAcrossOneServerGone: each environment waits for its own connection. prod's
// server goes away while apply waits at its prompt: prod stops after its reconnect
// window (twice --timeout), saying so on its line (its create not started, or of
// unknown outcome when it was written before the client saw the connection close: it
// never reached the server either way), while dev is applied; exit 1.
func TestApplyAcrossOneServerGone(t *testing.T) {
	srv := envServers(t, "dev", "prod")
	proxy := testsrv.StartProxy(t, srv["prod"].ClientURL(), 0)
	cfg := "natsplan {\n  project = \"shop\"\n}\n" +
		fmt.Sprintf("environment \"dev\" {\n  servers = %q\n}\n", srv["dev"].ClientURL()) +
		fmt.Sprintf("environment \"prod\" {\n  servers = %q\n}\n", proxy.URL) +
		"stream \"ORDERS\" {\n  subjects = [\"orders.>\"]\n}\n"
	dir := writeConfig(t, map[string]string{"shop.hcl": cfg})

	in, answer := io.Pipe()
	defer answer.Close()
	var out bytes.Buffer
	errOut := &promptWriter{asked: make(chan struct{})}
	env := map[string]string{"NATS_URL": nowhere, "HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"apply", "--timeout", "500ms", dir}, &IOStreams{In: in, Out: &out, ErrOut: errOut, StdinTTY: true},
			func(k string) string { return env[k] })
	}()
	select {
	case <-errOut.asked:
	case code := <-done:
		t.Fatalf("apply ended (exit %d) without asking\n%s\n%s", code, out.String(), errOut.String())
	}
	proxy.Cut()
	if _, err := answer.Write([]byte("yes\n")); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != exitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out.String(), errOut.String())
	}
	if len(serverState(t, jetStream(t, srv["dev"]))) != 1 {
		t.Errorf("dev was not applied\n%s", out.String())
	}
	if len(serverState(t, jetStream(t, srv["prod"]))) != 0 {
		t.Errorf("prod got a stream although its server was gone\n%s", out.String())
	}
	if !strings.Contains(out.String(), "dev: Apply complete: 1 change done.") ||
		!strings.Contains(out.String(), "prod: the server is unreachable") || !strings.Contains(out.String(), "; run plan when it is back") ||
		!strings.Contains(out.String(), "Apply across 2 environments: 1 applied, 1 failed.") {
		t.Errorf("report:\n%s\n%s", out.String(), errOut.String())
	}
}
