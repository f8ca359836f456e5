package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// envFiles is a configuration with one environment block per name and URL (in that
// order), declaring the stream Q and its consumer pool.
func envFiles(t *testing.T, envs ...[2]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("natsplan {\n  project = \"shop\"\n}\n\n")
	for _, e := range envs {
		fmt.Fprintf(&b, "environment %q {\n  servers = %q\n}\n\n", e[0], e[1])
	}
	b.WriteString("stream \"Q\" {\n  subjects = [\"q.>\"]\n}\n\nconsumer \"Q\" \"pool\" {\n  ack_policy = \"explicit\"\n}\n")
	return writeConfig(t, map[string]string{"shop.hcl": b.String()})
}

// withPool creates the stream Q and the consumer pool on s, as the files declare them.
func withPool(t *testing.T, s *embedded.Server) jetstream.JetStream {
	t.Helper()
	js := jetStream(t, s)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "Q", Subjects: []string{"q.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "Q", jetstream.ConsumerConfig{Durable: "pool", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	return js
}

// section is the text of environment name's section of a multi-environment status.
func section(t *testing.T, out, name string) string {
	t.Helper()
	head := fmt.Sprintf("=== environment %s: ", name)
	i := strings.Index(out, head)
	if i < 0 {
		t.Fatalf("no section for %s:\n%s", name, out)
	}
	rest := out[i+len(head):]
	if j := strings.Index(rest, "\n=== environment "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestStatusEnvironments: status reads two environments, each its own server. A
// condition in one (messages nobody pulls, at --idle 0s) exits 2 and is reported in
// that environment's section, the other healthy; one more environment whose server is
// not there is shown failed while the others are still reported, exit 1, in text,
// JSON and Prometheus alike. --env narrows to one.
func TestStatusEnvironments(t *testing.T) {
	prod, staging := testsrv.Start(t), testsrv.Start(t)
	withPool(t, prod)
	js := withPool(t, staging)
	for i := range 3 {
		if _, err := js.Publish(context.Background(), fmt.Sprintf("q.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := envFiles(t, [2]string{"prod", prod.ClientURL()}, [2]string{"staging", staging.ClientURL()})

	code, out, errOut := cli(t, "", "status", "--idle", "0s", dir)
	if code != exitChanges {
		t.Fatalf("status exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	if strings.Index(out, "=== environment prod:") > strings.Index(out, "=== environment staging:") {
		t.Errorf("sections not in declaration order:\n%s", out)
	}
	p, s := section(t, out, "prod"), section(t, out, "staging")
	if !strings.HasPrefix(p, prod.ClientURL()) || !strings.HasPrefix(s, staging.ClientURL()) {
		t.Errorf("a section is not headed by its target:\n%s", out)
	}
	if !strings.Contains(p, "Healthy: no condition holds on 1 consumer(s).") || strings.Contains(p, "NP504") {
		t.Errorf("prod is not healthy:\n%s", p)
	}
	if !strings.Contains(s, "error NP504") || !strings.Contains(s, "consumer.Q.pool") || strings.Contains(s, "Healthy") {
		t.Errorf("staging's section does not name NP504 on consumer.Q.pool:\n%s", s)
	}
	if !strings.Contains(out, "Environments (2): prod: healthy; staging: 1 condition(s), 0 missing consumer(s).") {
		t.Errorf("no summary line:\n%s", out)
	}

	code, out, _ = cli(t, "", "status", "--idle", "0s", "--env", "prod", dir)
	if code != 0 || strings.Contains(out, "staging") || !strings.Contains(out, "=== environment prod: ") {
		t.Errorf("status --env prod: exit %d, want 0 and prod alone:\n%s", code, out)
	}

	down := closedURL(t)
	dir = envFiles(t, [2]string{"prod", prod.ClientURL()}, [2]string{"dev", down}, [2]string{"staging", staging.ClientURL()})
	code, out, errOut = cli(t, "", "status", "--idle", "0s", dir)
	if code != exitError {
		t.Fatalf("status with an unreachable environment: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if d := section(t, out, "dev"); !strings.HasPrefix(d, "not reached\nError: ") {
		t.Errorf("dev's section does not say why it failed:\n%s", d)
	}
	if !strings.Contains(section(t, out, "staging"), "error NP504") || !strings.Contains(section(t, out, "prod"), "Healthy") {
		t.Errorf("the reachable environments are not reported:\n%s", out)
	}
	if !strings.Contains(errOut, "dev") {
		t.Errorf("stderr does not name the failed environment:\n%s", errOut)
	}

	code, out, errOut = cli(t, "", "status", "--idle", "0s", "--format", "json", dir)
	if code != exitError {
		t.Fatalf("status --format json: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		Environments []struct {
			Environment string
			Error       string
			Target      *struct{ URL string }
			Findings    []struct{ Code, Address string }
			Consumers   []struct{ Address string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	var names []string
	for _, e := range doc.Environments {
		names = append(names, e.Environment)
	}
	if strings.Join(names, ",") != "prod,dev,staging" {
		t.Fatalf("environments %v, want prod,dev,staging", names)
	}
	pj, dj, sj := doc.Environments[0], doc.Environments[1], doc.Environments[2]
	if pj.Error != "" || len(pj.Findings) != 0 || len(pj.Consumers) != 1 || pj.Target == nil || pj.Target.URL != prod.ClientURL() {
		t.Errorf("prod: %+v", pj)
	}
	if dj.Error == "" || dj.Consumers != nil {
		t.Errorf("dev: %+v, want an error and no report", dj)
	}
	if sj.Error != "" || len(sj.Findings) != 1 || sj.Findings[0].Code != "NP504" || sj.Findings[0].Address != "consumer.Q.pool" {
		t.Errorf("staging: %+v", sj)
	}

	code, out, _ = cli(t, "", "status", "--idle", "0s", "--format", "prometheus", dir)
	if code != exitError {
		t.Fatalf("status --format prometheus: exit %d, want 1\n%s", code, out)
	}
	series, err := testkit.ParseExposition(out)
	if err != nil {
		t.Fatalf("invalid exposition: %v\n%s", err, out)
	}
	got := map[string]float64{}
	for _, s := range series {
		env, ok := s.Label("environment")
		if !ok {
			t.Errorf("%s%v has no environment label", s.Name, s.Labels)
		}
		code, _ := s.Label("code")
		got[fmt.Sprintf("%s %s %s", s.Name, env, code)] = s.Value
	}
	for k, v := range map[string]float64{
		"natsplan_environment_up prod ": 1, "natsplan_environment_up dev ": 0, "natsplan_environment_up staging ": 1,
		"natsplan_condition staging NP504": 1, "natsplan_condition prod NP504": 0,
		"natsplan_consumer_pending staging ": 3, "natsplan_consumer_pending prod ": 0,
	} {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v\n%s", k, g, ok, v, out)
		}
	}
	if _, ok := got["natsplan_consumer_up dev "]; ok {
		t.Errorf("the unreachable environment has consumer series:\n%s", out)
	}
}

// TestImportEnvironments: import of two environments writes each server's objects
// under its own heading, each document valid HCL; --out takes one environment only;
// an environment that can not be reached is named and exits 1 after the others.
func TestImportEnvironments(t *testing.T) {
	prod, staging := testsrv.Start(t), testsrv.Start(t)
	ctx := context.Background()
	if _, err := jetStream(t, prod).CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, MaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := jetStream(t, staging).CreateStream(ctx, jetstream.StreamConfig{Name: "LOGS", Subjects: []string{"logs.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	dir := writeConfig(t, map[string]string{"envs.hcl": fmt.Sprintf(`natsplan {
  project = "shop"
}

environment "prod" {
  servers = %q
}

environment "staging" {
  servers = %q
}
`, prod.ClientURL(), staging.ClientURL())})

	out := mustCLI(t, "", "import", "--project", "shop", dir)
	parts := strings.Split(out, "# environment ")
	if len(parts) != 3 || parts[0] != "" {
		t.Fatalf("want two documents each headed # environment:\n%s", out)
	}
	for i, want := range []struct{ name, url, has, hasnt string }{
		{"prod", prod.ClientURL(), `stream "ORDERS"`, "LOGS"},
		{"staging", staging.ClientURL(), `stream "LOGS"`, "ORDERS"},
	} {
		// The documents are separated by a blank line.
		doc := strings.TrimRight("# environment "+parts[i+1], "\n") + "\n"
		head := fmt.Sprintf("# environment %q (%s, server ", want.name, want.url)
		if !strings.HasPrefix(doc, head) {
			t.Errorf("document %d is not headed %q:\n%s", i, head, doc)
		}
		if !strings.Contains(doc, want.has) || strings.Contains(doc, want.hasnt) {
			t.Errorf("%s's document lacks %s or holds %s:\n%s", want.name, want.has, want.hasnt, doc)
		}
		file := filepath.Join(t.TempDir(), want.name+".hcl")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, o, e := cli(t, "", "fmt", "--check", "--diff", file); code != 0 {
			t.Errorf("%s's document is not formatted HCL: exit %d\n%s\n%s", want.name, code, o, e)
		}
		if _, p := planJSON(t, want.url, filepath.Dir(file)); p.HasErrors() || len(p.Changes) != 1 || p.Changes[0].Action != "adopt" {
			t.Errorf("%s's document does not plan as one adoption against its server: %+v", want.name, p.Changes)
		}
	}

	file := filepath.Join(t.TempDir(), "out.hcl")
	code, o, e := cli(t, "", "import", "--out", file, dir)
	if code != exitError || !strings.Contains(e, "--env") || o != "" {
		t.Errorf("--out with two environments: exit %d, want 1 and a message naming --env\n%s\n%s", code, o, e)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("--out with two environments wrote the file")
	}
	mustCLI(t, "", "import", "--project", "shop", "--env", "staging", "--out", file, dir)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "natsplan {") || !strings.Contains(string(data), `stream "LOGS"`) || strings.Contains(string(data), "ORDERS") {
		t.Errorf("--env staging --out: want staging's HCL alone, as without environments:\n%s", data)
	}

	dir = writeConfig(t, map[string]string{"envs.hcl": fmt.Sprintf(`natsplan {
  project = "shop"
}

environment "dev" {
  servers = %q
}

environment "empty" {
  servers = %q
}

environment "prod" {
  servers = %q
}
`, closedURL(t), testsrv.Start(t).ClientURL(), prod.ClientURL())})
	code, o, e = cli(t, "", "import", dir)
	if code != exitError || !strings.Contains(o, `stream "ORDERS"`) || !strings.Contains(o, "# not imported: ") || !strings.Contains(e, "environment dev: ") {
		t.Errorf("import with an unreachable environment: exit %d, want 1 with prod's HCL and dev named\n%s\n%s", code, o, e)
	}
	// A server with nothing to import is one comment: the next heading still starts a line.
	if !strings.Contains(o, "\n\n# environment \"empty\" (") || !strings.Contains(o, "\n\n# environment \"prod\" (") {
		t.Errorf("headings do not start their own paragraphs:\n%s", o)
	}
}

// countWriter collects output and calls done once when marker has been written n times.
type countWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	n      int
	done   func()
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.done != nil && strings.Count(w.buf.String(), w.marker) >= w.n {
		w.done()
		w.done = nil
	}
	return n, err
}

func (w *countWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestStatusEnvironmentsWatch: --watch draws every environment again at each
// interval, with rates from the second draw on, until the command's context ends.
func TestStatusEnvironmentsWatch(t *testing.T) {
	a, b := testsrv.Start(t), testsrv.Start(t)
	withPool(t, a)
	withPool(t, b)
	dir := envFiles(t, [2]string{"a", a.ClientURL()}, [2]string{"b", b.ClientURL()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &countWriter{marker: "Environments (2): ", n: 3, done: cancel}
	var errOut bytes.Buffer
	env := map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	f := newFactory(&IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errOut}, func(k string) string { return env[k] }, make(chan struct{}))
	defer f.Close()
	root := newCmdRoot(f)
	root.SetArgs([]string{"status", "--watch", "100ms", dir})
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("status --watch: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	draws := strings.Split(out.String(), "\n\n=== environment a: ")
	if len(draws) != 3 {
		t.Fatalf("%d draws, want 3:\n%s", len(draws), out.String())
	}
	for i, d := range draws {
		if !strings.Contains(d, "=== environment b: "+b.ClientURL()) || !strings.Contains(d, "Environments (2): a: healthy; b: healthy.") {
			t.Errorf("draw %d lacks an environment:\n%s", i, d)
		}
		if rated := strings.Contains(d, "DELIVERED/S"); rated != (i > 0) {
			t.Errorf("draw %d: rates %v, want %v:\n%s", i, rated, i > 0, d)
		}
	}
}

// TestStatusEnvironmentGuard: an environment whose expect guard refuses the server it
// reached is reported with that server and the refusal, and reads nothing more; the
// environment whose guard holds is reported as usual.
func TestStatusEnvironmentGuard(t *testing.T) {
	env, srvs := servers(t, "dev", "prod")
	withPool(t, srvs["dev"])
	withPool(t, srvs["prod"])
	dir := writeConfig(t, map[string]string{"shop.hcl": `natsplan {
  project = "shop"
}

environment "prod" {
  servers = env("PROD_URL")
  expect {
    server = "srv-prod"
  }
}

environment "wrong" {
  servers = env("DEV_URL")
  expect {
    server = "srv-prod"
  }
}

stream "Q" {
  subjects = ["q.>"]
}

consumer "Q" "pool" {
  ack_policy = "explicit"
}
`})
	code, out, errOut := envCLI(t, env, "status", "--format", "json", dir)
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		Environments []struct {
			Environment, Error string
			Target             *struct{ URL, Server string }
			Consumers          []any
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Environments) != 2 {
		t.Fatalf("not one document of two environments: %v\n%s", err, out)
	}
	p, w := doc.Environments[0], doc.Environments[1]
	if p.Error != "" || len(p.Consumers) != 1 {
		t.Errorf("prod: %+v", p)
	}
	if !strings.Contains(w.Error, "srv-prod") || w.Target == nil || w.Target.Server != "srv-dev" || w.Consumers != nil {
		t.Errorf("wrong: %+v, want the refusal naming srv-prod, the target srv-dev and no report", w)
	}
	if !strings.Contains(errOut, "environment wrong: ") {
		t.Errorf("stderr does not name the refused environment:\n%s", errOut)
	}
}
