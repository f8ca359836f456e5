package schema

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/natsplan/natsplan/model"
)

func TestLoadServices(t *testing.T) {
	src := `
natsplan {
  project = "shop"
}
stream "ORDERS" {
  subjects = ["orders.>"]
}
consumer "ORDERS" "audit" {}
consumer_group "email" {
  stream = "ORDERS"
}
kv "sessions" {}
object_store "assets" {}
service "worker" {
  consumes     = [consumer_group.email, consumer.ORDERS.audit, "consumer.ORDERS.audit"]
  publishes    = ["orders.*.shipped"]
  reads        = [stream.ORDERS, object_store.assets]
  writes       = [kv.sessions]
  inbox_prefix = "_INBOX_workers.shop"
}
service "checkout" { publishes = ["orders.*.created"] }
`
	path := filepath.Join(t.TempDir(), "shop.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m := mustLoad(t, []string{path}, Vars{})
	strip := func(s *model.Service) model.Service { c := *s; c.Decl = nil; return c }
	want := map[string]model.Service{
		"worker": {Name: "worker", Publishes: []string{"orders.*.shipped"},
			Consumes: []string{"consumer_group.email", "consumer.ORDERS.audit", "consumer.ORDERS.audit"},
			Reads:    []string{"stream.ORDERS", "object_store.assets"}, Writes: []string{"kv.sessions"},
			InboxPrefix: "_INBOX_workers.shop"},
		"checkout": {Name: "checkout", Publishes: []string{"orders.*.created"}, InboxPrefix: "_INBOX_checkout"},
	}
	got := map[string]model.Service{}
	for n, s := range m.Services {
		got[n] = strip(s)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("services (-want +got):\n%s", d)
	}
	if r := m.Services["worker"].Decl.FieldRange("reads[1]"); r.Start.Line != 17 || r.Start.Column != 34 {
		t.Errorf("reads[1] recorded at %v, want line 17, column 34", r)
	}
}
