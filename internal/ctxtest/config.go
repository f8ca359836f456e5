package ctxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteLargeConfig writes a configuration into a temporary folder that gives loading
// and checking real work to interrupt: files × streamsPerFile streams, each with a
// consumer and a consumer group, so that parsing, decoding, expanding and every check
// run long. It returns the folder.
func WriteLargeConfig(t testing.TB, files, streamsPerFile int) string {
	t.Helper()
	dir := t.TempDir()
	for f := range files {
		var b strings.Builder
		if f == 0 {
			b.WriteString("natsplan {\n  project = \"big\"\n}\n")
		}
		for s := range streamsPerFile {
			name := fmt.Sprintf("S%d_%d", f, s)
			fmt.Fprintf(&b, "stream %q {\n  subjects = [\"%s.>\"]\n  max_age = \"1d\"\n}\n", name, strings.ToLower(name))
			fmt.Fprintf(&b, "consumer %q \"audit\" {\n  ack_policy = \"explicit\"\n  ack_wait = \"30s\"\n}\n", name)
			fmt.Fprintf(&b, "consumer_group \"g%s\" {\n  stream = %q\n  workers {\n    count = 2\n    fetch_batch = 1\n  }\n}\n", name, name)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.hcl", f)), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
