package plan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

func pull(name string, mod func(*server.ConsumerConfig)) server.ConsumerConfig {
	c := server.ConsumerConfig{Durable: name, AckPolicy: server.AckExplicit}
	if mod != nil {
		mod(&c)
	}
	return c
}

func push(c *server.ConsumerConfig) {
	c.DeliverSubject = "deliver." + c.Durable
	c.AckPolicy = server.AckNone
}

// consumerModel declares stream CS and one consumer on it.
func consumerModel(c server.ConsumerConfig, replace bool) *model.Model {
	d := desiredModel([]server.StreamConfig{stream("CS", nil)}, map[string][]server.ConsumerConfig{"CS": {c}})
	d.Consumers[model.ConsumerKey{Stream: "CS", Name: c.Durable}].Lifecycle.ReplaceOnChange = replace
	return d
}

// TestRulesConsumerRefused proves every immutable consumer field: the server refuses
// the update; the plan has NP303 without replace_on_change, and a replace with it that
// the server accepts and that converges.
func TestRulesConsumerRefused(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		field    string
		from, to func(*server.ConsumerConfig)
	}{
		{"deliver_policy", nil, func(c *server.ConsumerConfig) { c.DeliverPolicy = server.DeliverNew }},
		{"opt_start_seq", func(c *server.ConsumerConfig) { c.DeliverPolicy = server.DeliverByStartSequence; c.OptStartSeq = 1 },
			func(c *server.ConsumerConfig) { c.OptStartSeq = 2 }},
		{"opt_start_time", func(c *server.ConsumerConfig) { c.DeliverPolicy = server.DeliverByStartTime; c.OptStartTime = &start },
			func(c *server.ConsumerConfig) { t2 := start.Add(time.Hour); c.OptStartTime = &t2 }},
		{"ack_policy", nil, func(c *server.ConsumerConfig) { c.AckPolicy = server.AckAll }},
		{"replay_policy", nil, func(c *server.ConsumerConfig) { c.ReplayPolicy = server.ReplayOriginal }},
		{"mem_storage", nil, func(c *server.ConsumerConfig) { c.MemoryStorage = true }},
		{"idle_heartbeat", push, func(c *server.ConsumerConfig) { c.Heartbeat = 5 * time.Second }},
		{"flow_control", func(c *server.ConsumerConfig) { push(c); c.Heartbeat = 5 * time.Second },
			func(c *server.ConsumerConfig) { c.FlowControl = true }},
		{"max_waiting", nil, func(c *server.ConsumerConfig) { c.MaxWaiting = 10 }},
		{"deliver_subject", nil, func(c *server.ConsumerConfig) { c.DeliverSubject = "deliver.now" }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			name := strings.ReplaceAll(tc.field, "_", "-")
			converge(t, nc, consumerModel(pull(name, tc.from), false))
			to := pull(name, tc.from)
			tc.to(&to)
			addr := "consumer.CS." + name
			p := mustCompute(t, consumerModel(to, false), observeModel(t, nc, model.AccountLimits{}))
			if refusal(p, addr, tc.field) == nil || !blockedChange(p, addr, tc.field) {
				t.Fatalf("want NP303 on %s and the change, blocked:\n%s", tc.field, testkit.Describe(p))
			}
			to.Metadata = withProject(nil)
			live := observeModel(t, nc, model.AccountLimits{})
			norm := plan.NormalizeConsumer(to, &live.Streams["CS"].Config, live.Target)
			if err := consumerRaw(nc, "CS", mustJSON(norm), "update", false); err == nil {
				t.Fatalf("server accepted a change of %s that the plan refuses", tc.field)
			}
			p = converge(t, nc, consumerModel(to, true))
			chs := changesOf(p, addr)
			if len(chs) != 1 || chs[0].Action != plan.ActReplace || !chs[0].Destructive || !strings.Contains(chs[0].Reason, "ack state") {
				t.Fatalf("want a destructive replace that says why:\n%s", testkit.Describe(p))
			}
		})
	}
}

// TestRulesConsumerInPlace proves every in-place consumer field: the server accepts
// the planned update in pedantic mode and the next plan is empty.
func TestRulesConsumerInPlace(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	for _, tc := range []struct {
		name     string
		from, to func(*server.ConsumerConfig)
	}{
		{"ack_wait", nil, func(c *server.ConsumerConfig) { c.AckWait = time.Minute }},
		{"max_deliver", nil, func(c *server.ConsumerConfig) { c.MaxDeliver = 3 }},
		{"backoff", nil, func(c *server.ConsumerConfig) { c.BackOff = []time.Duration{time.Second, 2 * time.Second} }},
		{"max_ack_pending", nil, func(c *server.ConsumerConfig) { c.MaxAckPending = 7 }},
		{"max_batch", nil, func(c *server.ConsumerConfig) { c.MaxRequestBatch = 7 }},
		{"max_expires", nil, func(c *server.ConsumerConfig) { c.MaxRequestExpires = time.Second }},
		{"max_bytes", nil, func(c *server.ConsumerConfig) { c.MaxRequestMaxBytes = 1024 }},
		{"rate_limit_bps", push, func(c *server.ConsumerConfig) { c.RateLimit = 1000 }},
		{"sample_freq", nil, func(c *server.ConsumerConfig) { c.SampleFrequency = "10%" }},
		{"headers_only", nil, func(c *server.ConsumerConfig) { c.HeadersOnly = true }},
		{"description", nil, func(c *server.ConsumerConfig) { c.Description = "d" }},
		{"metadata", nil, func(c *server.ConsumerConfig) { c.Metadata = map[string]string{"k": "v"} }},
		{"inactive_threshold", nil, func(c *server.ConsumerConfig) { c.InactiveThreshold = time.Hour }},
		{"deliver_group", push, func(c *server.ConsumerConfig) { c.DeliverGroup = "g" }},
		{"deliver_subject", push, func(c *server.ConsumerConfig) { c.DeliverSubject = "deliver.other" }},
		{"filter_subject", nil, func(c *server.ConsumerConfig) { c.FilterSubject = "cs.a" }},
		{"filter_subjects", nil, func(c *server.ConsumerConfig) { c.FilterSubjects = []string{"cs.b", "cs.a"} }},
		{"num_replicas", nil, func(c *server.ConsumerConfig) { c.Replicas = 1 }},
		{"priority", nil, func(c *server.ConsumerConfig) {
			c.PriorityGroups, c.PriorityPolicy = []string{"PCG"}, server.PriorityPinnedClient
		}},
		{"priority_timeout", func(c *server.ConsumerConfig) {
			c.PriorityGroups, c.PriorityPolicy = []string{"PCG"}, server.PriorityPinnedClient
		}, func(c *server.ConsumerConfig) { c.PinnedTTL = time.Minute }},
		{"pause_until", nil, func(c *server.ConsumerConfig) {
			p := time.Now().Add(time.Hour).Truncate(time.Second)
			c.PauseUntil = &p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, "_", "-")
			converge(t, nc, consumerModel(pull(name, tc.from), false))
			to := pull(name, tc.from)
			tc.to(&to)
			p := converge(t, nc, consumerModel(to, false))
			chs := changesOf(p, "consumer.CS."+name)
			want := 1
			if tc.name == "num_replicas" {
				want = 0 // 1 equals the stream's replicas: the same as 0
			}
			if len(chs) != want {
				t.Fatalf("want %d update:\n%s", want, testkit.Describe(p))
			}
			for _, ch := range chs {
				for _, f := range ch.Fields {
					if ch.Action != plan.ActUpdate || f.Rule != plan.RuleInPlace {
						t.Fatalf("want in_place update:\n%s", testkit.Describe(p))
					}
					if (f.Path == "pause_until") != (f.Via == "pause") {
						t.Fatalf("pause_until must go through the PAUSE API, nothing else: %s via %q", f.Path, f.Via)
					}
				}
			}
		})
	}
}
