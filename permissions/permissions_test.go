package permissions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/natsplan/natsplan/internal/lock"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/permissions"
	"github.com/natsplan/natsplan/schema"
)

func load(t *testing.T, src string) *model.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, diags := schema.Load([]string{path}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	return m
}

const topology = `
natsplan {
  project = "shop"
}
stream "ORDERS" {
  subjects     = ["orders.>"]
  allow_direct = true
}
subject_mapping "by_customer" {
  stream     = "ORDERS"
  source     = "orders.*.*"
  partitions = 3
  key        = [1]
}
consumer_group "fulfilment" {
  stream      = "ORDERS"
  mapping     = "by_customer"
  ordering    = "per_key"
  dead_letter { stream = "ORDERS_DLQ" }
}
consumer_group "email" {
  stream = "ORDERS"
}
consumer "ORDERS" "audit" {}
kv "sessions" {}
`

func role(roles []*permissions.Role, name string) *permissions.Role {
	for _, r := range roles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func TestDerive(t *testing.T) {
	cases := []struct {
		name, service  string
		pub, sub       []string
		inboxPrefixSet string
	}{
		{name: "publisher", service: `service "checkout" { publishes = ["orders.*.created", "orders.*.created"] }`,
			pub: []string{"orders.*.created"}, sub: []string{"_INBOX_checkout.>"}},
		{name: "every lane of a group, and the dead letters", service: `service "fulfilment" {
  consumes = [consumer_group.fulfilment]
  reads    = [stream.ORDERS_DLQ]
}`, pub: []string{
			"$JS.ACK.ORDERS.fulfilment-0.>", "$JS.ACK.ORDERS.fulfilment-1.>", "$JS.ACK.ORDERS.fulfilment-2.>",
			"$JS.API.CONSUMER.INFO.ORDERS.fulfilment-0", "$JS.API.CONSUMER.INFO.ORDERS.fulfilment-1", "$JS.API.CONSUMER.INFO.ORDERS.fulfilment-2",
			"$JS.API.CONSUMER.MSG.NEXT.ORDERS.fulfilment-0", "$JS.API.CONSUMER.MSG.NEXT.ORDERS.fulfilment-1", "$JS.API.CONSUMER.MSG.NEXT.ORDERS.fulfilment-2",
			"$JS.API.DIRECT.GET.ORDERS", "$JS.API.STREAM.INFO.ORDERS", "$JS.API.STREAM.INFO.ORDERS_DLQ",
			"$JS.API.STREAM.MSG.GET.ORDERS", "$JS.API.STREAM.MSG.GET.ORDERS_DLQ",
		}, sub: []string{"_INBOX_fulfilment.>"}},
		{name: "one consumer, a bucket written, an own inbox", service: `service "auditor" {
  consumes     = [consumer.ORDERS.audit]
  writes       = [kv.sessions]
  inbox_prefix = "_R.auditor"
}`, pub: []string{
			"$JS.ACK.ORDERS.audit.>", "$JS.API.CONSUMER.INFO.ORDERS.audit", "$JS.API.CONSUMER.MSG.NEXT.ORDERS.audit",
			"$JS.API.DIRECT.GET.KV_sessions", "$JS.API.DIRECT.GET.KV_sessions.>", "$JS.API.STREAM.INFO.KV_sessions",
			"$JS.API.STREAM.MSG.GET.KV_sessions", "$KV.sessions.>",
		}, sub: []string{"_R.auditor.>"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			roles := permissions.Derive(load(t, topology+tc.service))
			if len(roles) != 3 {
				t.Fatalf("got %d roles, want the service and the two built-in ones", len(roles))
			}
			p := roles[0].Permissions
			if d := cmp.Diff(tc.pub, p.Publish.Allow); d != "" {
				t.Errorf("publish allow (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.sub, p.Subscribe.Allow); d != "" {
				t.Errorf("subscribe allow (-want +got):\n%s", d)
			}
		})
	}
}

func TestBuiltinRoles(t *testing.T) {
	roles := permissions.Derive(load(t, topology))
	plan := role(roles, permissions.PlanRole).Permissions.Publish.Allow
	for _, s := range plan {
		for _, write := range []string{"CREATE", "UPDATE", "DELETE", "PURGE", "MSG.NEXT", "$JS.ACK"} {
			if strings.Contains(s, write) {
				t.Errorf("natsplan-plan may publish %s", s)
			}
		}
	}
	apply := role(roles, permissions.ApplyRole).Permissions.Publish.Allow
	for _, want := range []string{"$JS.API.STREAM.CREATE.ORDERS", "$JS.API.STREAM.DELETE.ORDERS_DLQ", "$JS.API.STREAM.UPDATE.KV_sessions",
		"$JS.API.CONSUMER.CREATE.ORDERS.fulfilment-2", "$JS.API.CONSUMER.DELETE.ORDERS.email", "$JS.API.STREAM.INFO.*"} {
		if !contains(apply, want) {
			t.Errorf("natsplan-apply lacks %s", want)
		}
	}
	for _, s := range apply {
		if strings.Contains(s, "natsplan_lock") {
			t.Errorf("natsplan-apply may touch the lock bucket without a lock block: %s", s)
		}
		if (strings.Contains(s, "CREATE") || strings.Contains(s, "DELETE")) && strings.ContainsAny(s, "*>") {
			t.Errorf("natsplan-apply writes with a wildcard: %s", s)
		}
	}
	locked := permissions.Derive(load(t, strings.Replace(topology, `project = "shop"`, "project = \"shop\"\n  lock {}", 1)))
	if !contains(role(locked, permissions.ApplyRole).Permissions.Publish.Allow, "$KV."+lock.DefaultBucket+".shop") {
		t.Errorf("natsplan-apply with a lock block may not write the project's lease in %s", lock.DefaultBucket)
	}
	if permissions.DefaultLockBucket != lock.DefaultBucket {
		t.Errorf("DefaultLockBucket %q, internal/lock uses %q", permissions.DefaultLockBucket, lock.DefaultBucket)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name, services string
		want           []string // code address
	}{
		{name: "no services, no checks", want: nil},
		{name: "captured and consumed", services: `
service "a" {
  publishes = ["orders.*.created"]
  consumes  = [consumer_group.fulfilment, consumer_group.email]
}`, want: nil},
		{name: "uncaptured, unconsumed", services: `
service "a" {
  publishes = ["billing.>", "orders"]
  consumes  = [consumer_group.email]
}`, want: []string{"NP601 service.a", "NP601 service.a", "NP602 consumer_group.fulfilment"}},
		{name: "reserved subjects", services: `
service "a" {
  publishes = ["$JS.API.STREAM.DELETE.ORDERS", "$KV.sessions.x", ">"]
  consumes  = [consumer_group.fulfilment, consumer_group.email]
}`, want: []string{"NP603 service.a", "NP603 service.a", "NP603 service.a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, is := range permissions.Check(load(t, topology+tc.services)) {
				got = append(got, is.Code+" "+is.Address)
				if is.Range.Filename == "" {
					t.Errorf("%s %s has no position", is.Code, is.Address)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("issues (-want +got):\n%s", d)
			}
		})
	}
}

func TestDeadLetterSubjectsReserved(t *testing.T) {
	m := load(t, topology+`
stream "ORDERS_DLQ" {
  subjects = ["dead.>"]
}
service "a" {
  publishes = ["dead.orders"]
  consumes  = [consumer_group.fulfilment, consumer_group.email]
}`)
	issues := permissions.Check(m)
	if len(issues) != 1 || issues[0].Code != permissions.CodeReservedPublish || !strings.Contains(issues[0].Message, "ORDERS_DLQ") {
		t.Fatalf("want one NP603 naming ORDERS_DLQ, got %+v", issues)
	}
}

func TestChanges(t *testing.T) {
	svc := `
service "fulfilment" { consumes = [consumer_group.fulfilment] }
service "email" { consumes = [consumer_group.email] }
`
	desired := load(t, topology+svc)
	// The server holds the same topology with one lane fewer.
	live := asLive(load(t, strings.Replace(topology, "partitions = 3", "partitions = 2", 1)+svc))
	issues := permissions.Changes(desired, live)
	var got []string
	for _, is := range issues {
		got = append(got, is.Code+" "+is.Address)
	}
	if d := cmp.Diff([]string{"NP604 service.fulfilment", "NP604 role.natsplan-apply"}, got); d != "" {
		t.Fatalf("changes (-want +got):\n%s", d)
	}
	if !strings.Contains(issues[0].Message, "CONSUMER.MSG.NEXT.ORDERS.fulfilment-2") || strings.Contains(issues[0].Message, "removes") {
		t.Errorf("message does not name the new lane's subjects only: %s", issues[0].Message)
	}
	if !strings.Contains(issues[1].Message, "adds publish $JS.API.CONSUMER.CREATE.ORDERS.fulfilment-2") {
		t.Errorf("natsplan-apply's note does not name the new lane: %s", issues[1].Message)
	}
	if got := permissions.Changes(desired, asLive(desired)); len(got) != 0 {
		t.Errorf("an unchanged topology changes permissions: %+v", got)
	}
}

// asLive is m as the server reports it after an apply: a lane knows its group only
// from its metadata.
func asLive(m *model.Model) *model.Model {
	live := model.New()
	for name, st := range m.Streams {
		ls := *st
		ls.Config.Metadata = map[string]string{model.MetaProject: m.Project}
		live.Streams[name] = &ls
	}
	for k, c := range m.Consumers {
		lc := *c
		lc.Group = ""
		lc.Config.Metadata = map[string]string{model.MetaProject: m.Project, model.MetaGroup: c.Group}
		live.Consumers[k] = &lc
	}
	return live
}

func TestFormats(t *testing.T) {
	roles := permissions.Derive(load(t, topology+`service "checkout" { publishes = ["orders.*.created"] }`))
	var nsc strings.Builder
	if err := permissions.WriteNSC(&nsc, roles[:1]); err != nil {
		t.Fatal(err)
	}
	want := "nsc add user --name 'checkout'\nnsc edit user --name 'checkout' \\\n  --allow-pub 'orders.*.created' \\\n  --allow-sub '_INBOX_checkout.>'\n"
	if !strings.HasSuffix(nsc.String(), want) || !strings.HasPrefix(nsc.String(), "# service checkout, declared at ") {
		t.Errorf("nsc:\n%s\nwant it to end with:\n%s", nsc.String(), want)
	}
	var conf strings.Builder
	if err := permissions.WriteServerConfig(&conf, roles[:1]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(conf.String(), "permissions {\n  publish {\n    allow = [\n      \"orders.*.created\"\n    ]\n  }\n") {
		t.Errorf("nats-server:\n%s", conf.String())
	}
}

func TestInDomain(t *testing.T) {
	roles := permissions.Derive(load(t, topology+`service "a" { consumes = [consumer.ORDERS.audit] }`))
	if got := permissions.InDomain(roles, ""); &got[0] != &roles[0] {
		t.Error("no domain copied the roles")
	}
	hub := permissions.InDomain(roles, "hub")
	want := []string{"$JS.ACK.ORDERS.audit.>", "$JS.hub.API.CONSUMER.INFO.ORDERS.audit", "$JS.hub.API.CONSUMER.MSG.NEXT.ORDERS.audit"}
	if d := cmp.Diff(want, hub[0].Permissions.Publish.Allow); d != "" {
		t.Errorf("service in domain hub (-want +got):\n%s", d)
	}
	for _, s := range role(hub, permissions.PlanRole).Permissions.Publish.Allow {
		if strings.HasPrefix(s, "$JS.API.") {
			t.Errorf("natsplan-plan in domain hub keeps %s", s)
		}
	}
	if roles[0].Permissions.Publish.Allow[1] != "$JS.API.CONSUMER.INFO.ORDERS.audit" {
		t.Error("InDomain changed the roles it was given")
	}
}
