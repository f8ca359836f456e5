package main

import (
	"runtime/debug"
	"testing"
)

// TestVersionFrom: every way natsplan is built says what it is built from.
func TestVersionFrom(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "5df8698abcdef0123456789abcdef0123456789a"
	cases := []struct {
		name     string
		info     *debug.BuildInfo
		override string
		want     string
		modified bool
	}{
		{"go install at a tag", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}}, "", "v1.2.3", false},
		{"go build in a checkout (pseudo-version)", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130161900-5df8698abcde+dirty"}, Settings: vcs(rev, "true")},
			"", "v0.0.0-20261130161900-5df8698abcde+dirty", true},
		{"checkout without a module version", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "", "devel-5df8698abcde", false},
		{"dirty checkout without a module version", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "", "devel-5df8698abcde-dirty", true},
		{"no VCS (go run, tests)", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "devel", false},
		{"ldflags override", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "1.0.0", "1.0.0", false},
		{"no build info", nil, "", "devel", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := versionFrom(c.info, c.override)
			if v.Version != c.want || v.Modified != c.modified {
				t.Errorf("version %q modified %v, want %q modified %v", v.Version, v.Modified, c.want, c.modified)
			}
			if v.APILevel == 0 || v.Server == "" {
				t.Errorf("no server version or API level: %+v", v)
			}
		})
	}
}
