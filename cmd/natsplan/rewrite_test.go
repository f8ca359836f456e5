package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// rewrittenConfig sets three values the server replaces when it is not in pedantic
// mode: ack_wait other than the first backoff step, a flow-control heartbeat other than
// 1s, and mirror_direct on a mirror of a stream without allow_direct.
const rewrittenConfig = `natsplan {
  project = "shop"
}

stream "O" {
  subjects = ["o.>"]
}

stream "M" {
  mirror_direct = true
  mirror {
    name = "O"
  }
}

consumer "O" "retry" {
  ack_policy = "explicit"
  ack_wait   = "10s"
  backoff    = ["1s", "10s"]
}

consumer "O" "push" {
  deliver_subject = "push.o"
  ack_policy      = "flow_control"
  idle_heartbeat  = "5s"
}
`

// TestRewrittenValuesAreDifferences: the three values reported as silently replaced.
// Created as another tool would (not pedantic), the server holds ack_wait 1s, a 1s
// heartbeat and mirror_direct false. plan shows each difference with an NP305 error at
// the attribute's line; drift reports each one (exit 2), never "in sync".
func TestRewrittenValuesAreDifferences(t *testing.T) {
	s := testsrv.Start(t)
	nc := testsrv.Connect(t, s)
	owned := map[string]string{"natsplan.project": "shop"}
	for _, r := range []struct {
		subj string
		body any
	}{
		{"$JS.API.STREAM.CREATE.O", map[string]any{"name": "O", "subjects": []string{"o.>"}, "metadata": owned}},
		{"$JS.API.STREAM.CREATE.M", map[string]any{"name": "M", "mirror": map[string]string{"name": "O"},
			"mirror_direct": true, "metadata": owned}},
		{"$JS.API.CONSUMER.CREATE.O.retry", map[string]any{"stream_name": "O", "config": map[string]any{
			"durable_name": "retry", "ack_policy": "explicit", "ack_wait": 10 * time.Second,
			"backoff": []time.Duration{time.Second, 10 * time.Second}, "metadata": owned}}},
		{"$JS.API.CONSUMER.CREATE.O.push", map[string]any{"stream_name": "O", "config": map[string]any{
			"durable_name": "push", "deliver_subject": "push.o", "ack_policy": "flow_control",
			"idle_heartbeat": 5 * time.Second, "metadata": owned}}},
	} {
		body, _ := json.Marshal(r.body)
		msg, err := nc.Request(r.subj, body, 5*time.Second)
		if err != nil || strings.Contains(string(msg.Data), `"error"`) {
			t.Fatalf("%s: %v %s", r.subj, err, msg.Data)
		}
	}
	dir := writeConfig(t, map[string]string{"shop.hcl": rewrittenConfig})
	file := filepath.Join(dir, "shop.hcl")

	code, out, errOut := cli(t, s.ClientURL(), "plan", dir)
	if code != exitError {
		t.Fatalf("plan: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"NP305 error stream.M " + file + ":10:3", "mirror_direct: false -> true",
		"NP305 error consumer.O.retry " + file + ":18:3", "ack_wait: 1s -> 10s",
		"NP305 error consumer.O.push " + file + ":25:3", "idle_heartbeat: 1s -> 5s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q\n%s", want, out)
		}
	}
	if strings.Contains(out, "No changes") {
		t.Errorf("plan says the server matches\n%s", out)
	}

	code, out, errOut = cli(t, s.ClientURL(), "drift", dir)
	if code != exitChanges {
		t.Fatalf("drift: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"stream.M (changed)", "mirror_direct: files true, server false",
		"consumer.O.retry (changed)", "ack_wait: files 10s, server 1s",
		"consumer.O.push (changed)", "idle_heartbeat: files 5s, server 1s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("drift lacks %q\n%s", want, out)
		}
	}
}
