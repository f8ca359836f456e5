package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/natsplan/natsplan/internal/embedded"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"natsplan": func() { os.Exit(run(os.Args[1:], newSystemIO(), os.Getenv)) },
	})
}

// TestScripts runs the CLI scenarios in testdata/script. Each script gets its own
// real nats-server ($NATS_URL); `server restart` is not needed since --embedded covers
// persistence.
func TestScripts(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			s, err := embedded.Start(embedded.Options{StoreDir: filepath.Join(env.WorkDir, ".nats"), Name: "script"})
			if err != nil {
				return err
			}
			env.Defer(s.Stop)
			env.Setenv("NATS_URL", s.ClientURL())
			env.Setenv("EXAMPLES", filepath.Join(root, "examples"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// limitedserver MAX_REQUEST_BATCH MAX_ACK_PENDING: start a second server with
			// those server-wide JetStream limits (jetstream { limits {} }) and set
			// $LIMITED_URL to it.
			"limitedserver": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: limitedserver MAX_REQUEST_BATCH MAX_ACK_PENDING")
				}
				batch, err := strconv.Atoi(args[0])
				ts.Check(err)
				ackPending, err := strconv.Atoi(args[1])
				ts.Check(err)
				s, err := embedded.Start(embedded.Options{StoreDir: ts.MkAbs(".nats-limited"), Name: "limited",
					MaxRequestBatch: batch, MaxAckPending: ackPending})
				ts.Check(err)
				ts.Defer(s.Stop)
				ts.Setenv("LIMITED_URL", s.ClientURL())
			},
			// islink FILE: the file is a symbolic link (! islink: it is not).
			"islink": func(ts *testscript.TestScript, neg bool, args []string) {
				st, err := os.Lstat(ts.MkAbs(args[0]))
				ts.Check(err)
				if (st.Mode()&os.ModeSymlink != 0) == neg {
					ts.Fatalf("%s: symbolic link is %v", args[0], !neg)
				}
			},
			// contains FILE STRING...: the file holds every string (! contains: none of them).
			"contains": func(ts *testscript.TestScript, neg bool, args []string) {
				data := ts.ReadFile(args[0])
				for _, want := range args[1:] {
					if strings.Contains(data, want) == neg {
						ts.Fatalf("%s: contains %q is %v", args[0], want, !neg)
					}
				}
			},
		},
	})
}
