package status_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/status"
)

// threeEnvironments are a healthy environment, one where NP506 holds (with a consumer
// name that needs escaping) and one whose server could not be reached.
func threeEnvironments(t *testing.T) []*status.EnvReport {
	t.Helper()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	healthy := sample(now, model.ConsumerState{Created: now.Add(-time.Hour)}, "")
	healthy.Live.Target = &model.Target{URL: "nats://127.0.0.1:4222", Server: "NA", Cluster: "east"}
	d := declaredPool()
	d.Consumers[model.ConsumerKey{Stream: "Q", Name: "pool"}].Group = ""
	busy := sample(now, model.ConsumerState{Created: now.Add(-time.Hour)}, "q.>")
	busy.Live.Target = &model.Target{URL: "nats://127.0.0.1:4223", Server: "NB", Account: "APP"}
	for _, n := range []string{`w-"1\x`, "w-2"} {
		busy.Live.Consumers[model.ConsumerKey{Stream: "Q", Name: n}] = &model.Consumer{Stream: "Q", Name: n,
			Config: server.ConsumerConfig{Durable: n, AckPolicy: server.AckExplicit, FilterSubject: "q.>"},
			State:  &model.ConsumerState{NumWaiting: 1, Created: now}}
	}
	return []*status.EnvReport{
		{Name: "prod", Report: status.Evaluate(declaredPool(), healthy, nil, status.DefaultThresholds())},
		{Name: "staging", Report: status.Evaluate(d, busy, nil, status.DefaultThresholds())},
		{Name: "dev", Err: errors.New("connect to nats://127.0.0.1:1: connection refused")},
	}
}

// TestPrometheusEnvironments: several environments make one valid exposition: each
// family's HELP and TYPE once, every series labelled with its environment first, and
// each environment's series exactly its single-environment series; an environment
// without a report is down. The single-environment exposition is valid as well and
// has no environment label.
func TestPrometheusEnvironments(t *testing.T) {
	envs := threeEnvironments(t)
	var multi bytes.Buffer
	if err := status.PrometheusEnvironments(&multi, envs); err != nil {
		t.Fatal(err)
	}
	series, err := testkit.ParseExposition(multi.String())
	if err != nil {
		t.Fatalf("invalid exposition: %v\n%s", err, multi.String())
	}
	got := map[string][]string{}
	up := map[string]float64{}
	for _, s := range series {
		if len(s.Labels) == 0 || s.Labels[0][0] != "environment" {
			t.Fatalf("%s%v: not labelled with its environment first", s.Name, s.Labels)
		}
		env := s.Labels[0][1]
		if s.Name == "natsplan_environment_up" {
			up[env] = s.Value
			continue
		}
		got[env] = append(got[env], fmt.Sprint(s.Name, s.Labels[1:], s.Value))
	}
	if want := map[string]float64{"prod": 1, "staging": 1, "dev": 0}; !cmp.Equal(up, want) {
		t.Errorf("natsplan_environment_up %v, want %v", up, want)
	}
	if len(got["dev"]) != 0 {
		t.Errorf("the unreachable environment has series: %v", got["dev"])
	}
	for _, e := range envs[:2] {
		var single bytes.Buffer
		if err := status.Prometheus(&single, e.Report); err != nil {
			t.Fatal(err)
		}
		one, err := testkit.ParseExposition(single.String())
		if err != nil {
			t.Fatalf("invalid single-environment exposition: %v\n%s", err, single.String())
		}
		var want []string
		for _, s := range one {
			if _, ok := s.Label("environment"); ok {
				t.Errorf("single-environment series %s%v has an environment label", s.Name, s.Labels)
			}
			want = append(want, fmt.Sprint(s.Name, s.Labels, s.Value))
		}
		if diff := cmp.Diff(want, got[e.Name]); diff != "" {
			t.Errorf("%s: series differ from its single-environment exposition (-single +multi):\n%s", e.Name, diff)
		}
	}
	for _, want := range []string{
		`natsplan_condition{environment="staging",code="NP506"} 1`,
		`natsplan_condition{environment="prod",code="NP506"} 0`,
		`natsplan_consumer_waiting{environment="staging",stream="Q",consumer="w-\"1\\x",group="",lane=""} 1`,
	} {
		if !strings.Contains(multi.String(), want+"\n") {
			t.Errorf("exposition lacks %s:\n%s", want, multi.String())
		}
	}
}

// TestJSONEnvironments: one document; each environment is its single-environment
// document with "environment" added; one without a report has its error instead.
func TestJSONEnvironments(t *testing.T) {
	envs := threeEnvironments(t)
	for _, compact := range []bool{false, true} {
		var b bytes.Buffer
		if err := status.JSONEnvironments(&b, envs, compact); err != nil {
			t.Fatal(err)
		}
		if compact && strings.Count(b.String(), "\n") != 1 {
			t.Errorf("compact document is not one line:\n%s", b.String())
		}
		var doc struct {
			Environments []map[string]any `json:"environments"`
		}
		dec := json.NewDecoder(&b)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil || dec.More() {
			t.Fatalf("not one document {\"environments\": [...]}: %v", err)
		}
		if len(doc.Environments) != 3 {
			t.Fatalf("%d environments, want 3", len(doc.Environments))
		}
		for i, e := range envs[:2] {
			got := doc.Environments[i]
			if got["environment"] != e.Name {
				t.Errorf("environment %d is %v, want %s", i, got["environment"], e.Name)
			}
			delete(got, "environment")
			var single bytes.Buffer
			if err := status.JSON(&single, e.Report, false); err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal(single.Bytes(), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: differs from its single-environment document (-single +multi):\n%s", e.Name, diff)
			}
		}
		want := map[string]any{"environment": "dev", "error": "connect to nats://127.0.0.1:1: connection refused"}
		if diff := cmp.Diff(want, doc.Environments[2]); diff != "" {
			t.Errorf("the unreachable environment (-want +got):\n%s", diff)
		}
	}
}

// TestTextEnvironments: one section per environment in order, headed with its name
// and target, holding its single-environment text or its error, and a last line that
// names each environment's state.
func TestTextEnvironments(t *testing.T) {
	envs := threeEnvironments(t)
	var b bytes.Buffer
	if err := status.TextEnvironments(&b, envs, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	heads := []string{
		"=== environment prod: nats://127.0.0.1:4222 (server NA, cluster east, API level 0)\n",
		"=== environment staging: nats://127.0.0.1:4223 (server NB, account APP, API level 0)\n",
		"=== environment dev: not reached\nError: connect to nats://127.0.0.1:1: connection refused\n",
	}
	at := 0
	for i, h := range heads {
		j := strings.Index(out[at:], h)
		if j < 0 {
			t.Fatalf("section %d %q missing or out of order:\n%s", i, h, out)
		}
		at += j + len(h)
		if i < 2 {
			var single bytes.Buffer
			if err := status.Text(&single, envs[i].Report, false); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out[at:], single.String()) {
				t.Errorf("section %s is not its single-environment text:\n%s\nwant:\n%s", envs[i].Name, out[at:], single.String())
			}
		}
	}
	if want := "\nEnvironments (3): prod: healthy; staging: 1 condition(s), 0 missing consumer(s); dev: failed.\n"; !strings.HasSuffix(out, want) {
		t.Errorf("summary line missing; want %q at the end of:\n%s", want, out)
	}
}
