package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsDocumented: every flag in --help is documented: a command's own flags on
// its page in docs/commands, the global flags in docs/commands/README.md and, for the
// connection flags, docs/connecting.md.
func TestFlagsDocumented(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("../../docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	root := newCmdRoot(newFactory(&IOStreams{}, func(string) string { return "" }, nil))
	index, connecting := read("commands/README.md"), read("connecting.md")
	root.PersistentFlags().VisitAll(func(fl *pflag.Flag) {
		if !strings.Contains(index, "--"+fl.Name) {
			t.Errorf("global flag --%s is not in docs/commands/README.md", fl.Name)
		}
	})
	for _, name := range []string{"server", "context", "no-context", "creds", "nkey", "jwt", "seed", "user", "password",
		"token", "tlscert", "tlskey", "tlsca", "tlsfirst", "socks-proxy", "js-domain", "timeout", "trace", "embedded"} {
		if root.PersistentFlags().Lookup(name) == nil {
			t.Errorf("docs/connecting.md's flag --%s does not exist", name)
		}
		if !strings.Contains(connecting, "--"+name) {
			t.Errorf("connection flag --%s is not in docs/connecting.md", name)
		}
	}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		page := read(filepath.Join("commands", c.Name()+".md"))
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if fl.Hidden || fl.Name == "help" || root.PersistentFlags().Lookup(fl.Name) != nil {
				return
			}
			if !strings.Contains(page, "--"+fl.Name) {
				t.Errorf("%s --%s is not in docs/commands/%s.md", c.Name(), fl.Name, c.Name())
			}
		})
	}
}
