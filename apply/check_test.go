package apply

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/plan"
)

// TestRunRejectsPlansThatCanNotRun checks the plans Run will not start: the error names
// the change and the problem, and no request is sent (the client has no connection, so
// any request would panic).
func TestRunRejectsPlansThatCanNotRun(t *testing.T) {
	const cfg = `{"subjects":["a.>"]}`
	noName := stream(plan.ActCreate, "A", 1, cfg)
	noName.Name = ""
	badKind := stream(plan.ActCreate, "A", 1, cfg)
	badKind.Kind = "topic"
	badAction := stream(plan.ActCreate, "A", 1, cfg)
	badAction.Action = "rename"
	noStream := consumer(plan.ActCreate, "A", "c", 1, `{}`)
	noStream.Stream = ""
	cycleA := stream(plan.ActCreate, "A", 1, cfg, "stream.B")
	cycleB := stream(plan.ActCreate, "B", 1, cfg, "stream.A")
	cases := []struct {
		name    string
		changes []*plan.Change
		want    string
	}{
		{"no name", []*plan.Change{noName}, "no name"},
		{"unknown kind", []*plan.Change{badKind}, `unknown kind "topic"`},
		{"unknown action", []*plan.Change{badAction}, `unknown action "rename"`},
		{"consumer without stream", []*plan.Change{noStream}, "consumer without a stream"},
		{"create without config", []*plan.Change{stream(plan.ActCreate, "A", 1, "")}, "create needs the config"},
		{"stream replace", []*plan.Change{stream(plan.ActReplace, "A", 1, cfg)}, "a stream is never replaced"},
		{"dependency in a later step", []*plan.Change{
			consumer(plan.ActCreate, "A", "c", 1, `{}`, "stream.A"), stream(plan.ActCreate, "A", 2, cfg)},
			"consumer.A.c (step 1) depends on stream.A, which changes only in a later step"},
		{"cycle", []*plan.Change{cycleA, cycleB}, "dependency cycle"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), &jsapi.Client{}, &plan.Plan{Changes: tc.changes}, Options{AllowDelete: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			var refused *RefusedError
			if res != nil || errors.As(err, &refused) {
				t.Errorf("a plan that can not run is not a refusal: %v %v", res, err)
			}
		})
	}
}

// TestGraph checks the dependencies Run derives: addresses the plan does not change are
// satisfied, an object changed in several steps is a chain, and a dependency on such an
// object means its parts up to the dependant's step.
func TestGraph(t *testing.T) {
	const cfg = `{"subjects":["a.>"]}`
	p := &plan.Plan{Changes: []*plan.Change{
		stream(plan.ActUpdate, "A", 1, cfg),                                     // 0: move
		consumer(plan.ActCreate, "A", "c", 2, `{}`, "stream.A", "stream.LIVE"),  // 1
		stream(plan.ActUpdate, "A", 3, cfg),                                     // 2: then scale
		consumer(plan.ActCreate, "A", "d", 3, `{}`, "consumer.A.c", "stream.A"), // 3
		consumer(plan.ActCreate, "A", "e", 3, `{}`, "consumer.A.d"),             // 4: same-step dependency
	}}
	deps, err := graph(p)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{nil, {0}, {0}, {1, 0, 2}, {3}}
	for i := range want {
		if !equalInts(deps[i], want[i]) {
			t.Errorf("deps of %s = %v, want %v", p.Changes[i].Address, deps[i], want[i])
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestProgressTTY checks that on a TTY only finished lines stay, with a redrawn status
// line, and that plain output has no terminal codes.
func TestProgressTTY(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var buf bytes.Buffer
		p := newProgress(&buf, tty, 2)
		a := &StepResult{Address: "stream.A", Action: plan.ActCreate}
		b := &StepResult{Address: "stream.B", Action: plan.ActDelete}
		p.started(a)
		p.started(b)
		a.Status, a.Duration = StatusDone, 12*time.Millisecond
		p.done(a)
		b.Status, b.Err, b.Duration = StatusFailed, errors.New("boom"), 3*time.Millisecond
		p.done(b)
		p.close()
		out := buf.String()
		for _, l := range []string{"stream.A: created (12ms)", "stream.B: delete failed (3ms): boom"} {
			if !strings.Contains(out, l) {
				t.Errorf("tty=%v: output lacks %q:\n%q", tty, l, out)
			}
		}
		hasCodes := strings.Contains(out, "\x1b[K")
		if hasCodes != tty {
			t.Errorf("tty=%v: terminal codes present = %v:\n%q", tty, hasCodes, out)
		}
		if tty && (strings.Contains(out, "creating...") || !strings.Contains(out, "[1/2] in flight: stream.B")) {
			t.Errorf("tty: want a status line instead of start lines:\n%q", out)
		}
		if !tty && !strings.Contains(out, "stream.A: creating...\nstream.B: deleting...\n") {
			t.Errorf("plain: want a start line per change:\n%q", out)
		}
	}
}
