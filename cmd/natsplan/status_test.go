package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// TestStatusExitCodes runs status on the orders example with messages nobody pulls:
// exit 2 with the findings in the JSON document; 0 when healthy; 1 on an error.
func TestStatusExitCodes(t *testing.T) {
	s := testsrv.Start(t)
	url := s.ClientURL()
	orders := "../../examples/orders"
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", orders); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "status", orders); code != 0 {
		t.Fatalf("healthy status exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	nc := testsrv.Connect(t, s)
	for i := range 16 {
		if _, err := nc.Request(fmt.Sprintf("orders.c%d.created", i), []byte("{}"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// Just published, and within the default --idle: nobody pulls is not yet a condition.
	if code, out, errOut := cli(t, url, "status", orders); code != 0 {
		t.Fatalf("status within --idle exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := cli(t, url, "status", "--idle", "0s", "--format", "json", orders)
	if code != 2 {
		t.Fatalf("status exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		Findings []struct {
			Code, Severity, Address, Message, Range, Fix string
			Counters                                     map[string]any
		}
		Consumers []struct{ Address string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, f := range doc.Findings {
		got[f.Address] = f.Code
		if f.Counters["num_pending"] == nil || !strings.Contains(f.Range, "orders.hcl:") {
			t.Errorf("finding without its counters or declaration: %+v", f)
		}
	}
	want := map[string]string{"consumer_group.fulfilment": "NP504", "consumer.ORDERS.email": "NP504"}
	for addr, c := range want {
		if got[addr] != c {
			t.Errorf("finding at %s: %q, want %s (all: %v)", addr, got[addr], c, got)
		}
	}
	if len(doc.Consumers) != 9 {
		t.Errorf("%d consumers in the document, want 9", len(doc.Consumers))
	}
	code, out, _ = cli(t, url, "status", "--idle", "0s", orders)
	if code != 2 || !strings.Contains(out, "error NP504") || !strings.Contains(out, "fix: start the workers") {
		t.Errorf("text status exit %d:\n%s", code, out)
	}
	if code, _, _ := cli(t, url, "status", "-s", "nats://127.0.0.1:1", orders); code != 1 {
		t.Errorf("status without a server exit %d, want 1", code)
	}
}
