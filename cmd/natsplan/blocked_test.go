package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

const blockedBefore = `
natsplan {
  project = "shop"
}

stream "EVENTS" {
  subjects      = ["a.>"]
  allow_msg_ttl = true
}
`

// blockedAfter turns allow_msg_ttl off, which the server refuses, and changes two
// fields it accepts.
const blockedAfter = `
natsplan {
  project = "shop"
}

stream "EVENTS" {
  subjects = ["b.>"]
  max_msgs = 10
}
`

// TestBlockedChangeShowsEveryDifference: a change the server refuses in part is still
// a change. plan lists every difference of it, marks it and the refused field blocked
// in text, JSON and markdown, never says "No changes", and exits 1; drift reports it
// as drift (exit 2); apply refuses it and changes nothing.
func TestBlockedChangeShowsEveryDifference(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	mustCLI(t, url, "apply", "--auto-approve", writeConfig(t, map[string]string{"shop.hcl": blockedBefore}))
	after := writeConfig(t, map[string]string{"shop.hcl": blockedAfter})

	code, text, errOut := cli(t, url, "plan", after)
	if code != exitError {
		t.Fatalf("plan: exit %d, want 1\n%s\n%s", code, text, errOut)
	}
	for _, want := range []string{
		"~ stream.EVENTS", "BLOCKED", "blocked: the server refuses to change allow_msg_ttl",
		`subjects: ["a.>"] -> ["b.>"]`, "max_msgs: -1 (unlimited) -> 10",
		"allow_msg_ttl: true -> false  # one way  # blocked", "NP303", "1 blocked",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q\n%s", want, text)
		}
	}
	if strings.Contains(text, "No changes") {
		t.Errorf("plan text says there are no changes\n%s", text)
	}

	code, out, errOut := cli(t, url, "plan", "--format", "json", after)
	if code != exitError {
		t.Fatalf("plan --format json: exit %d, want 1\n%s", code, errOut)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan --format json is not one plan document: %v\n%s", err, out)
	}
	if len(p.Changes) != 1 || p.Changes[0].Blocked == "" || p.Summary.Blocked != 1 || p.Summary.Update != 0 {
		t.Fatalf("want one blocked change, counted as blocked only\n%s", out)
	}
	blocked := map[string]bool{}
	for _, f := range p.Changes[0].Fields {
		blocked[f.Path] = f.Blocked
	}
	if len(blocked) != 3 || !blocked["allow_msg_ttl"] || blocked["subjects"] || blocked["max_msgs"] {
		t.Fatalf("want subjects, max_msgs and a blocked allow_msg_ttl, got %v\n%s", blocked, out)
	}

	if code, md, _ := cli(t, url, "plan", "--format", "markdown", after); code != exitError ||
		!strings.Contains(md, "**1 blocked**") || !strings.Contains(md, "(blocked)") || !strings.Contains(md, "max_msgs") {
		t.Errorf("plan --format markdown: exit %d, want 1 with the blocked change and every field\n%s", code, md)
	}

	code, out, errOut = cli(t, url, "drift", after)
	if code != exitChanges {
		t.Fatalf("drift: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"stream.EVENTS (changed)", "# blocked:", "max_msgs: files 10", "subjects: files", "allow_msg_ttl: files false, server true  # blocked"} {
		if !strings.Contains(out, want) {
			t.Errorf("drift lacks %q\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "NP303") {
		t.Errorf("drift does not name the refusal on stderr\n%s", errOut)
	}
	if strings.Contains(out, "No drift") {
		t.Errorf("drift says in sync\n%s", out)
	}

	code, out, errOut = cli(t, url, "apply", "--auto-approve", after)
	if code != exitError || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("apply of a blocked change: exit %d, want 1 and nothing changed\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := cli(t, url, "plan", "--detailed-exitcode", writeConfig(t, map[string]string{"shop.hcl": blockedBefore})); code != exitOK {
		t.Fatalf("the server changed although apply refused: exit %d\n%s", code, out)
	}
}
