package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestApplyWithoutPermission: a user who may not send a kind of request gets the
// permission error for the first change of that kind at once, one summarising line
// for the rest, and no timeouts: a denied request is not answered by the server, so
// a change that waited for its reply would end "outcome unknown". The denied
// $SYS.REQ.USER.INFO of such users is never printed.
func TestApplyWithoutPermission(t *testing.T) {
	s := testsrv.StartPermissioned(t)
	streams := func(n int, consumers bool) string {
		var b strings.Builder
		b.WriteString("natsplan {\n  project = \"shop\"\n}\n")
		for i := range n {
			fmt.Fprintf(&b, "stream \"S%d\" {\n  subjects = [\"s%d.>\"]\n}\n", i, i)
			if consumers {
				fmt.Fprintf(&b, "consumer \"S%d\" \"c\" {\n  ack_policy = \"explicit\"\n}\n", i)
			}
		}
		return b.String()
	}
	cases := []struct {
		name, user, src string
		wantDone        int
		wantDenied      string // the subject prefix of the one failure printed
		wantMore        int    // changes summarised in one line
	}{
		{"read-only user, 50 streams", testsrv.UserReader, streams(50, false), 0, "$JS.API.STREAM.CREATE.", 49},
		{"streams-only user, 5 streams with a consumer each", testsrv.UserStreams, streams(5, true), 5, "$JS.API.CONSUMER.CREATE.", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeConfig(t, map[string]string{"shop.hcl": tc.src})
			code, out, errOut := cli(t, s.URL(tc.user), "apply", "--auto-approve", dir)
			if code != exitError {
				t.Fatalf("apply: exit %d, want 1\n%s\n%s", code, out, errOut)
			}
			var failed []string
			for _, l := range strings.Split(errOut, "\n") {
				if strings.Contains(l, "failed (") {
					failed = append(failed, l)
				}
			}
			if len(failed) != 1 || !strings.Contains(failed[0], "permission denied for "+tc.wantDenied) ||
				!strings.Contains(failed[0], "the user needs publish permission on "+tc.wantDenied+">") {
				t.Errorf("want one failure line, for the permission on %s>; got %q\n%s", tc.wantDenied, failed, errOut)
			}
			if want := fmt.Sprintf("%d more change(s) that need the same permission", tc.wantMore); !strings.Contains(errOut, want) {
				t.Errorf("no summarising line %q\n%s", want, errOut)
			}
			if want := fmt.Sprintf("Apply incomplete: %d done", tc.wantDone); !strings.Contains(out, want) || !strings.Contains(out, " 0 outcome unknown") {
				t.Errorf("summary: want %q and no unknown outcome\n%s", want, out)
			}
			for _, never := range []string{"deadline", "timeout", "Permissions Violation", "USER.INFO"} {
				if strings.Contains(out+errOut, never) {
					t.Errorf("output mentions %q\n%s\n%s", never, out, errOut)
				}
			}
		})
	}
	// Reading needs no more than the read-only permissions, and the denied account
	// lookup is silent.
	dir := writeConfig(t, map[string]string{"shop.hcl": streams(3, true)})
	code, out, errOut := cli(t, s.URL(testsrv.UserReader), "plan", dir)
	if code != 0 || errOut != "" {
		t.Errorf("plan as the read-only user: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// TestLockWithoutPermission: a user who may not create the lock's bucket learns so at
// once, from the lock, before any change is sent.
func TestLockWithoutPermission(t *testing.T) {
	s := testsrv.StartPermissioned(t)
	dir := writeConfig(t, map[string]string{"shop.hcl": "natsplan {\n  project = \"shop\"\n  lock {}\n}\nstream \"S\" {\n  subjects = [\"s.>\"]\n}\n"})
	code, out, errOut := cli(t, s.URL(testsrv.UserReader), "apply", "--auto-approve", dir)
	want := "apply lock natsplan_lock/shop: permission denied for $JS.API.STREAM.CREATE.KV_natsplan_lock: the user needs publish permission on $JS.API.STREAM.CREATE.>"
	if code != exitError || !strings.Contains(errOut, want) {
		t.Fatalf("apply: exit %d, want 1 with %q\n%s\n%s", code, want, out, errOut)
	}
	for _, never := range []string{"deadline", "creating...", "server reported"} {
		if strings.Contains(errOut, never) {
			t.Errorf("stderr mentions %q\n%s", never, errOut)
		}
	}
}
