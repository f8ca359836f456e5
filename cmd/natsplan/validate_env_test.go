package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validateEnvConfig = `natsplan { project = "shop" }

variable "replicas" {
  type    = number
  default = 1
  validation {
    condition     = var.replicas <= 3
    error_message = "at most 3 replicas"
  }
}

environment "dev" {}

environment "prod" {
  servers   = "nats://prod:4222"
  password  = env("PROD_NATS_PASSWORD")
  variables = { replicas = REPLICAS }
}

stream "ORDERS" {
  subjects     = ["orders.>"]
  num_replicas = var.replicas
}

stream "AUDIT" {
  subjects = ["audit.>"]
}

consumer "ORDERS" "c" {
  ack_policy = "explicit"
}
`

// TestValidateEnvironments: validate builds and checks every environment; what only
// one has names it, and a secret written in a file is refused without being shown.
func TestValidateEnvironments(t *testing.T) {
	t.Parallel()
	write := func(src string) string {
		file := filepath.Join(t.TempDir(), "shop.hcl")
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	ok := write(strings.Replace(validateEnvConfig, "REPLICAS", "3", 1))
	code, out, errOut := offlineCLI(t, "validate", ok)
	if code != 0 || out != "Valid: 1 files, 2 environments: dev (2 streams, 1 consumers), prod (2 streams, 1 consumers).\n" {
		t.Errorf("valid environments: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	bad := write(strings.Replace(validateEnvConfig, "REPLICAS", "5", 1))
	code, out, errOut = offlineCLI(t, "validate", bad)
	want := bad + `:7:21: error: Invalid value for variable; In environment "prod": var.replicas: at most 3 replicas`
	if code != exitError || out != "" || !strings.Contains(errOut, want) || strings.Count(errOut, "error:") != 1 {
		t.Errorf("prod invalid: exit %d, stdout %q, stderr:\n%s\nwant %q", code, out, errOut, want)
	}

	secret := write(strings.Replace(strings.Replace(validateEnvConfig, "REPLICAS", "3", 1), `env("PROD_NATS_PASSWORD")`, `"hunter2"`, 1))
	code, _, errOut = offlineCLI(t, "validate", secret)
	if code != exitError || !strings.Contains(errOut, secret+":16:15: error: Secret written in a file") || strings.Contains(errOut, "hunter2") {
		t.Errorf("secret literal: exit %d, stderr:\n%s", code, errOut)
	}
}
