package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadme: the README's first commands are the two that work on a fresh machine
// (readme_embedded.txtar runs the first), and the tour says how to get the binary it
// uses, under the module's real path.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile("(?s)```sh\n(.*?)```").FindSubmatch(readme)
	if first == nil {
		t.Fatal("the README has no sh block")
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(string(first[1])), "\n") {
		cmds = append(cmds, strings.TrimSpace(strings.SplitN(l, "#", 2)[0]))
	}
	want := []string{"go run ./cmd/natsplan apply --embedded .embedded --auto-approve examples/shop", "go test ./..."}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's first commands are\n%s\nwant\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	module := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(gomod), "\n", 2)[0], "module"))
	for _, w := range []string{"go install " + module + "/cmd/natsplan@latest", "go run ./cmd/natsplan"} {
		if !strings.Contains(string(readme), w) {
			t.Errorf("the README does not say %q", w)
		}
	}
}
