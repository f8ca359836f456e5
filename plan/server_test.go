package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
)

// This file holds the server helpers of the plan tests: the live model is read by
// observe itself; changes are sent with raw JetStream API requests, as a user or
// another tool would.

// apiErr is a JetStream API error response.
type apiErr struct {
	Error *server.ApiError `json:"error"`
}

// request sends one JetStream API request and decodes the reply into out.
func request(nc *nats.Conn, subj string, body any, out any) error {
	var data []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		data = b
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			return err
		}
	}
	msg, err := nc.Request(subj, data, 5*time.Second)
	if err != nil {
		return fmt.Errorf("%s: %w", subj, err)
	}
	var e apiErr
	if err := json.Unmarshal(msg.Data, &e); err != nil {
		return fmt.Errorf("%s: %w", subj, err)
	}
	if e.Error != nil {
		return fmt.Errorf("%s: %d/%d %s", subj, e.Error.Code, e.Error.ErrCode, e.Error.Description)
	}
	if out != nil {
		return json.Unmarshal(msg.Data, out)
	}
	return nil
}

// withPedantic adds "pedantic": p to a JSON object.
func withPedantic(raw json.RawMessage, p bool) []byte {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic(err)
	}
	m["pedantic"] = p
	b, _ := json.Marshal(m)
	return b
}

// createStreamRaw sends a stream create as a user or another tool would.
func createStreamRaw(nc *nats.Conn, cfg server.StreamConfig, pedantic bool) error {
	// The zero StorageType does not marshal; a user's JSON just leaves storage out.
	omitStorage := cfg.Storage == 0
	if omitStorage {
		cfg.Storage = server.FileStorage
	}
	var m map[string]any
	if err := json.Unmarshal(mustJSON(cfg), &m); err != nil {
		return err
	}
	if omitStorage {
		delete(m, "storage")
	}
	return request(nc, "$JS.API.STREAM.CREATE."+cfg.Name, withPedantic(mustJSON(m), pedantic), nil)
}

// updateStreamRaw sends a stream update.
func updateStreamRaw(nc *nats.Conn, raw json.RawMessage, pedantic bool) error {
	var cfg server.StreamConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return err
	}
	return request(nc, "$JS.API.STREAM.UPDATE."+cfg.Name, withPedantic(raw, pedantic), nil)
}

// consumerRaw creates or updates a consumer; action is "create", "update" or "".
func consumerRaw(nc *nats.Conn, stream string, raw json.RawMessage, action string, pedantic bool) error {
	var cfg server.ConsumerConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return err
	}
	name := cfg.Durable
	if name == "" {
		name = cfg.Name
	}
	body := map[string]any{"stream_name": stream, "config": raw, "action": action, "pedantic": pedantic}
	return request(nc, "$JS.API.CONSUMER.CREATE."+stream+"."+name, body, nil)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// retryable are the errors a cluster returns while a previous reconfiguration settles.
var retryable = []string{"/10226 ", "/10124 ", "/10005 ", "/10008 ", "timeout"}

// applyPlan executes p the way apply does: in step order, pedantic requests, the
// PAUSE API for pause_until. It retries what a cluster refuses while it settles.
func applyPlan(t testing.TB, nc *nats.Conn, p *plan.Plan) error {
	t.Helper()
	for _, ch := range p.Changes {
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := applyChange(nc, ch)
			if err == nil {
				break
			}
			again := false
			for _, r := range retryable {
				again = again || strings.Contains(err.Error(), r)
			}
			if !again || time.Now().After(deadline) {
				return fmt.Errorf("%s %s: %w", ch.Action, ch.Address, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

func applyChange(nc *nats.Conn, ch *plan.Change) error {
	if ch.Kind != "consumer" {
		switch ch.Action {
		case plan.ActCreate:
			return request(nc, "$JS.API.STREAM.CREATE."+ch.Name, withPedantic(ch.After, true), nil)
		case plan.ActUpdate, plan.ActAdopt:
			return updateStreamRaw(nc, ch.After, true)
		case plan.ActDelete:
			return request(nc, "$JS.API.STREAM.DELETE."+ch.Name, nil, nil)
		}
		return fmt.Errorf("unexpected stream action %s", ch.Action)
	}
	switch ch.Action {
	case plan.ActCreate:
		return consumerRaw(nc, ch.Stream, ch.After, "create", true)
	case plan.ActUpdate, plan.ActAdopt:
		if err := consumerRaw(nc, ch.Stream, ch.After, "update", true); err != nil {
			return err
		}
		for _, f := range ch.Fields {
			if f.Via == "pause" {
				return request(nc, "$JS.API.CONSUMER.PAUSE."+ch.Stream+"."+ch.Name,
					map[string]any{"pause_until": f.After}, nil)
			}
		}
		return nil
	case plan.ActReplace:
		if err := request(nc, "$JS.API.CONSUMER.DELETE."+ch.Stream+"."+ch.Name, nil, nil); err != nil {
			return err
		}
		return consumerRaw(nc, ch.Stream, ch.After, "create", true)
	case plan.ActDelete:
		return request(nc, "$JS.API.CONSUMER.DELETE."+ch.Stream+"."+ch.Name, nil, nil)
	}
	return fmt.Errorf("unexpected consumer action %s", ch.Action)
}

// observeModel reads the server with observe, as plan and apply do, and sets the
// account limits the test asks for (none: model.AccountLimits{}) instead of the
// server's, so that a test states the limits it checks against.
func observeModel(t testing.TB, nc *nats.Conn, limits model.AccountLimits) *model.Model {
	t.Helper()
	m, err := observe.Read(context.Background(), jsapi.New(nc, "", 10*time.Second), observe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Target.Limits, m.Target.Tiers = limits, nil
	return m
}

// observeSettled is observeModel after an apply: while a cluster still places what was
// just applied, the stream listing may name a stream whose servers have not answered
// yet (model.Offline, which plan reports as NP406), so it reads again until nothing
// is offline, for at most 30 seconds, and then returns what it read last.
func observeSettled(t testing.TB, nc *nats.Conn) *model.Model {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := observeModel(t, nc, model.AccountLimits{})
		if len(m.Offline) == 0 || time.Now().After(deadline) {
			return m
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mustCompute computes a plan and fails the test on an error.
func mustCompute(t testing.TB, desired, live *model.Model) *plan.Plan {
	t.Helper()
	p, err := plan.Compute(desired, live, plan.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// desiredModel builds a desired model of project "shop".
func desiredModel(streams []server.StreamConfig, consumers map[string][]server.ConsumerConfig) *model.Model {
	m := model.New()
	m.Project = "shop"
	for _, s := range streams {
		m.Streams[s.Name] = &model.Stream{Name: s.Name, Kind: model.KindStream, Config: s,
			Decl: &model.Decl{Range: hclRange("shop.hcl", 1)}}
	}
	for stream, cs := range consumers {
		for _, c := range cs {
			name := c.Durable
			m.Consumers[model.ConsumerKey{Stream: stream, Name: name}] = &model.Consumer{Stream: stream, Name: name,
				Config: c, Decl: &model.Decl{Range: hclRange("shop.hcl", 10)}}
		}
	}
	return m
}
