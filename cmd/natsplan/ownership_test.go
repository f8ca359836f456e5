package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

func writeConfig(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func planJSON(t *testing.T, url, dir string) (int, *plan.Plan) {
	t.Helper()
	code, out, errOut := cli(t, url, "plan", "--format", "json", "--detailed-exitcode", dir)
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan --format json is not one JSON document: %v\n%s\n%s", err, out, errOut)
	}
	return code, &p
}

func changeOf(p *plan.Plan, addr string) *plan.Change {
	for _, c := range p.Changes {
		if c.Address == addr {
			return c
		}
	}
	return nil
}

const ownedConfig = `
natsplan {
  project = "shop"
}
stream "ORDERS" {
  subjects = ["orders.>"]
  max_age  = "1h"
}
consumer "ORDERS" "audit" {
  ack_policy      = "explicit"
  max_ack_pending = 100
}
`

// TestOutOfBandChanges: changes made with nats.go behind natsplan's back show up as
// the updates and creates that undo them; objects natsplan does not own are listed
// and never touched; an object another project owns is an error when declared.
func TestOutOfBandChanges(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	dir := writeConfig(t, map[string]string{"shop.hcl": ownedConfig})
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", dir); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	ctx := context.Background()
	js, err := jetstream.New(testsrv.Connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.MaxAge = 2 * time.Hour
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, "ORDERS", "audit")
	if err != nil {
		t.Fatal(err)
	}
	ccfg := cons.CachedInfo().Config
	ccfg.MaxAckPending = 7
	if _, err := js.UpdateConsumer(ctx, "ORDERS", ccfg); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ROGUE", Subjects: []string{"rogue.>"}}); err != nil {
		t.Fatal(err)
	}

	code, p := planJSON(t, url, dir)
	if code != exitChanges {
		t.Fatalf("plan exit %d, want %d", code, exitChanges)
	}
	for addr, field := range map[string]string{"stream.ORDERS": "max_age", "consumer.ORDERS.audit": "max_ack_pending"} {
		ch := changeOf(p, addr)
		if ch == nil || ch.Action != plan.ActUpdate {
			t.Fatalf("%s: want an update, got %+v", addr, ch)
		}
		if len(ch.Fields) != 1 || ch.Fields[0].Path != field || ch.Fields[0].Rule != plan.RuleInPlace {
			t.Fatalf("%s: want one in-place change of %s, got %+v", addr, field, ch.Fields[0])
		}
	}
	if len(p.Unmanaged) != 1 || p.Unmanaged[0].Address != "stream.ROGUE" {
		t.Fatalf("unmanaged = %+v, want stream.ROGUE", p.Unmanaged)
	}

	// An owned consumer deleted out of band is created again.
	if err := js.DeleteConsumer(ctx, "ORDERS", "audit"); err != nil {
		t.Fatal(err)
	}
	_, p = planJSON(t, url, dir)
	if ch := changeOf(p, "consumer.ORDERS.audit"); ch == nil || ch.Action != plan.ActCreate {
		t.Fatalf("deleted consumer: want create, got %+v", ch)
	}

	// Apply, even with --allow-delete, restores what is declared and leaves ROGUE alone.
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", "--allow-delete", "--allow-data-loss", dir); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := js.Stream(ctx, "ROGUE"); err != nil {
		t.Fatalf("the unmanaged stream was touched: %v", err)
	}
	if code, p = planJSON(t, url, dir); code != 0 || len(p.Changes) != 0 {
		t.Fatalf("after apply: exit %d, %d changes, want none", code, len(p.Changes))
	}

	// A stream another project owns is an error when declared, and nothing is planned for it.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "THEIRS", Subjects: []string{"theirs.>"},
		Metadata: map[string]string{"natsplan.project": "billing"}}); err != nil {
		t.Fatal(err)
	}
	foreign := writeConfig(t, map[string]string{"shop.hcl": ownedConfig + `
stream "THEIRS" {
  subjects = ["theirs.>"]
}
`})
	code, out, errOut := cli(t, url, "plan", foreign)
	if code != exitError || !strings.Contains(out, "NP404") || !strings.Contains(out, "billing") {
		t.Fatalf("foreign stream: exit %d, want 1 with NP404 naming project billing\n%s\n%s", code, out, errOut)
	}
	if code, _, _ := cli(t, url, "apply", "--auto-approve", foreign); code != exitError {
		t.Fatalf("apply of a foreign stream: exit %d, want 1", code)
	}
}

// TestDeletesNeedTheFlag: an owned object removed from the files is deleted only with
// --allow-delete, and a stream that holds messages only with --allow-data-loss too;
// objects natsplan does not own are never deleted.
func TestDeletesNeedTheFlag(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	two := ownedConfig + `
stream "RETURNS" {
  subjects = ["returns.>"]
}
`
	dir := writeConfig(t, map[string]string{"shop.hcl": two})
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", dir); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	ctx := context.Background()
	nc := testsrv.Connect(t, s)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ROGUE", Subjects: []string{"rogue.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "returns.1", []byte("r")); err != nil {
		t.Fatal(err)
	}
	one := writeConfig(t, map[string]string{"shop.hcl": ownedConfig})

	code, out, errOut := cli(t, url, "apply", "--auto-approve", one)
	if code != exitError || !strings.Contains(out+errOut, "--allow-delete") {
		t.Fatalf("apply without --allow-delete: exit %d, want 1 naming the flag\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cli(t, url, "apply", "--auto-approve", "--allow-delete", one)
	if code != exitError || !strings.Contains(out+errOut, "NP301") {
		t.Fatalf("apply deleting a stream with messages without --allow-data-loss: exit %d, want 1 with NP301\n%s\n%s", code, out, errOut)
	}
	if _, err := js.Stream(ctx, "RETURNS"); err != nil {
		t.Fatalf("a refused apply deleted the stream: %v", err)
	}
	code, out, errOut = cli(t, url, "apply", "--auto-approve", "--allow-delete", "--allow-data-loss", one)
	if code != 0 {
		t.Fatalf("apply with both flags: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := js.Stream(ctx, "RETURNS"); err == nil {
		t.Fatal("RETURNS was not deleted")
	}
	for _, name := range []string{"ORDERS", "ROGUE"} {
		if _, err := js.Stream(ctx, name); err != nil {
			t.Fatalf("%s was deleted: %v", name, err)
		}
	}
}
