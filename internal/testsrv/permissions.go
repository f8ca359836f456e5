package testsrv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// Users of StartPermissioned, all with password "p", in account SHOP.
const (
	// UserAdmin may do anything.
	UserAdmin = "admin"
	// UserReader may read every stream and consumer and change nothing (nor ask
	// $SYS.REQ.USER.INFO).
	UserReader = "reader"
	// UserStreams may also create and update streams, but not consumers.
	UserStreams = "streams"
)

// readSubjects are the JetStream API requests a read-only user may send.
var readSubjects = []string{"$JS.API.INFO", "$JS.API.STREAM.INFO.>", "$JS.API.STREAM.LIST", "$JS.API.STREAM.NAMES",
	"$JS.API.CONSUMER.INFO.>", "$JS.API.CONSUMER.LIST.>", "$JS.API.CONSUMER.NAMES.>"}

// Permissioned is a JetStream server whose users have the permissions named above.
type Permissioned struct {
	*server.Server
}

// URL is the server's client URL with user's credentials.
func (p *Permissioned) URL(user string) string {
	return strings.Replace(p.ClientURL(), "nats://", "nats://"+user+":p@", 1)
}

// StartPermissioned starts a JetStream server with an admin, a read-only and a
// streams-only user, and stops it with the test.
func StartPermissioned(t testing.TB) *Permissioned {
	t.Helper()
	quote := func(subjects []string) string {
		q := make([]string, len(subjects))
		for i, s := range subjects {
			q[i] = fmt.Sprintf("%q", s)
		}
		return strings.Join(q, ", ")
	}
	streams := append(append([]string(nil), readSubjects...), "$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>")
	conf := filepath.Join(t.TempDir(), "server.conf")
	src := fmt.Sprintf(`
server_name: perm
listen: "127.0.0.1:-1"
jetstream { store_dir: %q }
accounts {
  SHOP {
    jetstream: enabled
    users [
      { user: %s, password: p }
      { user: %s, password: p, permissions: { publish: { allow: [%s] }, subscribe: { allow: ["_INBOX.>"] } } }
      { user: %s, password: p, permissions: { publish: { allow: [%s] }, subscribe: { allow: ["_INBOX.>"] } } }
    ]
  }
}
`, t.TempDir(), UserAdmin, UserReader, quote(readSubjects), UserStreams, quote(streams))
	if err := os.WriteFile(conf, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	return &Permissioned{StartOptions(t, opts)}
}
