package connect

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ContextNames lists the saved nats contexts in the nats CLI's configuration folder
// (ConfigDir, else $XDG_CONFIG_HOME or ~/.config), for shell completion of --context.
// A folder that can not be read lists none.
func ContextNames(configDir string) []string {
	if configDir == "" {
		configDir = defaultConfigDir()
	}
	if configDir == "" {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(configDir, "nats", "context"))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() && name != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
