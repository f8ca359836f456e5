package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestLockedApplyRefusesBeforeWriting: an apply whose plan has static errors refuses
// before it takes the lock, so "nothing was changed" holds: the server is left with
// no stream at all, not even the lock's bucket.
func TestLockedApplyRefusesBeforeWriting(t *testing.T) {
	const lockBlock = "natsplan {\n  project = \"shop\"\n  lock {\n    ttl = \"2s\"\n  }\n}\n"
	cases := []struct {
		name, src string
		saved     bool // apply a plan saved from the files
		want      string
	}{
		{
			name: "error finding",
			src:  lockBlock + "stream \"A\" {\n  subjects = [\"a.>\"]\n}\nstream \"B\" {\n  subjects = [\"a.b\"]\n}\n",
			want: "NP402",
		},
		{
			name:  "error finding in a saved plan",
			src:   lockBlock + "stream \"A\" {\n  subjects = [\"a.>\"]\n}\nstream \"B\" {\n  subjects = [\"a.b\"]\n}\n",
			saved: true,
			want:  "NP402",
		},
		{
			name: "consumer of an undeclared stream",
			src:  lockBlock + "consumer \"NOPE\" \"c\" {\n  ack_policy = \"explicit\"\n}\n",
			want: "NOPE",
		},
		{
			name: "load diagnostic",
			src:  lockBlock + "stream \"A\" {\n  subjects = [\"a.>\"]\n  max_age = \"soon\"\n}\n",
			want: "max_age",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			url := s.ClientURL()
			target := writeConfig(t, map[string]string{"shop.hcl": tc.src})
			if tc.saved {
				planFile := filepath.Join(t.TempDir(), "plan.json")
				cli(t, url, "plan", "--out", planFile, target) // exits 1: the plan has errors
				target = planFile
			}
			code, out, errOut := cli(t, url, "apply", "--auto-approve", target)
			if code != exitError || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("apply: exit %d, want 1 mentioning %q\n%s\n%s", code, tc.want, out, errOut)
			}
			if strings.Contains(errOut, "Taking the apply lock") {
				t.Errorf("apply took the lock for a plan it refuses:\n%s", errOut)
			}
			names := jetStream(t, s).StreamNames(context.Background())
			var streams []string
			for n := range names.Name() {
				streams = append(streams, n)
			}
			if names.Err() != nil {
				t.Fatal(names.Err())
			}
			if len(streams) != 0 {
				t.Errorf("a refused apply left streams on the server: %v", streams)
			}
		})
	}
}
