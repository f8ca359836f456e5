package main

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestTimeout: --timeout wins, else $NATS_TIMEOUT, else the default; the default
// never hides the variable.
func TestTimeout(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  string
		want time.Duration
		bad  bool
	}{
		{"default", nil, "", 5 * time.Second, false},
		{"variable", nil, "1s", time.Second, false},
		{"flag", []string{"--timeout", "2s"}, "", 2 * time.Second, false},
		{"flag over variable", []string{"--timeout", "2s"}, "1s", 2 * time.Second, false},
		{"flag over a bad variable", []string{"--timeout", "2s"}, "abc", 2 * time.Second, false},
		{"bad variable", nil, "abc", 0, true},
		{"zero variable", nil, "0s", 0, true},
		{"negative variable", nil, "-1s", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"NATS_TIMEOUT": c.env}
			f := newFactory(&IOStreams{}, func(k string) string { return env[k] }, nil)
			root := newCmdRoot(f)
			var got time.Duration
			var err error
			root.AddCommand(&cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error {
				got, err = f.Global.timeout(f.getenv)
				return nil
			}})
			root.SetArgs(append([]string{"probe"}, c.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if (err != nil) != c.bad || got != c.want {
				t.Errorf("timeout %v, error %v; want %v, error %v", got, err, c.want, c.bad)
			}
		})
	}
}
