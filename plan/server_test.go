package plan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// This file is a small stand-in for observe and apply, written against the raw
// JetStream API so the plan tests depend on nothing but the real server.

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

// observeModel reads every stream and consumer into a live model, with limits.
func observeModel(t testing.TB, nc *nats.Conn, limits model.AccountLimits) *model.Model {
	t.Helper()
	m := model.New()
	var info struct {
		API struct {
			Level int `json:"level"`
		} `json:"api"`
	}
	if err := request(nc, "$JS.API.INFO", nil, &info); err != nil {
		t.Fatal(err)
	}
	m.Target = &model.Target{URL: nc.ConnectedUrl(), Server: nc.ConnectedServerName(), APILevel: info.API.Level, Limits: limits}
	for offset := 0; ; {
		var resp server.JSApiStreamListResponse
		if err := request(nc, "$JS.API.STREAM.LIST", map[string]int{"offset": offset}, &resp); err != nil {
			t.Fatal(err)
		}
		for _, si := range resp.Streams {
			s := &model.Stream{Name: si.Config.Name, Kind: model.KindStream, Config: si.Config,
				State: &model.StreamState{Msgs: si.State.Msgs, Bytes: si.State.Bytes, FirstSeq: si.State.FirstSeq,
					LastSeq: si.State.LastSeq, Consumers: si.State.Consumers, Created: si.Created}}
			switch {
			case strings.HasPrefix(s.Name, "KV_"):
				s.Kind, s.Bucket = model.KindKV, strings.TrimPrefix(s.Name, "KV_")
			case strings.HasPrefix(s.Name, "OBJ_"):
				s.Kind, s.Bucket = model.KindObjectStore, strings.TrimPrefix(s.Name, "OBJ_")
			}
			m.Streams[s.Name] = s
			observeConsumers(t, nc, m, s.Name)
		}
		offset += len(resp.Streams) + len(resp.Missing)
		if len(resp.Streams) == 0 || offset >= resp.Total {
			break
		}
	}
	return m
}

func observeConsumers(t testing.TB, nc *nats.Conn, m *model.Model, stream string) {
	for offset := 0; ; {
		var resp server.JSApiConsumerListResponse
		if err := request(nc, "$JS.API.CONSUMER.LIST."+stream, map[string]int{"offset": offset}, &resp); err != nil {
			t.Fatal(err)
		}
		for _, ci := range resp.Consumers {
			name := ci.Config.Durable
			if name == "" {
				name = ci.Name
			}
			c := &model.Consumer{Stream: stream, Name: name, Config: *ci.Config,
				State: &model.ConsumerState{NumPending: ci.NumPending, NumAckPending: ci.NumAckPending}}
			m.Consumers[c.Key()] = c
		}
		offset += len(resp.Consumers) + len(resp.Missing)
		if len(resp.Consumers) == 0 || offset >= resp.Total {
			break
		}
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
