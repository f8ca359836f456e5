package schema

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/internal/ctxtest"
	"github.com/natsplan/natsplan/model"
)

// writeConfig writes src as main.hcl in a new folder and returns the file's path.
func writeConfig(t testing.TB, src string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "main.hcl")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// loadEnvs loads file with LoadEnvironments and fails on a Go error.
func loadEnvs(t testing.TB, paths []string, vars Vars, selected ...string) ([]*EnvModel, hcl.Diagnostics) {
	t.Helper()
	envs, diags, err := NewLoader().LoadEnvironments(context.Background(), paths, vars, selected)
	if err != nil {
		t.Fatal(err)
	}
	return envs, diags
}

// allDiags is the common diagnostics followed by every environment's.
func allDiags(envs []*EnvModel, common hcl.Diagnostics) hcl.Diagnostics {
	out := append(hcl.Diagnostics(nil), common...)
	for _, e := range envs {
		out = append(out, e.Diags...)
	}
	return out
}

const envFull = `natsplan {
  project = "shop"
  expect {
    server  = "n1"
    cluster = "base"
  }
}

environment "prod" {
  context   = "prod-east"
  servers   = ["nats://a:4222", "tls://b:4222"]
  creds     = "/secrets/prod.creds"
  nkey      = "/secrets/prod.nk"
  user      = "deployer"
  password  = env("PROD_NATS_PASSWORD")
  token     = "${env("PROD_NATS_TOKEN")}"
  tls {
    cert            = "/tls/cert.pem"
    key             = env("PROD_TLS_KEY")
    ca              = "/tls/ca.pem"
    handshake_first = true
  }
  js_domain = "hub"
  timeout   = "10s"
  variables = { replicas = 3 }
  expect {
    cluster = "prod-east"
    account = "APP"
  }
}

variable "replicas" {
  type    = number
  default = 1
}

stream "ORDERS" {
  subjects     = ["orders.>"]
  num_replicas = var.replicas
}
`

func TestEnvironmentBlockDecodes(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, envFull)
	envs, diags := loadEnvs(t, []string{file}, Vars{})
	if len(allDiags(envs, diags)) > 0 {
		t.Fatalf("diagnostics:\n%s", render(allDiags(envs, diags)))
	}
	if len(envs) != 1 || envs[0].Env == nil {
		t.Fatalf("%d environments, want prod", len(envs))
	}
	e := envs[0].Env
	want := model.Connection{
		Context:  model.Setting{Literal: "prod-east"},
		Servers:  model.Setting{Literal: "nats://a:4222,tls://b:4222"},
		Creds:    model.Setting{Literal: "/secrets/prod.creds"},
		NKey:     model.Setting{Literal: "/secrets/prod.nk"},
		User:     model.Setting{Literal: "deployer"},
		Password: model.Setting{Env: "PROD_NATS_PASSWORD"},
		Token:    model.Setting{Env: "PROD_NATS_TOKEN"},
		TLSCert:  model.Setting{Literal: "/tls/cert.pem"},
		TLSKey:   model.Setting{Env: "PROD_TLS_KEY"},
		TLSCA:    model.Setting{Literal: "/tls/ca.pem"},
		TLSFirst: true,
		JSDomain: model.Setting{Literal: "hub"},
		Timeout:  10 * time.Second,
	}
	if diff := cmp.Diff(want, e.Connection); diff != "" || e.Name != "prod" {
		t.Errorf("environment %q connection (-want +got):\n%s", e.Name, diff)
	}
	// Every attribute keeps where it was written.
	lines := map[string]int{"context": 10, "servers": 11, "creds": 12, "nkey": 13, "user": 14, "password": 15, "token": 16,
		"tls": 17, "tls.cert": 18, "tls.key": 19, "tls.ca": 20, "tls.handshake_first": 21, "js_domain": 23, "timeout": 24,
		"variables": 25, "variables.replicas": 25, "expect": 26, "expect.cluster": 27, "expect.account": 28}
	for path, line := range lines {
		r, ok := e.Decl.Fields[path]
		if !ok || r.Start.Line != line || r.Filename != file {
			t.Errorf("%s declared at %v, want %s:%d", path, r, file, line)
		}
	}
	if len(e.Decl.Fields) != len(lines) {
		t.Errorf("declared fields %v, want exactly %d", e.Decl.Fields, len(lines))
	}
	if e.Decl.Range.Start.Line != 9 {
		t.Errorf("environment declared at line %d, want 9", e.Decl.Range.Start.Line)
	}
	// expect: the environment's fields over the natsplan block's.
	m := envs[0].Model
	x := m.Expect
	if x == nil || x.Server != "n1" || x.Cluster != "prod-east" || x.Account != "APP" || x.Domain != "" {
		t.Fatalf("merged expect %+v", x)
	}
	if x.Decl.FieldRange("server").Start.Line != 4 || x.Decl.FieldRange("cluster").Start.Line != 27 {
		t.Errorf("merged expect fields declared at %v", x.Decl.Fields)
	}
	if e.Expect != x {
		t.Errorf("the environment's Expect is not the model's merged one")
	}
	if m.Streams["ORDERS"].Config.Replicas != 3 {
		t.Errorf("num_replicas = %d, want the environment's 3", m.Streams["ORDERS"].Config.Replicas)
	}
}

// TestEnvironmentForms covers the other ways of writing settings.
func TestEnvironmentForms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       model.Connection
	}{
		{"servers as one string", `servers = "nats://a:4222, b:4222"`, model.Connection{Servers: model.Setting{Literal: "nats://a:4222,b:4222"}}},
		{"servers from env", `servers = env("URLS")`, model.Connection{Servers: model.Setting{Env: "URLS"}}},
		{"servers from a function", `servers = split(",", "nats://a:1,nats://b:2")`, model.Connection{Servers: model.Setting{Literal: "nats://a:1,nats://b:2"}}},
		{"tls as an attribute", `tls = { ca = "/ca.pem", handshake_first = false }`, model.Connection{TLSCA: model.Setting{Literal: "/ca.pem"}}},
		{"one-line block with commas", "tls { cert = \"c\", key = \"k\" }", model.Connection{TLSCert: model.Setting{Literal: "c"}, TLSKey: model.Setting{Literal: "k"}}},
		{"context from env", `context = env("CTX")`, model.Connection{Context: model.Setting{Env: "CTX"}}},
		{"timeout in minutes", `timeout = "1m"`, model.Connection{Timeout: time.Minute}},
		{"nothing", ``, model.Connection{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := writeConfig(t, "natsplan { project = \"p\" }\nenvironment \"e\" {\n"+c.body+"\n}\n")
			envs, diags := loadEnvs(t, []string{file}, Vars{})
			if all := allDiags(envs, diags); len(all) > 0 {
				t.Fatalf("diagnostics:\n%s", render(all))
			}
			if diff := cmp.Diff(c.want, envs[0].Env.Connection); diff != "" {
				t.Errorf("connection (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnvironmentErrors: each case is one error at an exact position (line and
// column of main.hcl, whose first line is the natsplan block and second the
// environment's label line) whose text contains want.
func TestEnvironmentErrors(t *testing.T) {
	t.Parallel()
	const head = "natsplan { project = \"p\" }\nenvironment \"prod\" {\n"
	cases := []struct {
		name, src     string
		line, col     int
		summary, want string
		secret        bool
		extraLeftOut  string
	}{
		{"unknown attribute", head + "  sever = \"x\"\n}\n", 3, 3, "Unsupported argument", `Did you mean "servers"?`, false, ""},
		{"unknown block", head + "  tsl {}\n}\n", 3, 3, "Unsupported block type", `Did you mean "tls"?`, false, ""},
		{"unknown tls attribute", head + "  tls { cart = \"x\" }\n}\n", 3, 9, "Unsupported argument", `Did you mean "cert"?`, false, ""},
		{"unknown expect attribute", head + "  expect { clustr = \"x\" }\n}\n", 3, 12, "Unsupported argument", `Did you mean "cluster"?`, false, ""},
		{"argument as block", head + "  servers {}\n}\n", 3, 3, "Unsupported block type", "is an argument, not a block", false, ""},
		{"duplicate attribute", head + "  user = \"a\"\n  user = \"b\"\n}\n", 4, 3, "Attribute redefined", "already set", false, ""},
		{"duplicate environment", head + "}\nenvironment \"prod\" {}\n", 4, 13, "Duplicate environment", "environment.prod is already declared at", false, ""},
		{"names differing in case", head + "}\nenvironment \"Prod\" {}\n", 4, 13, "Duplicate environment", "only in case", false, ""},
		{"invalid name", "natsplan { project = \"p\" }\nenvironment \"prod east\" {}\n", 2, 13, "Invalid environment name", "folder name", false, ""},
		{"name with a slash", "natsplan { project = \"p\" }\nenvironment \"../x\" {}\n", 2, 13, "Invalid environment name", "starting with a letter or digit", false, ""},
		{"missing label", "natsplan { project = \"p\" }\nenvironment {}\n", 2, 13, "Missing name for environment", `environment "NAME" { ... }`, false, ""},
		{"password literal", head + "  password = \"hunter2\"\n}\n", 3, 14, "Secret written in a file", `password = env("PROD_NATS_PASSWORD")`, true, "hunter2"},
		{"token literal", head + "  token = \"s3cr3t\"\n}\n", 3, 11, "Secret written in a file", `token = env("PROD_NATS_TOKEN")`, true, "s3cr3t"},
		{"password from a variable", "variable \"pw\" { default = \"x\" }\n" + head + "  password = var.pw\n}\n", 4, 14, "Secret written in a file", "nor taken from var. or local.", true, ""},
		{"password in a server URL", head + "  servers = [\"nats://a:4222\", \"nats://me:hunter2@b:4222\"]\n}\n", 3, 31, "Secret written in a file", "server 2 of servers has credentials", true, "hunter2"},
		{"token in a server URL string", head + "  servers = \"nats://s3cr3t@b:4222\"\n}\n", 3, 13, "Secret written in a file", `token = env("PROD_NATS_TOKEN")`, true, "s3cr3t"},
		{"nkey seed", head + "  nkey = \"SUAMK2FG4MI6UE3ACF3FK3OIQBCEIEZV7NSWFFEW63UXMRLFM2XLAXK4GY\"\n}\n", 3, 10, "Secret written in a file", "path of the file that holds the seed", true, "SUAMK2FG"},
		{"creds content", head + "  creds = \"-----BEGIN NATS USER JWT-----\"\n}\n", 3, 11, "Secret written in a file", "path of a credentials file", true, "BEGIN"},
		{"bad scheme", head + "  servers = \"http://a:4222\"\n}\n", 3, 13, "Invalid server URL", "use nats://", false, ""},
		{"stray comma", head + "  servers = \"nats://a:4222,\"\n}\n", 3, 13, "Invalid server URL", "server 2 of servers: it is empty", false, ""},
		{"env in a servers list", head + "  servers = [env(\"A\")]\n}\n", 3, 14, "Invalid servers", "can not be one element", false, ""},
		{"env with a computed name", "locals { n = \"X\" }\n" + head + "  user = env(local.n)\n}\n", 4, 14, "Invalid env() call", "literal string", false, ""},
		{"env with two arguments", head + "  user = env(\"A\", \"B\")\n}\n", 3, 10, "Invalid env() call", "one argument", false, ""},
		{"env with a bad name", head + "  user = env(\"1A\")\n}\n", 3, 14, "Invalid env() call", "not an environment variable name", false, ""},
		{"env inside a function", head + "  user = lower(env(\"A\"))\n}\n", 3, 16, "Error in function call", "allowed only as the whole value", false, ""},
		{"variable in a setting", "variable \"h\" { default = \"x\" }\n" + head + "  context = var.h\n}\n", 4, 13, "Variables not allowed", "can not refer to var. or local.", false, ""},
		{"local in tls", "locals { c = \"x\" }\n" + head + "  tls { cert = local.c }\n}\n", 4, 16, "Variables not allowed", "tls.cert", false, ""},
		{"variable in variables", "variable \"a\" { default = 1 }\nvariable \"b\" { default = 1 }\n" + head + "  variables = { b = var.a }\n}\n", 5, 21, "Variables not allowed", "variables.b", false, ""},
		{"env in variables", "variable \"a\" { default = \"x\" }\n" + head + "  variables = { a = env(\"A\") }\n}\n", 4, 21, "Invalid variable value", "use --var or --var-file", false, ""},
		{"env in expect", head + "  expect { cluster = env(\"C\") }\n}\n", 3, 22, "Invalid expect", "env() is for connection settings", false, ""},
		{"empty setting", head + "  user = \"\"\n}\n", 3, 10, "Empty setting", "user is empty", false, ""},
		{"zero timeout", head + "  timeout = \"0s\"\n}\n", 3, 13, "Invalid timeout", "longer than 0", false, ""},
		{"timeout without a unit", head + "  timeout = 10\n}\n", 3, 13, "Invalid duration", "timeout is a duration", false, ""},
		{"handshake_first not a bool", head + "  tls { handshake_first = \"yes\" }\n}\n", 3, 27, "Incorrect attribute value type", "true or false", false, ""},
		{"undeclared variable", "variable \"replicas\" { default = 1 }\n" + head + "  variables = { replica = 3 }\n}\n", 4, 17, "Value for undeclared variable", `Did you mean "replicas"?`, false, ""},
		{"variable of the wrong type", "variable \"replicas\" { type = number }\n" + head + "  variables = { replicas = \"many\" }\n}\n", 4, 28, "Invalid value for variable", "var.replicas is not a number", false, ""},
		{"duplicate variable value", "variable \"a\" { default = 1 }\n" + head + "  variables = {\n    a = 2\n    a = 3\n  }\n}\n", 6, 5, "Duplicate variable value", "set it once", false, ""},
		{"validation fails for the environment", "variable \"r\" {\n  default = 1\n  validation {\n    condition = var.r <= 3\n    error_message = \"at most 3\"\n  }\n}\n" + head + "  variables = { r = 5 }\n}\n", 4, 17, "Invalid value for variable", "var.r: at most 3", false, ""},
		{"env outside an environment", "natsplan { project = \"p\" }\nstream \"S\" {\n  description = env(\"D\")\n}\n", 3, 17, "Error in function call", "allowed only as the whole value of a string setting of an environment block", false, ""},
		{"env in a variable default", "variable \"v\" { default = env(\"D\") }\n", 1, 26, "Error in function call", "use a variable and set it with --var", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := writeConfig(t, c.src)
			envs, diags := loadEnvs(t, []string{file}, Vars{})
			var errs hcl.Diagnostics
			for _, d := range allDiags(envs, diags) {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("want exactly one error, got %d:\n%s", len(errs), render(allDiags(envs, diags)))
			}
			d := errs[0]
			if d.Subject == nil || d.Subject.Filename != file || d.Subject.Start.Line != c.line || d.Subject.Start.Column != c.col {
				t.Errorf("error at %v, want %d:%d:\n%s", d.Subject, c.line, c.col, render(errs))
			}
			if d.Summary != c.summary || !strings.Contains(d.Detail, c.want) {
				t.Errorf("error %q; %q, want %q containing %q", d.Summary, d.Detail, c.summary, c.want)
			}
			// Secrets are never echoed: not in the message, and not as the source line.
			var out strings.Builder
			WriteDiagnostics(&out, nil, errs, false)
			if c.secret {
				lines := strings.Count(out.String(), "\n")
				if lines != 1 {
					t.Errorf("a secret's diagnostic printed %d lines, want its position and message only:\n%s", lines, out.String())
				}
			}
			if c.extraLeftOut != "" && strings.Contains(out.String(), c.extraLeftOut) {
				t.Errorf("the diagnostic shows the secret %q:\n%s", c.extraLeftOut, out.String())
			}
		})
	}
}

const envVars = `natsplan { project = "p" }

variable "replicas" {
  type    = number
  default = 1
  validation {
    condition     = var.replicas <= 3
    error_message = "at most 3 replicas"
  }
}

variable "prefix" {
  type    = string
  default = "dev"
}

environment "dev" {}

environment "staging" {
  variables = { replicas = 3, prefix = "stg" }
}

environment "prod" {
  variables = {
    replicas = 3
    prefix   = "prd"
  }
}

stream "ORDERS" {
  subjects     = ["${var.prefix}.orders.>"]
  num_replicas = var.replicas
}

consumer_group "workers" {
  stream  = "ORDERS"
  mapping = "ORDERS"
  workers { count = 2 }
}

subject_mapping "ORDERS" {
  stream     = "ORDERS"
  source     = "${var.prefix}.orders.*"
  partitions = 2
}

kv "sessions" {
  history      = 2
  num_replicas = var.replicas
}
`

func TestEnvironmentVariables(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, envVars)
	envs, diags := loadEnvs(t, []string{file}, Vars{})
	if all := allDiags(envs, diags); len(all) > 0 {
		t.Fatalf("diagnostics:\n%s", render(all))
	}
	got := map[string]string{}
	for _, e := range envs {
		s := e.Model.Streams["ORDERS"]
		got[e.Env.Name] = fmt.Sprintf("%d %v %d", s.Config.Replicas, s.Config.Subjects, e.Model.Streams["KV_sessions"].Config.Replicas)
	}
	want := map[string]string{"dev": "1 [dev.orders.>] 1", "staging": "3 [stg.orders.>] 3", "prod": "3 [prd.orders.>] 3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-environment values (-want +got):\n%s", diff)
	}
	if names := envNames(envs); names != "dev,staging,prod" {
		t.Errorf("environments in order %s, want declaration order", names)
	}

	// --var-file and then --var override the environment's values.
	vf := filepath.Join(t.TempDir(), "v.tfvars")
	if err := os.WriteFile(vf, []byte("prefix = \"file\"\nreplicas = 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	envs, diags = loadEnvs(t, []string{file}, Vars{Files: []string{vf}, Args: []string{"replicas=1"}}, "prod")
	if all := allDiags(envs, diags); len(all) > 0 {
		t.Fatalf("diagnostics:\n%s", render(all))
	}
	if s := envs[0].Model.Streams["ORDERS"]; s.Config.Replicas != 1 || s.Config.Subjects[0] != "file.orders.>" {
		t.Errorf("prod with --var-file and --var: replicas %d subjects %v, want 1 and file.orders.>", s.Config.Replicas, s.Config.Subjects)
	}
}

func envNames(envs []*EnvModel) string {
	var names []string
	for _, e := range envs {
		names = append(names, e.Env.Name)
	}
	return strings.Join(names, ",")
}

// TestEnvironmentDiagnostics: a diagnostic every environment has is returned once;
// one only some have is in theirs, naming the environment.
func TestEnvironmentDiagnostics(t *testing.T) {
	t.Parallel()
	src := strings.Replace(envVars, `environment "dev" {}`, `environment "dev" {}
environment "big" {
  variables = { replicas = 5 }
}
environment "odd" {
  variables = { replicas = 2 }
}`, 1)
	src += "stream \"BAD\" {\n  max_age = \"forever\"\n}\n" // one error, the same everywhere
	file := writeConfig(t, src)
	envs, common := loadEnvs(t, []string{file}, Vars{})
	if names := envNames(envs); names != "dev,big,odd,staging,prod" {
		t.Fatalf("environments %s", names)
	}
	if len(common) != 1 || common[0].Summary != "Invalid duration" || strings.HasPrefix(common[0].Detail, "In environment") {
		t.Errorf("common diagnostics, want the invalid duration once:\n%s", render(common))
	}
	for _, e := range envs {
		switch e.Env.Name {
		case "big":
			if len(e.Diags) != 1 || e.Diags[0].Detail != `In environment "big": var.replicas: at most 3 replicas` {
				t.Errorf("big's diagnostics:\n%s", render(e.Diags))
			}
		default:
			if len(e.Diags) != 0 {
				t.Errorf("%s's diagnostics:\n%s", e.Env.Name, render(e.Diags))
			}
		}
	}

	// One selected environment: everything it has is common, named nowhere.
	envs, common = loadEnvs(t, []string{file}, Vars{}, "big")
	if len(envs) != 1 || len(envs[0].Diags) != 0 || len(common) != 2 {
		t.Errorf("big alone: %d environments, own %v, common:\n%s", len(envs), envs[0].Diags, render(common))
	}

	// LoadContext reports all of them, and returns the first environment's model.
	m, diags, err := NewLoader().LoadContext(context.Background(), []string{file}, Vars{})
	if err != nil || len(diags) != 2 || m.Streams["ORDERS"].Config.Subjects[0] != "dev.orders.>" {
		t.Errorf("LoadContext: err %v, model of %v, diagnostics:\n%s", err, m.Streams["ORDERS"].Config.Subjects, render(diags))
	}
}

func TestEnvironmentSelection(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, envVars)
	for _, c := range []struct {
		selected []string
		want     string
	}{
		{nil, "dev,staging,prod"},
		{[]string{"prod"}, "prod"},
		{[]string{"prod", "dev"}, "dev,prod"},
		{[]string{"*o*"}, "prod"},
		{[]string{"*"}, "dev,staging,prod"},
		{[]string{"[ds]*", "dev"}, "dev,staging"},
	} {
		envs, diags := loadEnvs(t, []string{file}, Vars{}, c.selected...)
		if diags.HasErrors() || envNames(envs) != c.want {
			t.Errorf("--env %v: %s, want %s:\n%s", c.selected, envNames(envs), c.want, render(diags))
		}
	}
	for _, c := range []struct {
		selected []string
		want     string
	}{
		{[]string{"qa"}, `--env "qa" matches no environment: the configuration declares dev, staging, prod.`},
		{[]string{"prod", "q*"}, `--env "q*" matches no environment`},
		{[]string{"[x"}, `--env "[x" is not a valid pattern`},
	} {
		envs, diags := loadEnvs(t, []string{file}, Vars{}, c.selected...)
		if len(envs) != 0 || len(diags) != 1 || diags[0].Severity != hcl.DiagError || !strings.Contains(diags[0].Detail, c.want) {
			t.Errorf("--env %v: %d environments, diagnostics:\n%s\nwant one error containing %q", c.selected, len(envs), render(diags), c.want)
		}
	}

	// A problem inside an environment that is not selected does not stop the others.
	broken := writeConfig(t, strings.Replace(envVars, `environment "dev" {}`, `environment "dev" {}
environment "qa" {
  password  = "hunter2"
  variables = { replicas = 9 }
}`, 1))
	envs, diags := loadEnvs(t, []string{broken}, Vars{}, "dev", "prod")
	if all := allDiags(envs, diags); len(all) > 0 || envNames(envs) != "dev,prod" {
		t.Errorf("dev and prod beside a broken qa: %s, diagnostics:\n%s", envNames(envs), render(all))
	}
	envs, diags = loadEnvs(t, []string{broken}, Vars{})
	if all := allDiags(envs, diags); len(all) != 2 || len(envs[1].Diags) != 2 || envs[1].Env.Name != "qa" {
		t.Errorf("all environments: qa's two problems are its own, got:\n%s", render(all))
	}

	// Without environment blocks: today's model, and --env is an error.
	plain := writeConfig(t, "natsplan { project = \"p\" }\nstream \"S\" { subjects = [\"s\"] }\n")
	envs, diags = loadEnvs(t, []string{plain}, Vars{})
	if diags.HasErrors() || len(envs) != 1 || envs[0].Env != nil || envs[0].Model.Streams["S"] == nil {
		t.Errorf("no environments: %d models, diagnostics:\n%s", len(envs), render(diags))
	}
	envs, diags = loadEnvs(t, []string{plain}, Vars{}, "prod")
	if len(envs) != 0 || len(diags) != 1 || diags[0].Summary != "No environments" {
		t.Errorf("--env without environments: %d models, diagnostics:\n%s", len(envs), render(diags))
	}
}

// TestEnvironmentModelsIndependent builds many environments at once (run with -race)
// and requires each model to be what Load builds with the same values alone.
func TestEnvironmentModelsIndependent(t *testing.T) {
	t.Parallel()
	base := strings.Split(envVars, `environment "dev" {}`)[0] + envVars[strings.Index(envVars, `stream "ORDERS"`):]
	var src strings.Builder
	src.WriteString(base)
	for i := range 8 {
		fmt.Fprintf(&src, "environment \"e%d\" {\n  variables = { replicas = %d, prefix = \"p%d\" }\n}\n", i, i%3+1, i)
	}
	file := writeConfig(t, src.String())
	envs, diags := loadEnvs(t, []string{file}, Vars{})
	if all := allDiags(envs, diags); len(all) > 0 || len(envs) != 8 {
		t.Fatalf("%d environments, diagnostics:\n%s", len(envs), render(all))
	}
	plain := writeConfig(t, base)
	for i, e := range envs {
		if e.Env.Name != fmt.Sprintf("e%d", i) {
			t.Fatalf("environment %d is %s", i, e.Env.Name)
		}
		want, diags := Load([]string{plain}, Vars{Args: []string{fmt.Sprintf("replicas=%d", i%3+1), fmt.Sprintf("prefix=p%d", i)}})
		if diags.HasErrors() {
			t.Fatalf("load alone:\n%s", render(diags))
		}
		want.Files, e.Model.Files = nil, nil
		if diff := cmp.Diff(want, e.Model, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(model.Decl{}, "Range", "Fields"),
			cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
			t.Errorf("%s differs from Load with its values (-want +got):\n%s", e.Env.Name, diff)
		}
	}
}

// TestLoadEnvironmentsStopsWhenCancelled cancels building three environments at points
// spread over the work and requires the cancellation and nothing else back, soon.
func TestLoadEnvironmentsStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	dir := ctxtest.WriteLargeConfig(t, 4, 50)
	const envs = "environment \"a\" {}\nenvironment \"b\" {}\nenvironment \"c\" {}\n"
	if err := os.WriteFile(filepath.Join(dir, "zz_envs.hcl"), []byte(envs), 0o600); err != nil {
		t.Fatal(err)
	}
	full := ctxtest.EndsAfter(1 << 40)
	got, diags, err := NewLoader().LoadEnvironments(full, []string{dir}, Vars{}, nil)
	if err != nil || len(allDiags(got, diags)) > 0 || len(got) != 3 || len(got[2].Model.Consumers) != 400 {
		t.Fatalf("uncancelled load: err %v, %d environments, diagnostics:\n%s", err, len(got), render(allDiags(got, diags)))
	}
	looks := full.Looks()
	if looks < 600 {
		t.Fatalf("building 3 environments of 600 blocks looked at the context %d times: each must look between blocks", looks)
	}
	for _, at := range []int64{0, 1, 8, looks / 4, looks / 2, looks - 1} {
		t.Run(fmt.Sprint("after ", at, " of ", looks), func(t *testing.T) {
			ctx := ctxtest.EndsAfter(at)
			got, diags, err := NewLoader().LoadEnvironments(ctx, []string{dir}, Vars{}, nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if got != nil || diags != nil {
				t.Errorf("a cancelled load returned environments (%d) or diagnostics (%v)", len(got), diags)
			}
			// After the end: the parsers not started (5 files), each environment's
			// start and its decoder's next look, and the way out.
			if n := ctx.Looks(); n > at+5+2*3+2 {
				t.Errorf("%d looks at the context after it ended at %d: the load went on working", n-at, at)
			}
		})
	}
}

func TestFormatEnvironment(t *testing.T) {
	t.Parallel()
	in := "environment \"prod\" {\ncontext = \"c\"\n  password=env(\"P\")\ntls {\nca = \"x\"\n  handshake_first = true\n}\n  variables = { replicas = 3 }\n}\n"
	want := "environment \"prod\" {\n  context  = \"c\"\n  password = env(\"P\")\n  tls {\n    ca              = \"x\"\n    handshake_first = true\n  }\n  variables = { replicas = 3 }\n}\n"
	got, diags := Format([]byte(in), "x.hcl")
	if diags.HasErrors() || string(got) != want {
		t.Errorf("Format:\n%s\nwant:\n%s\n%s", got, want, render(diags))
	}
}

// TestEnvironmentsExample loads the example of docs/environments.md's shape.
func TestEnvironmentsExample(t *testing.T) {
	t.Parallel()
	envs, diags := loadEnvs(t, []string{"testdata/environments.hcl"}, Vars{})
	if all := allDiags(envs, diags); len(all) > 0 || envNames(envs) != "staging,prod" {
		t.Fatalf("%s, diagnostics:\n%s", envNames(envs), render(all))
	}
	staging, prod := envs[0], envs[1]
	if s := staging.Env.Connection.Servers.Literal; s != "nats://staging-a:4222,nats://staging-b:4222" {
		t.Errorf("staging servers %q", s)
	}
	if x := staging.Model.Expect; x == nil || x.Domain != "hub" || x.Cluster != "" {
		t.Errorf("staging inherits the natsplan block's expect: %+v", x)
	}
	if x := prod.Model.Expect; x == nil || x.Domain != "hub" || x.Cluster != "prod-east" {
		t.Errorf("prod's expect over the natsplan block's: %+v", x)
	}
	if r := [2]int{staging.Model.Streams["ORDERS"].Config.Replicas, prod.Model.Streams["ORDERS"].Config.Replicas}; r != [2]int{1, 3} {
		t.Errorf("replicas staging, prod = %v, want [1 3]", r)
	}
	if p := prod.Env.Connection.Password; p != (model.Setting{Env: "PROD_NATS_PASSWORD"}) {
		t.Errorf("prod password %+v", p)
	}
}
