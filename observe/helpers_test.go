package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
)

// mustRequest sends a raw JetStream API request and fails the test on an error reply.
func mustRequest(t testing.TB, c *jsapi.Client, subject string, body any) {
	t.Helper()
	if err := c.Request(context.Background(), subject, subject, body, nil); err != nil {
		t.Fatal(err)
	}
}

// addStream creates a stream from a config given as JSON, so tests send exactly the
// fields they mean.
func addStream(t testing.TB, c *jsapi.Client, cfg string) string {
	t.Helper()
	var head struct{ Name string }
	if err := json.Unmarshal([]byte(cfg), &head); err != nil {
		t.Fatal(err)
	}
	mustRequest(t, c, "STREAM.CREATE."+head.Name, json.RawMessage(cfg))
	return head.Name
}

// addConsumer creates durable consumer name on stream with the given extra config JSON fields.
func addConsumer(t testing.TB, c *jsapi.Client, stream, name, extra string) {
	t.Helper()
	cfg := fmt.Sprintf(`{"durable_name":%q,"ack_policy":"explicit"%s}`, name, extra)
	body := fmt.Sprintf(`{"stream_name":%q,"config":%s}`, stream, cfg)
	mustRequest(t, c, "CONSUMER.CREATE."+stream+"."+name, json.RawMessage(body))
}

// publish sends one message and waits for the stream's ack.
func publish(t testing.TB, nc *nats.Conn, subject string) {
	t.Helper()
	if _, err := nc.Request(subject, []byte("x"), 5*time.Second); err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
}

// connect connects to url and closes the connection with the test.
func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
