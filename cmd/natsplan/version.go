package main

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/plan/render"
)

// version, when set at build time with -ldflags "-X main.version=1.2.3", overrides
// what the build info says (for packagers that build from a tarball, with no VCS).
var version string

// versionInfo is what natsplan says it is: `version`, and natsplan_version in plans.
type versionInfo struct {
	// Version is the module version (`go install ...@v1.2.3`: "v1.2.3"; a build in a
	// checkout: Go's pseudo-version of the commit), else "devel" and the commit.
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // the VCS commit built from, when known
	Modified bool   `json:"modified,omitempty"` // the checkout had uncommitted changes
	Go       string `json:"go"`
	Server   string `json:"nats_server"`
	APILevel int    `json:"api_level"`
}

// buildVersion reads the build info once.
var buildVersion = sync.OnceValue(func() versionInfo {
	info, _ := debug.ReadBuildInfo()
	return versionFrom(info, version)
})

// versionFrom says which version a binary is from its build info: the -ldflags
// override, else the module version, else the commit it was built from; "devel" with
// no commit only for builds that carry none (go run, tests).
func versionFrom(info *debug.BuildInfo, override string) versionInfo {
	v := versionInfo{Server: server.VERSION, APILevel: server.JSApiLevel}
	if info == nil {
		v.Version = "devel"
		if override != "" {
			v.Version = override
		}
		return v
	}
	v.Go = info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	switch {
	case override != "":
		v.Version = override
	case info.Main.Version != "" && info.Main.Version != "(devel)":
		v.Version = info.Main.Version
	case v.Revision != "":
		v.Version = "devel-" + short(v.Revision)
		if v.Modified {
			v.Version += "-dirty"
		}
	default:
		v.Version = "devel"
	}
	return v
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func newCmdVersion(f *Factory) *cobra.Command {
	var format Format
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print natsplan's version and the JetStream API level it was built against",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkFormat(format, formatText, formatJSON); err != nil {
				return err
			}
			v := buildVersion()
			if asJSON || format == formatJSON {
				return render.WriteJSON(f.IO.Out, v)
			}
			commit := ""
			// A devel version already names its commit.
			if v.Revision != "" && !strings.HasPrefix(v.Version, "devel-") {
				commit = ", commit " + short(v.Revision)
				if v.Modified {
					commit += " with uncommitted changes"
				}
			}
			_, err := fmt.Fprintf(f.IO.Out, "natsplan %s (%s%s, nats-server %s, JetStream API level %d)\n",
				v.Version, v.Go, commit, v.Server, v.APILevel)
			return err
		},
	}
	formatFlag(c, &format, formatText, formatJSON)
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON (the same as --format json)")
	c.Flags().MarkHidden("json")
	return c
}
