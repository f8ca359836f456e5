package main

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/embedded"
	"github.com/natsplan/natsplan/internal/testsrv"
)

const limitsConfig = `
natsplan {
  project = "limits"
}
stream "L" {
  subjects = ["l.>"]
}
consumer "L" "legacy" {
  ack_policy = "explicit"
}
consumer "L" "set" {
  ack_policy      = "explicit"
  max_batch       = 10
  max_ack_pending = 20
}
`

// TestServerLimitDefaultsConverge: a server started with the jetstream limits
// max_request_batch and max_ack_pending gives consumers that leave those fields unset
// the limits as values. An account can not read server-wide limits, so plan keeps the
// live values of such unset fields instead of showing a perpetual diff.
func TestServerLimitDefaultsConverge(t *testing.T) {
	s := testsrv.Start(t, func(o *embedded.Options) { o.MaxRequestBatch = 25; o.MaxAckPending = 50 })
	url := s.ClientURL()
	ctx := context.Background()
	js, err := jetstream.New(testsrv.Connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "L", Subjects: []string{"l.>"}}); err != nil {
		t.Fatal(err)
	}
	c, err := js.CreateConsumer(ctx, "L", jetstream.ConsumerConfig{Durable: "legacy", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CachedInfo().Config; got.MaxRequestBatch != 25 || got.MaxAckPending != 50 {
		t.Fatalf("server defaults = max_batch %d, max_ack_pending %d; want the limits 25 and 50", got.MaxRequestBatch, got.MaxAckPending)
	}
	dir := writeConfig(t, map[string]string{"c.hcl": limitsConfig})
	code, out, errOut := cli(t, url, "plan", dir)
	if code != 0 || strings.Contains(out, "max_batch:") || strings.Contains(out, "max_ack_pending:") {
		t.Fatalf("adopting legacy must change only its mark: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", dir); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "plan", "--detailed-exitcode", dir); code != 0 {
		t.Fatalf("plan after apply: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
}
