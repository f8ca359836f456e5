// Package testkit holds the test helpers several packages share that need the
// JetStream client or the plan document (internal/testsrv stays below both, so that
// their own tests can use it): a client of a fresh server, a raw API request, and a
// plan described for a failure message.
package testkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// Client starts a server for the test and returns a JetStream API client of it.
func Client(t testing.TB) *jsapi.Client {
	t.Helper()
	s := testsrv.Start(t)
	return jsapi.New(testsrv.Connect(t, s), "", 10*time.Second)
}

// Request sends one JetStream API request as JSON and fails the test unless the
// server accepts it.
func Request(t testing.TB, nc *nats.Conn, subject string, body any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := nc.Request(subject, b, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var resp struct {
		Error *server.ApiError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil || resp.Error != nil {
		t.Fatalf("%s: %v %v", subject, err, resp.Error)
	}
}

// Describe renders a plan's changes (step, action, address, phase, fields) and
// findings for a failure message.
func Describe(p *plan.Plan) string {
	var b strings.Builder
	for _, ch := range p.Changes {
		fmt.Fprintf(&b, "  %d %s %s %s\n", ch.Step, ch.Action, ch.Address, ch.Phase)
		for _, f := range ch.Fields {
			fmt.Fprintf(&b, "      %s: %v -> %v (%s)\n", f.Path, f.Before, f.After, f.Rule)
		}
	}
	for _, f := range p.Findings {
		fmt.Fprintf(&b, "  %s %s %s: %s\n", f.Code, f.Severity, f.Address, f.Message)
	}
	return b.String()
}
