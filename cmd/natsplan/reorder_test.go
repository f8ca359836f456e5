package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestApplyAllowReorder: repartitioning the orders example while a lane holds a message
// is an NP204 error showing the lanes' counters; apply refuses it unless --allow-reorder.
func TestApplyAllowReorder(t *testing.T) {
	s, url, dir := ordersTwelveWays(t)
	nc := testsrv.Connect(t, s)
	if _, err := nc.Request("orders.acme.created", []byte("{}"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, url, "plan", dir)
	if code != 1 || !strings.Contains(out+errOut, "NP204") || !strings.Contains(out+errOut, "fulfilment-7 1 pending, 0 in flight") {
		t.Fatalf("plan exit %d, want 1 with NP204 and the lanes' counters\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cli(t, url, "apply", "--auto-approve", dir)
	if code != 1 || !strings.Contains(out+errOut, "--allow-reorder") {
		t.Fatalf("apply exit %d, want 1 naming --allow-reorder\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", "--allow-reorder", dir); code != 0 {
		t.Fatalf("apply --allow-reorder exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestSavedPlanRechecksDrainedLanes: a repartition saved while every lane was drained
// is refused at apply time once a lane holds a message again, unless --allow-reorder.
func TestSavedPlanRechecksDrainedLanes(t *testing.T) {
	s, url, dir := ordersTwelveWays(t)
	saved := filepath.Join(t.TempDir(), "plan.json")
	if code, out, errOut := cli(t, url, "plan", "--out", saved, dir); code != 0 || !strings.Contains(out, "NP204") {
		t.Fatalf("plan of drained lanes exit %d, want 0 with the NP204 warning\n%s\n%s", code, out, errOut)
	}
	nc := testsrv.Connect(t, s)
	if _, err := nc.Request("orders.acme.created", []byte("{}"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, url, "apply", "--auto-approve", saved)
	if code != 1 || !strings.Contains(out+errOut, "now hold messages: fulfilment-7 1 pending") || !strings.Contains(out+errOut, "--allow-reorder") {
		t.Fatalf("apply of the saved plan exit %d, want 1 naming the lane and --allow-reorder\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", "--allow-reorder", saved); code != 0 {
		t.Fatalf("apply --allow-reorder of the saved plan exit %d\n%s\n%s", code, out, errOut)
	}
}

// ordersTwelveWays applies examples/orders (8 partitions) to a new server and returns
// it, its URL, and a folder holding the example repartitioned 12 ways.
func ordersTwelveWays(t *testing.T) (*embedded.Server, string, string) {
	t.Helper()
	s := testsrv.Start(t)
	url := s.ClientURL()
	src, err := os.ReadFile("../../examples/orders/orders.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", "../../examples/orders"); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	dir := t.TempDir()
	twelve := strings.Replace(string(src), "partitions = 8", "partitions = 12", 1)
	if err := os.WriteFile(filepath.Join(dir, "orders.hcl"), []byte(twelve), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, url, dir
}
