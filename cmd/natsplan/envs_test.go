package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/connect"
	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/planfile"
)

// envCLI runs natsplan in-process with exactly the environment variables in env (and
// a private HOME), and returns the exit code and output.
func envCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	vars := map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir()}
	for k, v := range env {
		vars[k] = v
	}
	var out, errOut bytes.Buffer
	code := run(args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func(k string) string { return vars[k] })
	if strings.Contains(errOut.String(), "goroutine ") || strings.Contains(errOut.String(), "panic:") {
		t.Fatalf("natsplan %v crashed:\n%s", args, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// closedURL is a loopback URL nothing listens on: a listener's port, closed again.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "nats://" + addr
}

// envConfig declares the environments named, each reaching the server in $<NAME>_URL
// and with its own value of max_age, and one stream using it.
func envConfig(t *testing.T, names ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("natsplan {\n  project = \"shop\"\n}\n\nvariable \"max_age\" {\n  type    = string\n  default = \"1h\"\n}\n\n")
	for i, n := range names {
		fmt.Fprintf(&b, "environment %q {\n  servers   = env(%q)\n  variables = { max_age = \"%dh\" }\n}\n\n", n, strings.ToUpper(n)+"_URL", i+2)
	}
	b.WriteString("stream \"ORDERS\" {\n  subjects = [\"orders.>\"]\n  max_age  = var.max_age\n}\n")
	return writeConfig(t, map[string]string{"shop.hcl": b.String()})
}

// servers starts one server per name and returns the variables that reach them.
func servers(t *testing.T, names ...string) (map[string]string, map[string]*embedded.Server) {
	t.Helper()
	env := map[string]string{}
	srvs := map[string]*embedded.Server{}
	for _, n := range names {
		s := testsrv.Start(t, func(o *embedded.Options) { o.Name = "srv-" + n })
		srvs[n] = s
		env[strings.ToUpper(n)+"_URL"] = s.ClientURL()
	}
	return env, srvs
}

// TestEnvPlan plans three environments on three servers: each section names its
// environment and its own server, each plan has that environment's value of the
// variable, the sections come in declaration order, and NATS_URL plays no part.
func TestEnvPlan(t *testing.T) {
	dir := envConfig(t, "dev", "staging", "prod")
	env, _ := servers(t, "dev", "staging", "prod")
	env["NATS_URL"] = closedURL(t) // ignored with environments
	code, out, errOut := envCLI(t, env, "plan", "--detailed-exitcode", dir)
	if code != exitChanges {
		t.Fatalf("plan: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	at := 0
	for i, n := range []string{"dev", "staging", "prod"} {
		head := fmt.Sprintf("=== environment %s: nats://127.0.0.1:", n)
		j := strings.Index(out[at:], head)
		if j < 0 {
			t.Fatalf("no section %q after offset %d:\n%s", head, at, out)
		}
		at += j
		end := strings.Index(out[at+1:], "=== environment ")
		section := out[at:]
		if end >= 0 {
			section = out[at : at+1+end]
		}
		for _, want := range []string{"(server srv-" + n + ", ", fmt.Sprintf("+ max_age = %dh\n", i+2), "Plan: 1 to create"} {
			if !strings.Contains(section, want) {
				t.Errorf("section of %s lacks %q:\n%s", n, want, section)
			}
		}
		at++
	}
	if !strings.Contains(out, "Environments (3): dev: 1 to create, 0 to update, 0 to delete, 0 to replace, 0 to adopt; staging: 1 to create") {
		t.Errorf("no summary line of every environment:\n%s", out)
	}

	// --env: exact names and globs select; the others are not planned.
	code, out, errOut = envCLI(t, env, "plan", "--env", "prod", "--env", "stag*", dir)
	if code != 0 {
		t.Fatalf("plan --env: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "environment dev") || !strings.Contains(out, "=== environment staging") || !strings.Contains(out, "=== environment prod") ||
		strings.Index(out, "environment staging") > strings.Index(out, "environment prod") {
		t.Errorf("--env prod --env 'stag*' planned:\n%s", out)
	}
	code, out, errOut = envCLI(t, env, "plan", "--env", "qa*", dir)
	if code != exitError || !strings.Contains(errOut, `"qa*"`) || !strings.Contains(errOut, "dev, staging, prod") {
		t.Errorf("--env matching nothing: exit %d, want 1 and the environments listed\n%s\n%s", code, out, errOut)
	}
	if out != "" {
		t.Errorf("--env matching nothing printed a plan:\n%s", out)
	}
}

// TestEnvPlanUnreachable: one environment's server is not there. The others are
// planned; its section and the final error name it; exit 1.
func TestEnvPlanUnreachable(t *testing.T) {
	dir := envConfig(t, "dev", "gone", "prod")
	env, _ := servers(t, "dev", "prod")
	env["GONE_URL"] = closedURL(t)
	for _, format := range []string{"text", "json", "markdown"} {
		code, out, errOut := envCLI(t, env, "plan", "--timeout", "2s", "--format", format, dir)
		if code != exitError {
			t.Fatalf("%s: exit %d, want 1\n%s\n%s", format, code, out, errOut)
		}
		if !strings.Contains(errOut, "Error: environment gone: no server at "+env["GONE_URL"]) {
			t.Errorf("%s: the error does not name the environment:\n%s", format, errOut)
		}
		// The advice names the environment's settings, not flags that can not be given here.
		if !strings.Contains(errOut, "check the environment's servers") || strings.Contains(errOut, "pass --server") {
			t.Errorf("%s: the advice is not about the environment block:\n%s", format, errOut)
		}
		switch format {
		case "text":
			if !strings.Contains(out, "=== environment gone: not reached\nError: no server at") ||
				!strings.Contains(out, "=== environment dev: ") || !strings.Contains(out, "=== environment prod: ") ||
				!strings.Contains(out, "gone: failed; prod: 1 to create") {
				t.Errorf("text:\n%s", out)
			}
		case "json":
			m := decodeMulti(t, out)
			if len(m.Environments) != 3 || m.Environments[1].Environment != "gone" || m.Environments[1].Error == "" ||
				len(m.Environments[0].Changes) != 1 || len(m.Environments[2].Changes) != 1 {
				t.Errorf("json:\n%s", out)
			}
		case "markdown":
			if !strings.Contains(out, "| `gone` | | | | | failed |") || !strings.Contains(out, "<details open><summary><b>gone</b>") {
				t.Errorf("markdown:\n%s", out)
			}
		}
	}
}

// decodeMulti decodes exactly one JSON document holding a plan of environments.
func decodeMulti(t *testing.T, out string) *plan.Multi {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var m plan.Multi
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not a plan of environments: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document:\n%s", out)
	}
	return &m
}

// TestEnvPlanTargetGuard: each environment's expect {} is checked against its own
// server; the one whose server is another fails, the others are planned.
func TestEnvPlanTargetGuard(t *testing.T) {
	src := `natsplan {
  project = "shop"
  expect {
    server = "srv-dev"
  }
}

environment "dev" {
  servers = env("DEV_URL")
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

stream "ORDERS" {
  subjects = ["orders.>"]
}
`
	dir := writeConfig(t, map[string]string{"shop.hcl": src})
	env, _ := servers(t, "dev", "prod")
	code, out, errOut := envCLI(t, env, "plan", "--format", "json", dir)
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	m := decodeMulti(t, out)
	for i, want := range []string{"", "", "srv-prod"} {
		p := m.Environments[i]
		if (want == "") != (p.Error == "") || !strings.Contains(p.Error, want) {
			t.Errorf("environment %s: error %q, want one naming %q", p.Environment, p.Error, want)
		}
	}
	if !strings.Contains(errOut, "environment wrong: ") {
		t.Errorf("stderr does not name the environment refused:\n%s", errOut)
	}
}

// TestEnvDrift: drift over environments; one drifted, one in sync; json is one
// document with "environment" in each; exit 2; an unreachable one makes it 1.
func TestEnvDrift(t *testing.T) {
	dir := envConfig(t, "dev", "prod")
	env, _ := servers(t, "dev", "prod")
	// Bring dev in line: apply its plan with the single-server path (its own URL, the
	// value of max_age it has).
	for _, n := range []string{"dev", "prod"} {
		single := writeConfig(t, map[string]string{"shop.hcl": fmt.Sprintf("natsplan {\n  project = \"shop\"\n}\nstream \"ORDERS\" {\n  subjects = [\"orders.>\"]\n  max_age  = %q\n}\n",
			map[string]string{"dev": "2h", "prod": "1h"}[n])})
		if code, out, errOut := cli(t, env[strings.ToUpper(n)+"_URL"], "apply", "--auto-approve", single); code != 0 {
			t.Fatalf("apply %s: exit %d\n%s\n%s", n, code, out, errOut)
		}
	}
	// plan --detailed-exitcode aggregates: 0 for dev alone (in sync), 2 with prod.
	if code, out, errOut := envCLI(t, env, "plan", "--detailed-exitcode", "--env", "dev", dir); code != 0 || !strings.Contains(out, "dev: no changes") {
		t.Errorf("plan --detailed-exitcode --env dev: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := envCLI(t, env, "plan", "--detailed-exitcode", dir); code != exitChanges {
		t.Errorf("plan --detailed-exitcode: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := envCLI(t, env, "drift", dir)
	if code != exitChanges {
		t.Fatalf("drift: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"=== environment dev: nats://", "No drift: the server matches the files.", "=== environment prod: nats://",
		"~ stream.ORDERS (changed)", "Environments (2): dev: in sync; prod: 1 changed, 0 missing, 0 orphaned, 0 unmanaged."} {
		if !strings.Contains(out, want) {
			t.Errorf("drift text lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = envCLI(t, env, "drift", "--format", "json", dir)
	var doc struct {
		Environments []map[string]json.RawMessage `json:"environments"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil || dec.More() || code != exitChanges {
		t.Fatalf("drift json: exit %d, %v\n%s", code, err, out)
	}
	if len(doc.Environments) != 2 || string(doc.Environments[0]["environment"]) != `"dev"` || string(doc.Environments[1]["environment"]) != `"prod"` {
		t.Errorf("drift json:\n%s", out)
	}
	code, out, _ = envCLI(t, env, "drift", "--format", "markdown", dir)
	if code != exitChanges || !strings.Contains(out, "### natsplan drift: 2 environment(s), 1 drifted") || !strings.Contains(out, "| `prod` | 1 | 0 | 0 | 0 | 0 |") {
		t.Errorf("drift markdown: exit %d\n%s", code, out)
	}
	// In sync where it is reached, but one environment is not: exit 1, naming it.
	env["PROD_URL"] = closedURL(t)
	code, out, errOut = envCLI(t, env, "drift", "--timeout", "2s", dir)
	if code != exitError || !strings.Contains(errOut, "environment prod: no server at") || !strings.Contains(out, "dev: in sync; prod: failed.") {
		t.Errorf("drift with prod unreachable: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
}

// TestEnvSavedPlan: plan --out writes one file with every environment's plan and
// connection (references only); show renders it in every format.
func TestEnvSavedPlan(t *testing.T) {
	dir := envConfig(t, "dev", "prod")
	env, _ := servers(t, "dev", "prod")
	file := filepath.Join(t.TempDir(), "plan.json")
	code, out, errOut := envCLI(t, env, "plan", "--out", file, dir)
	if code != 0 || !strings.Contains(errOut, "Saved the plans of 2 environment(s) to "+file) {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}
	p, m, err := planfile.ReadFileAny(file)
	if err != nil || p != nil || m == nil {
		t.Fatalf("the saved file is not a plan of environments: %v", err)
	}
	for i, n := range []string{"dev", "prod"} {
		e := m.Environments[i]
		if e.Environment != n || e.Connection == nil || e.Connection.Servers.Env != strings.ToUpper(n)+"_URL" || e.Connection.Servers.Literal != "" {
			t.Errorf("part %d: environment %q, connection %+v", i, e.Environment, e.Connection)
		}
		if e.Target.Server != "srv-"+n || len(e.Changes) != 1 {
			t.Errorf("part %s: target %+v, %d changes", n, e.Target, len(e.Changes))
		}
	}
	code, shown, errOut := envCLI(t, nil, "show", file)
	if code != 0 || shown != out {
		t.Errorf("show: exit %d, and its text differs from plan's\nshow:\n%s\nplan:\n%s\n%s", code, shown, out, errOut)
	}
	code, js, _ := envCLI(t, nil, "show", "--format", "json", file)
	if code != 0 || len(decodeMulti(t, js).Environments) != 2 {
		t.Errorf("show --format json: exit %d\n%s", code, js)
	}
	code, md, _ := envCLI(t, nil, "show", "--format", "markdown", file)
	if code != 0 || !strings.Contains(md, "| `dev` | 1 | 0 | 0 | 0 | 0 |") {
		t.Errorf("show --format markdown: exit %d\n%s", code, md)
	}
	// Edited: refused.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(data, []byte(`"ORDERS"`), []byte(`"ORDERZ"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := envCLI(t, nil, "show", file); code != exitError || !strings.Contains(errOut, "checksum mismatch") {
		t.Errorf("show of an edited plan: exit %d\n%s", code, errOut)
	}
}

// TestEnvFlags: connection flags with several environments are a usage error; with
// one selected they override its settings; --env without environments is refused.
func TestEnvFlags(t *testing.T) {
	dir := envConfig(t, "dev", "prod")
	env, _ := servers(t, "dev", "prod")
	other := testsrv.Start(t, func(o *embedded.Options) { o.Name = "srv-other" })
	code, out, errOut := envCLI(t, env, "plan", "-s", other.ClientURL(), dir)
	if code != exitError || !strings.Contains(errOut, "--server sets the connection of one environment, but 2 are selected (dev, prod)") || out != "" {
		t.Errorf("-s with two environments: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = envCLI(t, env, "plan", "--env", "prod", "-s", other.ClientURL(), dir)
	if code != 0 || !strings.Contains(out, "=== environment prod: "+other.ClientURL()+" (server srv-other") {
		t.Errorf("-s with one environment does not override it: exit %d\n%s\n%s", code, out, errOut)
	}
	plain := writeConfig(t, map[string]string{"shop.hcl": "natsplan {\n  project = \"shop\"\n}\n"})
	code, _, errOut = envCLI(t, map[string]string{"NATS_URL": other.ClientURL()}, "plan", "--env", "prod", plain)
	if code != exitError || !strings.Contains(errOut, "declares none") && !strings.Contains(errOut, "no environment blocks") {
		t.Errorf("--env without environments: exit %d\n%s", code, errOut)
	}
}

// TestEnvRedaction: passwords, tokens and URL user-info given through env() appear in
// no output of plan or drift (any format), in no saved plan, and in no error message:
// an authentication failure, an unreachable server, a variable unset.
func TestEnvRedaction(t *testing.T) {
	const (
		password = "pw-Zq8vKx2"
		token    = "tok-Hh71Lm0"
		urlPass  = "up-Rr55Aa9"
		wrong    = "wrong-Pp33Qq"
	)
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		Users: []*server.User{{Username: "deployer", Password: password}, {Username: "urluser", Password: urlPass}}}
	auth := testsrv.StartOptions(t, opts)
	tokOpts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), Authorization: token}
	tok := testsrv.StartOptions(t, tokOpts)
	authURL := auth.ClientURL()
	src := `natsplan {
  project = "shop"
}

environment "userpass" {
  servers  = env("AUTH_URL")
  user     = "deployer"
  password = env("APP_PASSWORD")
}

environment "token" {
  servers = env("TOK_URL")
  token   = env("APP_TOKEN")
}

environment "urlinfo" {
  servers = env("URLINFO_URL")
}

environment "denied" {
  servers  = env("AUTH_URL")
  user     = "deployer"
  password = env("WRONG_PASSWORD")
}

environment "gone" {
  servers = env("GONE_URL")
}

environment "unset" {
  servers  = env("AUTH_URL")
  user     = "deployer"
  password = env("NOT_SET_PASSWORD")
}

stream "ORDERS" {
  subjects = ["orders.>"]
}
`
	dir := writeConfig(t, map[string]string{"shop.hcl": src})
	gone := strings.Replace(closedURL(t), "nats://", "nats://urluser:"+urlPass+"@", 1)
	env := map[string]string{
		"AUTH_URL": authURL, "APP_PASSWORD": password, "TOK_URL": tok.ClientURL(), "APP_TOKEN": token,
		"URLINFO_URL": strings.Replace(authURL, "nats://", "nats://urluser:"+urlPass+"@", 1), "WRONG_PASSWORD": wrong,
		"GONE_URL": gone,
	}
	secrets := []string{password, token, urlPass, wrong}
	check := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows the secret %q:\n%s", what, s, text)
			}
		}
	}
	file := filepath.Join(t.TempDir(), "plan.json")
	for _, args := range [][]string{
		{"plan", "--timeout", "2s", "--out", file},
		{"plan", "--timeout", "2s", "--format", "json"},
		{"plan", "--timeout", "2s", "--format", "markdown"},
		{"drift", "--timeout", "2s"},
		{"drift", "--timeout", "2s", "--format", "json"},
		{"drift", "--timeout", "2s", "--format", "markdown"},
		{"status", "--timeout", "2s"},
		{"status", "--timeout", "2s", "--format", "json"},
		{"status", "--timeout", "2s", "--format", "prometheus"},
		{"import", "--timeout", "2s"},
		{"plan", "--timeout", "2s", "--trace", "--env", "urlinfo"},
	} {
		code, out, errOut := envCLI(t, env, append(args, dir)...)
		what := strings.Join(args, " ")
		check(what+": stdout", out)
		check(what+": stderr", errOut)
		if args[0] == "plan" && args[len(args)-1] == "urlinfo" {
			if code != 0 {
				t.Errorf("%s: exit %d\n%s\n%s", what, code, out, errOut)
			}
			continue
		}
		if code != exitError {
			t.Errorf("%s: exit %d, want 1\n%s\n%s", what, code, out, errOut)
		}
		// The environments that can connect do; those that can not say why.
		for _, want := range []string{"environment denied: connect to", "Authorization Violation", "environment gone: no server at nats://xxxxx@127.0.0.1:",
			"environment unset: setting password: environment variable NOT_SET_PASSWORD is not set"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, want, errOut)
			}
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	check("the saved plan", string(data))
	for _, ref := range []string{`"env": "APP_PASSWORD"`, `"env": "APP_TOKEN"`, `"env": "URLINFO_URL"`} {
		if !strings.Contains(string(data), ref) {
			t.Errorf("the saved plan lacks the reference %s", ref)
		}
	}
	m := decodeMulti(t, mustShow(t, file))
	for _, e := range m.Environments {
		if (e.Error == "") != (e.Environment == "userpass" || e.Environment == "token" || e.Environment == "urlinfo") {
			t.Errorf("environment %s: error %q", e.Environment, e.Error)
		}
	}
}

func mustShow(t *testing.T, file string) string {
	t.Helper()
	code, out, errOut := envCLI(t, nil, "show", "--format", "json", file)
	if code != 0 {
		t.Fatalf("show: exit %d\n%s", code, errOut)
	}
	return out
}

// TestEnvNoEnvironmentsUnchanged: a configuration that mentions the word environment
// (a variable named so) but declares no environment block is planned as before,
// against $NATS_URL.
func TestEnvNoEnvironmentsUnchanged(t *testing.T) {
	s := testsrv.Start(t)
	dir := writeConfig(t, map[string]string{"shop.hcl": `natsplan {
  project = "shop"
}

variable "environment" {
  type    = string
  default = "dev"
}

stream "ORDERS" {
  subjects    = ["orders.>"]
  description = "orders in ${var.environment}"
}
`})
	code, out, errOut := cli(t, s.ClientURL(), "plan", dir)
	if code != 0 || strings.Contains(out, "=== environment") || !strings.Contains(out, "natsplan plan for "+s.ClientURL()) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	// A block commented out looks like one to the scan that decides whether to read
	// the files before the server: the files are then read first, and the plan is
	// the same.
	if err := os.WriteFile(filepath.Join(dir, "old.hcl"), []byte("/*\nenvironment \"old\" {}\n*/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mayDeclareEnvironments([]string{dir}) {
		t.Fatal("the scan does not see the commented block: this case tests nothing")
	}
	code, again, errOut := cli(t, s.ClientURL(), "plan", dir)
	if code != 0 || again != out {
		t.Errorf("exit %d, plan differs:\n%s\nbefore:\n%s\n%s", code, again, out, errOut)
	}
}

// TestEnvMarkdownManyEnvironments: twelve environments on two servers, each planning
// a hundred streams, make one markdown comment under 65,000 characters with every
// environment in the summary table, in declaration order.
func TestEnvMarkdownManyEnvironments(t *testing.T) {
	env, _ := servers(t, "a", "b")
	var b strings.Builder
	b.WriteString("natsplan {\n  project = \"shop\"\n}\n\n")
	var names []string
	for i := range 12 {
		n := fmt.Sprintf("region-%02d", i)
		names = append(names, n)
		fmt.Fprintf(&b, "environment %q {\n  servers = env(%q)\n}\n\n", n, []string{"A_URL", "B_URL"}[i%2])
	}
	for i := range 100 {
		fmt.Fprintf(&b, "stream \"S%03d\" {\n  subjects = [\"s%03d.>\"]\n}\n", i, i)
	}
	dir := writeConfig(t, map[string]string{"shop.hcl": b.String()})
	code, out, errOut := envCLI(t, env, "plan", "--format", "markdown", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if len(out) > 65000 {
		t.Fatalf("the comment is %d characters, over 65,000", len(out))
	}
	at := 0
	for _, n := range names {
		row := "| `" + n + "` | 100 | 0 | 0 | 0 | 0 |\n"
		i := strings.Index(out[at:], row)
		if i < 0 {
			t.Fatalf("no row %q in order:\n%s", row, out)
		}
		at += i
	}
	if d := strings.Count(out, "<details><summary><b>region-"); d != 12 {
		t.Errorf("%d environments detailed, want 12 (closed: no destructive change, no error)", d)
	}
}

// TestEnvOwnDiagnostics: a value only one environment has that the files refuse fails
// that environment, with its diagnostics on stderr lines prefixed with its name; the
// others are planned.
func TestEnvOwnDiagnostics(t *testing.T) {
	src := `natsplan {
  project = "shop"
}

variable "max_age" {
  type    = string
  default = "1h"
}

environment "dev" {
  servers = env("DEV_URL")
}

environment "broken" {
  servers   = env("DEV_URL")
  variables = { max_age = "forever" }
}

stream "ORDERS" {
  subjects = ["orders.>"]
  max_age  = var.max_age
}
`
	dir := writeConfig(t, map[string]string{"shop.hcl": src})
	env, _ := servers(t, "dev")
	code, out, errOut := envCLI(t, env, "plan", dir)
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "=== environment dev: nats://") || !strings.Contains(out, "dev: 1 to create") || !strings.Contains(out, "broken: failed") {
		t.Errorf("stdout:\n%s", out)
	}
	var prefixed bool
	for _, line := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(line, "[broken] ") && strings.Contains(line, "forever") {
			prefixed = true
		}
		if strings.Contains(line, "forever") && !strings.HasPrefix(line, "[broken] ") {
			t.Errorf("a diagnostic of broken without its prefix: %q", line)
		}
	}
	if !prefixed || !strings.Contains(errOut, "Error: environment broken: stopped by the errors reported above") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestEnvConnectionSources: an environment's own settings decide where it runs: the
// NATS_* variables and the nats CLI's selected context are not used, a context the
// environment names is, and --embedded runs one server per environment in DIR/<name>.
func TestEnvConnectionSources(t *testing.T) {
	env, _ := servers(t, "dev")
	ctxSrv := testsrv.Start(t, func(o *embedded.Options) { o.Name = "srv-ctx" })
	config := t.TempDir()
	ctxDir := filepath.Join(config, "nats", "context")
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, url := range map[string]string{"east": ctxSrv.ClientURL(), "selected": closedURL(t)} {
		if err := os.WriteFile(filepath.Join(ctxDir, name+".json"), []byte(`{"url":"`+url+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(config, "nats", "context.txt"), []byte("selected"), 0o644); err != nil {
		t.Fatal(err)
	}
	env["XDG_CONFIG_HOME"] = config
	// Each of these would fail the connection if it were used.
	env["NATS_URL"] = closedURL(t)
	env["NATS_CREDS"] = filepath.Join(config, "missing.creds")
	env["NATS_TIMEOUT"] = "not-a-duration-but-unused"
	src := `natsplan {
  project = "shop"
}

environment "dev" {
  servers = env("DEV_URL")
  timeout = "3s"
}

environment "east" {
  context = "east"
  timeout = "3s"
}

stream "ORDERS" {
  subjects = ["orders.>"]
}
`
	dir := writeConfig(t, map[string]string{"shop.hcl": src})
	code, out, errOut := envCLI(t, env, "plan", dir)
	if code != 0 || !strings.Contains(out, "=== environment dev: "+env["DEV_URL"]+" (server srv-dev") ||
		!strings.Contains(out, "=== environment east: "+ctxSrv.ClientURL()+" (server srv-ctx") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	store := t.TempDir()
	code, out, errOut = envCLI(t, env, "plan", "--embedded", store, dir)
	if code != 0 || strings.Count(out, "=== environment ") != 2 || strings.Count(out, "=== environment ") != strings.Count(out, "(server natsplan-embedded")/2 ||
		!strings.Contains(errOut, "the environments' connection settings are not used") {
		t.Errorf("--embedded: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, n := range []string{"dev", "east"} {
		if st, err := os.Stat(filepath.Join(store, n)); err != nil || !st.IsDir() {
			t.Errorf("--embedded did not store environment %s in its own folder: %v", n, err)
		}
	}
}

// TestEnvTimeoutPrecedence: --timeout, then the environment's timeout, then
// $NATS_TIMEOUT, then the default.
func TestEnvTimeoutPrecedence(t *testing.T) {
	getenv := func(v string) func(string) string {
		return func(k string) string {
			if k == "NATS_TIMEOUT" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name       string
		flag       time.Duration // 0: not given
		envTimeout time.Duration
		variable   string
		want       time.Duration
	}{
		{"flag over all", 7 * time.Second, 3 * time.Second, "9s", 7 * time.Second},
		{"environment over variable", 0, 3 * time.Second, "9s", 3 * time.Second},
		{"variable", 0, 0, "9s", 9 * time.Second},
		{"default", 0, 0, "", connect.DefaultTimeout},
	} {
		g := GlobalOptions{envTimeout: tc.envTimeout}
		g.Conn.Timeout = connect.DefaultTimeout
		if tc.flag > 0 {
			g.Conn.Timeout, g.timeoutSet = tc.flag, true
		}
		got, err := g.timeout(getenv(tc.variable))
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestMayDeclareEnvironments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"environment \"prod\" {\n}\n", true},
		{"  environment   \"prod\" {}\n", true},
		{"environment prod {\n}\n", true},
		{"/* note */ environment \"prod\" {}\n", true},
		{"variable \"environment\" {\n  default = \"dev\"\n}\n", false},
		{"stream \"S\" {\n  description = \"environment: dev\"\n  environmental = 1\n}\n", false},
		{"# environment \"prod\" is declared elsewhere\n", false},
	} {
		dir := writeConfig(t, map[string]string{"a.hcl": tc.src})
		if got := mayDeclareEnvironments([]string{dir}); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestPrefixWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := &scrubber{}
	s.add("hunter22", false)
	s.add("nats://me:pw-in-url@a:4222,nats://tok-in-url@b:4222", true)
	w := &prefixWriter{w: &buf, prefix: "[prod] ", secrets: s}
	for _, part := range []string{"one line\ntwo ", "halves\r\n", "password hunter22 and ", "nats://me:pw-in-url@a:4222 nats://tok-in-url@b:4222\nno newline"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	w.flush()
	want := "[prod] one line\n[prod] two halves\n[prod] password xxxxx and nats://xxxxx@a:4222 nats://xxxxx@b:4222\n[prod] no newline\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
}

// TestEnvPlanErrorFinding: an error finding only one environment's values cause (three
// replicas on a single server, NP403) is shown in its section and counted in the
// summaries; the plan exits 1 even with --detailed-exitcode, and the other
// environment's plan is whole.
func TestEnvPlanErrorFinding(t *testing.T) {
	src := `natsplan {
  project = "shop"
}

variable "replicas" {
  type    = number
  default = 1
}

environment "dev" {
  servers = env("DEV_URL")
}

environment "big" {
  servers   = env("BIG_URL")
  variables = { replicas = 3 }
}

stream "ORDERS" {
  subjects     = ["orders.>"]
  num_replicas = var.replicas
}
`
	dir := writeConfig(t, map[string]string{"shop.hcl": src})
	env, _ := servers(t, "dev", "big")
	code, out, errOut := envCLI(t, env, "plan", "--detailed-exitcode", dir)
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	big := out[strings.Index(out, "=== environment big"):]
	if !strings.Contains(big, "NP403") || !strings.Contains(out, "dev: 1 to create, 0 to update, 0 to delete, 0 to replace, 0 to adopt; big: 1 to create") ||
		!strings.Contains(out, "1 error(s).") {
		t.Errorf("text:\n%s", out)
	}
	if strings.Contains(out[:strings.Index(out, "=== environment big")], "NP403") {
		t.Errorf("dev's section has big's error:\n%s", out)
	}
	code, md, _ := envCLI(t, env, "plan", "--format", "markdown", dir)
	if code != exitError || !strings.Contains(md, "| `big` | 1 | 0 | 0 | 0 | 1 |") || !strings.Contains(md, "<details open><summary><b>big</b>") ||
		!strings.Contains(md, "<details><summary><b>dev</b>") {
		t.Errorf("markdown: exit %d\n%s", code, md)
	}
}

// TestEnvPlanOnly: --only makes every environment's plan partial, each part saying so.
func TestEnvPlanOnly(t *testing.T) {
	src := `natsplan {
  project = "shop"
}

environment "dev" {
  servers = env("DEV_URL")
}

environment "prod" {
  servers = env("PROD_URL")
}

stream "ORDERS" {
  subjects = ["orders.>"]
}

stream "AUDIT" {
  subjects = ["audit.>"]
}
`
	dir := writeConfig(t, map[string]string{"shop.hcl": src})
	env, _ := servers(t, "dev", "prod")
	code, out, errOut := envCLI(t, env, "plan", "--format", "json", "--only", "stream.AUDIT", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	m := decodeMulti(t, out)
	for _, p := range m.Environments {
		if len(p.Changes) != 1 || p.Changes[0].Address != "stream.AUDIT" || len(p.Only) != 1 {
			t.Errorf("%s: %d changes, only %v", p.Environment, len(p.Changes), p.Only)
		}
	}
}
