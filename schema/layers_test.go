package schema

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers keeps the language below the planner: schema must not depend on plan,
// on the server client or on anything that talks to a server (docs/architecture.md,
// "Layers").
func TestLayers(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, d := range deps {
		for _, above := range []string{"/plan", "/internal/jsapi", "/observe", "/apply", "/preflight", "/cmd/"} {
			if strings.HasPrefix(d, "github.com/natsplan/natsplan") && strings.Contains(d[len("github.com/natsplan/natsplan"):], above) {
				t.Errorf("schema depends on %s", d)
			}
		}
	}
}
