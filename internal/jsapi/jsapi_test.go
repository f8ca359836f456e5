package jsapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// JetStream error codes the tests expect (server/errors.json).
const (
	codeStreamNotFound      = 10059
	codeConsumerNotFound    = 10014
	codeStreamNameInUse     = 10058
	codePedantic            = 10157
	codeConsumerExists      = 10148
	codeConsumerMissing     = 10149
	codeConsumerCreate      = 10012
	codeStreamInvalidConfig = 10052
)

func newClient(t *testing.T) *Client {
	t.Helper()
	return New(testsrv.Connect(t, testsrv.Start(t)), "", 5*time.Second)
}

// TestStreamPedantic proves that create and update refuse, in pedantic mode, what the
// server would otherwise silently rewrite, and that the same request without pedantic
// is accepted and rewritten (so the refusal is pedantic's doing).
func TestStreamPedantic(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		cfg      string
		field    string // the field the lenient server rewrites
		wantCode uint16
		readBack func(*server.StreamConfig) bool
	}{
		{"max_msgs below -1", `{"name":"P1","subjects":["p1"],"max_msgs":-2,"storage":"memory"}`, "max_msgs", codePedantic,
			func(c *server.StreamConfig) bool { return c.MaxMsgs == -1 }},
		{"max_bytes below -1", `{"name":"P2","subjects":["p2"],"max_bytes":-5,"storage":"memory"}`, "max_bytes", codePedantic,
			func(c *server.StreamConfig) bool { return c.MaxBytes == -1 }},
		{"republish without src", `{"name":"P3","subjects":["p3"],"republish":{"dest":"rp3.>"},"storage":"memory"}`, "republish", codePedantic,
			func(c *server.StreamConfig) bool { return c.RePublish != nil && c.RePublish.Source == ">" }},
		// Pedantic reports this one as an invalid config (10052) rather than 10157.
		{"delete markers without allow_msg_ttl", `{"name":"P4","subjects":["p4"],"subject_delete_marker_ttl":1000000000,"storage":"memory"}`, "allow_msg_ttl", codeStreamInvalidConfig,
			func(c *server.StreamConfig) bool { return c.AllowMsgTTL && c.AllowRollup }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var head struct{ Name string }
			if err := json.Unmarshal([]byte(tc.cfg), &head); err != nil {
				t.Fatal(err)
			}
			_, err := c.CreateStream(ctx, head.Name, json.RawMessage(tc.cfg))
			if ErrCode(err) != tc.wantCode {
				t.Fatalf("pedantic create: got %v, want error %d", err, tc.wantCode)
			}
			if si, _ := c.StreamInfo(ctx, head.Name); si != nil {
				t.Fatalf("refused create still made stream %s", head.Name)
			}

			// Without pedantic the server accepts the request and rewrites the field.
			var r server.JSApiStreamCreateResponse
			if err := c.Request(ctx, "lenient create", "STREAM.CREATE."+head.Name, json.RawMessage(tc.cfg), &r); err != nil {
				t.Fatalf("lenient create: %v", err)
			}
			if !tc.readBack(&r.Config) {
				t.Errorf("lenient create did not rewrite %s: %+v", tc.field, r.Config)
			}

			// Updating to the same config in pedantic mode is refused too.
			_, err = c.UpdateStream(ctx, head.Name, json.RawMessage(tc.cfg))
			if ErrCode(err) != tc.wantCode {
				t.Errorf("pedantic update: got %v, want error %d", err, tc.wantCode)
			}
		})
	}
}

func TestStreamLifecycle(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	si, err := c.CreateStream(ctx, "S", json.RawMessage(`{"name":"S","subjects":["s.>"],"storage":"memory","max_msgs":10}`))
	if err != nil {
		t.Fatal(err)
	}
	if si.Config.MaxMsgs != 10 {
		t.Errorf("created max_msgs %d", si.Config.MaxMsgs)
	}
	// Create is idempotent for the same config, and refuses a different one.
	if _, err := c.CreateStream(ctx, "S", json.RawMessage(`{"name":"S","subjects":["s.>"],"storage":"memory","max_msgs":10}`)); err != nil {
		t.Errorf("identical re-create: %v", err)
	}
	_, err = c.CreateStream(ctx, "S", json.RawMessage(`{"name":"S","subjects":["s.>"],"storage":"memory","max_msgs":11}`))
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.ErrCode != codeStreamNameInUse || apiErr.Code != 400 {
		t.Fatalf("different re-create: got %#v, want *Error 400/%d", err, codeStreamNameInUse)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "create stream S: ") || !strings.Contains(msg, "(400/10058)") {
		t.Errorf("error text %q should name the operation and carry the codes", msg)
	}

	si, err = c.UpdateStream(ctx, "S", json.RawMessage(`{"name":"S","subjects":["s.>"],"storage":"memory","max_msgs":20}`))
	if err != nil {
		t.Fatal(err)
	}
	if si.Config.MaxMsgs != 20 {
		t.Errorf("updated max_msgs %d", si.Config.MaxMsgs)
	}
	if _, err := c.UpdateStream(ctx, "NOPE", json.RawMessage(`{"name":"NOPE","subjects":["n"],"storage":"memory"}`)); !IsNotFound(err) {
		t.Errorf("update of a missing stream: %v, want not found", err)
	}

	if err := c.DeleteStream(ctx, "S"); err != nil {
		t.Fatal(err)
	}
	if si, err := c.StreamInfo(ctx, "S"); si != nil || err != nil {
		t.Errorf("info after delete: %v, %v; want nil, nil", si, err)
	}
	err = c.DeleteStream(ctx, "S")
	if !IsNotFound(err) || ErrCode(err) != codeStreamNotFound {
		t.Errorf("delete of a missing stream: %v, want not found %d", err, codeStreamNotFound)
	}
}

func TestConsumerActions(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "S", json.RawMessage(`{"name":"S","subjects":["s.>"],"storage":"memory"}`)); err != nil {
		t.Fatal(err)
	}
	cfg := func(extra string) json.RawMessage {
		return json.RawMessage(`{"durable_name":"w","ack_policy":"explicit"` + extra + `}`)
	}
	steps := []struct {
		name     string
		action   ConsumerAction
		cfg      json.RawMessage
		wantCode uint16
		check    func(*server.ConsumerConfig) bool
	}{
		{"update before it exists", ConsumerUpdate, cfg(`,"max_deliver":3`), codeConsumerMissing, nil},
		{"create", ConsumerCreate, cfg(`,"max_deliver":3`), 0, func(c *server.ConsumerConfig) bool { return c.MaxDeliver == 3 }},
		{"create again, same config", ConsumerCreate, cfg(`,"max_deliver":3`), 0, func(c *server.ConsumerConfig) bool { return c.MaxDeliver == 3 }},
		{"create again, other config", ConsumerCreate, cfg(`,"max_deliver":4`), codeConsumerExists, nil},
		{"update in place", ConsumerUpdate, cfg(`,"max_deliver":5`), 0, func(c *server.ConsumerConfig) bool { return c.MaxDeliver == 5 }},
		{"update an immutable field", ConsumerUpdate, json.RawMessage(`{"durable_name":"w","ack_policy":"all","max_deliver":5}`), codeConsumerCreate, nil},
		{"pedantic: max_deliver below -1", ConsumerUpdate, cfg(`,"max_deliver":-2`), codePedantic, nil},
		{"pedantic: negative max_waiting", ConsumerUpdate, cfg(`,"max_deliver":5,"max_waiting":-1`), codePedantic, nil},
		{"pedantic: backoff disagrees with ack_wait", ConsumerUpdate, cfg(`,"max_deliver":5,"ack_wait":5000000000,"backoff":[1000000000]`), codePedantic, nil},
	}
	for _, st := range steps {
		ci, err := c.WriteConsumer(ctx, "S", "w", st.cfg, st.action)
		if st.wantCode != 0 {
			if ErrCode(err) != st.wantCode {
				t.Errorf("%s: got %v, want error %d", st.name, err, st.wantCode)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", st.name, err)
			continue
		}
		if !st.check(ci.Config) {
			t.Errorf("%s: config %+v", st.name, ci.Config)
		}
	}
	// The refusals left the consumer as the last good update made it.
	ci, err := c.ConsumerInfo(ctx, "S", "w")
	if err != nil || ci == nil {
		t.Fatalf("info: %v %v", ci, err)
	}
	if ci.Config.MaxDeliver != 5 || ci.Config.AckPolicy != server.AckExplicit {
		t.Errorf("after refusals: max_deliver %d ack_policy %s", ci.Config.MaxDeliver, ci.Config.AckPolicy)
	}
}

func TestConsumerPauseResumeDelete(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "S", json.RawMessage(`{"name":"S","subjects":["s.>"],"storage":"memory"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteConsumer(ctx, "S", "w", json.RawMessage(`{"durable_name":"w","ack_policy":"explicit"}`), ConsumerCreate); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if err := c.PauseConsumer(ctx, "S", "w", until); err != nil {
		t.Fatal(err)
	}
	ci, err := c.ConsumerInfo(ctx, "S", "w")
	if err != nil {
		t.Fatal(err)
	}
	if !ci.Paused || ci.Config.PauseUntil == nil || !ci.Config.PauseUntil.Equal(until) {
		t.Errorf("after pause: paused %v until %v, want until %v", ci.Paused, ci.Config.PauseUntil, until)
	}
	if err := c.PauseConsumer(ctx, "S", "w", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if ci, err = c.ConsumerInfo(ctx, "S", "w"); err != nil {
		t.Fatal(err)
	}
	if ci.Paused || ci.Config.PauseUntil != nil && !ci.Config.PauseUntil.IsZero() {
		t.Errorf("after resume: paused %v until %v", ci.Paused, ci.Config.PauseUntil)
	}
	if err := c.PauseConsumer(ctx, "S", "nope", until); !IsNotFound(err) {
		t.Errorf("pause of a missing consumer: %v, want not found", err)
	}

	if err := c.DeleteConsumer(ctx, "S", "w"); err != nil {
		t.Fatal(err)
	}
	if ci, err := c.ConsumerInfo(ctx, "S", "w"); ci != nil || err != nil {
		t.Errorf("info after delete: %v, %v; want nil, nil", ci, err)
	}
	err = c.DeleteConsumer(ctx, "S", "w")
	if !IsNotFound(err) || ErrCode(err) != codeConsumerNotFound {
		t.Errorf("delete of a missing consumer: %v, want not found %d", err, codeConsumerNotFound)
	}
	// A consumer of a missing stream is not found as well, and so is its stream.
	if ci, err := c.ConsumerInfo(ctx, "NOPE", "w"); ci != nil || err != nil {
		t.Errorf("consumer of a missing stream: %v, %v; want nil, nil", ci, err)
	}
}

func TestErrors(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	tests := []struct {
		name string
		err  error
		not  bool
		code uint16
	}{
		{"nil", nil, false, 0},
		{"plain error", errors.New("boom"), false, 0},
		{"stream not found", &Error{ErrCode: codeStreamNotFound}, true, codeStreamNotFound},
		{"wrapped consumer not found", errorsJoin(&Error{ErrCode: codeConsumerNotFound}), true, codeConsumerNotFound},
		{"other api error", &Error{ErrCode: codePedantic}, false, codePedantic},
	}
	for _, tc := range tests {
		if IsNotFound(tc.err) != tc.not || ErrCode(tc.err) != tc.code {
			t.Errorf("%s: IsNotFound %v ErrCode %d, want %v %d", tc.name, IsNotFound(tc.err), ErrCode(tc.err), tc.not, tc.code)
		}
	}

	// Strict JSON: an unknown field is the server's 10025, carried with its code.
	_, err := c.CreateStream(ctx, "S", json.RawMessage(`{"name":"S","bogus":1}`))
	if ErrCode(err) != 10025 || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown field: %v", err)
	}
	// A domain nobody serves says so instead of timing out.
	other := New(c.NC, "nowhere", time.Second)
	_, err = other.AccountInfo(ctx)
	if err == nil || !strings.Contains(err.Error(), "$JS.nowhere.API") || ErrCode(err) != 0 {
		t.Errorf("unknown domain: %v", err)
	}
}

func errorsJoin(err error) error { return errors.Join(errors.New("context"), err) }

// TestDecodeReply proves the one-decode path and the fallback read the same error and
// value from the server's own replies: into a reply type (which embeds the server's
// ApiResponse), into a type that does not, and into one the error reply does not
// decode into, where the server's error and not a decode error is reported.
func TestDecodeReply(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "S", json.RawMessage(`{"name":"S","subjects":["s.>"]}`)); err != nil {
		t.Fatal(err)
	}
	reply := func(subject string) []byte {
		t.Helper()
		msg, err := c.NC.Request("$JS.API."+subject, nil, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return msg.Data
	}
	found, missing := reply("STREAM.INFO.S"), reply("STREAM.INFO.NOPE")

	var typed server.JSApiStreamInfoResponse
	if err := decodeReply("info", found, &typed); err != nil || typed.StreamInfo == nil || typed.Config.Name != "S" {
		t.Fatalf("typed success: %v %+v", err, typed.StreamInfo)
	}
	var plain struct {
		Config struct{ Name string } `json:"config"`
	}
	if err := decodeReply("info", found, &plain); err != nil || plain.Config.Name != "S" {
		t.Fatalf("plain success: %v %+v", err, plain)
	}
	if err := decodeReply("info", found, nil); err != nil {
		t.Fatalf("nil resp: %v", err)
	}

	var typedMissing server.JSApiStreamInfoResponse
	var wrongShape struct {
		Error string `json:"error"` // the server sends an object: this cannot decode
	}
	for name, resp := range map[string]any{"typed": &typedMissing, "plain": &plain, "nil": nil, "wrong shape": &wrongShape} {
		err := decodeReply("info", missing, resp)
		var e *Error
		if !errors.As(err, &e) || e.ErrCode != codeStreamNotFound || e.Code != 404 || e.Op != "info" || !IsNotFound(err) {
			t.Errorf("%s: error reply gave %#v", name, err)
		}
	}
	if err := decodeReply("info", []byte(`{"config":`), &typed); err == nil || !strings.Contains(err.Error(), "info: decode reply") {
		t.Errorf("truncated reply: %v", err)
	}
}
