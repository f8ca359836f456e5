package plan_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/schema"
)

// rewriteCase is a configuration that sets a value the server rewrites or refuses:
// every place in checkStreamCfgLocked, configUpdateCheckLocked,
// setConsumerConfigDefaults and checkConsumerCfg of v2.15.3 where a value the file
// sets is replaced. The attribute the finding must point at ends in "# NP305".
type rewriteCase struct {
	name string
	hcl  string
	addr string
	sev  finding.Severity
	// diff is the field that differs once another tool (or an older natsplan) created
	// the object without pedantic mode, so that the server holds the value it keeps;
	// "" when the server keeps what normalisation fills in (a declared zero).
	diff string
	// np303: the server can not change the field back (one-way or immutable), so the
	// change is also blocked and the pedantic update is refused for that reason.
	np303 bool
	// refusedAtCreate: even without pedantic mode the server refuses the config.
	refusedAtCreate bool
}

const rwStream = `stream "S" {
  subjects = ["s.>"]
}
`

func rewriteCases() []rewriteCase {
	stream := func(body string) string { return "stream \"S\" {\n  subjects = [\"s.>\"]\n" + body + "}\n" }
	consumer := func(body string) string { return rwStream + "consumer \"S\" \"c\" {\n" + body + "}\n" }
	sealed := func(body string) string { return stream("  sealed = true\n" + body) }
	return []rewriteCase{
		{name: "max_msgs below -1", hcl: stream("  max_msgs = -5 # NP305\n"), addr: "stream.S", sev: finding.SevError, diff: "max_msgs"},
		{name: "max_msgs_per_subject below -1", hcl: stream("  max_msgs_per_subject = -3 # NP305\n"), addr: "stream.S",
			sev: finding.SevError, diff: "max_msgs_per_subject"},
		{name: "max_consumers below -1", hcl: stream("  max_consumers = -4 # NP305\n"), addr: "stream.S", sev: finding.SevError,
			diff: "max_consumers"},
		{name: "duplicate_window 0", hcl: stream("  duplicate_window = 0 # NP305\n"), addr: "stream.S", sev: finding.SevWarning},
		{name: "duplicate_window on a mirror",
			hcl:  "stream \"O\" {\n  subjects = [\"o.>\"]\n}\nstream \"M\" {\n  duplicate_window = \"1m\" # NP305\n  mirror {\n    name = \"O\"\n  }\n}\n",
			addr: "stream.M", sev: finding.SevWarning},
		{name: "delete markers with allow_msg_ttl false",
			hcl:  stream("  subject_delete_marker_ttl = \"5s\"\n  allow_msg_ttl = false # NP305\n"),
			addr: "stream.S", sev: finding.SevError, diff: "allow_msg_ttl", np303: true},
		{name: "delete markers with allow_rollup_hdrs false",
			hcl:  stream("  subject_delete_marker_ttl = \"5s\"\n  allow_rollup_hdrs = false # NP305\n"),
			addr: "stream.S", sev: finding.SevError, diff: "allow_rollup_hdrs"},
		{name: "delete markers with deny_purge", hcl: stream("  subject_delete_marker_ttl = \"5s\"\n  deny_purge = true # NP305\n"),
			addr: "stream.S", sev: finding.SevError, diff: "deny_purge"},
		{name: "schedules with allow_rollup_hdrs false", hcl: stream("  allow_msg_schedules = true\n  allow_rollup_hdrs = false # NP305\n"),
			addr: "stream.S", sev: finding.SevError, diff: "allow_rollup_hdrs"},
		{name: "schedules with deny_purge", hcl: stream("  allow_msg_schedules = true\n  deny_purge = true # NP305\n"),
			addr: "stream.S", sev: finding.SevError, diff: "deny_purge"},
		{name: "implicit republish",
			hcl: "stream \"S\" {\n  subjects = [\"in.>\"]\n  subject_transform {\n    src  = \"in.>\"\n    dest = \"out.>\"\n  }\n" +
				"  republish { # NP305\n    src  = \">\"\n    dest = \">\"\n  }\n}\n",
			addr: "stream.S", sev: finding.SevError, diff: "republish"},
		{name: "mirror_direct on a mirror of a stream without allow_direct",
			hcl:  "stream \"O\" {\n  subjects = [\"o.>\"]\n}\nstream \"M\" {\n  mirror_direct = true # NP305\n  mirror {\n    name = \"O\"\n  }\n}\n",
			addr: "stream.M", sev: finding.SevError, diff: "mirror_direct"},
		{name: "mirror_direct false on a mirror of a stream with allow_direct",
			hcl: "stream \"O\" {\n  subjects = [\"o.>\"]\n  allow_direct = true\n}\n" +
				"stream \"M\" {\n  mirror_direct = false # NP305\n  mirror {\n    name = \"O\"\n  }\n}\n",
			addr: "stream.M", sev: finding.SevError, diff: "mirror_direct"},
		{name: "sealed with max_age", hcl: sealed("  max_age = \"1h\" # NP305\n"), addr: "stream.S", sev: finding.SevWarning, diff: "max_age"},
		{name: "sealed with discard old", hcl: sealed("  discard = \"old\" # NP305\n"), addr: "stream.S", sev: finding.SevWarning, diff: "discard"},
		{name: "sealed with deny_delete false", hcl: sealed("  deny_delete = false # NP305\n"), addr: "stream.S",
			sev: finding.SevWarning, diff: "deny_delete", np303: true},
		{name: "sealed with deny_purge false", hcl: sealed("  deny_purge = false # NP305\n"), addr: "stream.S",
			sev: finding.SevWarning, diff: "deny_purge", np303: true},
		{name: "sealed with allow_rollup_hdrs", hcl: sealed("  allow_rollup_hdrs = true # NP305\n"), addr: "stream.S",
			sev: finding.SevError, diff: "allow_rollup_hdrs"},

		{name: "ack_wait with backoff", addr: "consumer.S.c", sev: finding.SevError, diff: "ack_wait",
			hcl: consumer("  ack_policy = \"explicit\"\n  ack_wait   = \"10s\" # NP305\n  backoff    = [\"1s\", \"10s\"]\n")},
		{name: "flow_control acks with idle_heartbeat 5s", addr: "consumer.S.c", sev: finding.SevError, diff: "idle_heartbeat", np303: true,
			hcl: consumer("  deliver_subject = \"push.c\"\n  ack_policy = \"flow_control\"\n  idle_heartbeat = \"5s\" # NP305\n")},
		{name: "flow_control acks with flow_control false", addr: "consumer.S.c", sev: finding.SevError, diff: "flow_control", np303: true,
			hcl: consumer("  deliver_subject = \"push.c\"\n  ack_policy = \"flow_control\"\n  flow_control = false # NP305\n")},
		{name: "max_deliver below -1", addr: "consumer.S.c", sev: finding.SevError, diff: "max_deliver",
			hcl: consumer("  ack_policy = \"explicit\"\n  max_deliver = -5 # NP305\n")},
		{name: "max_ack_pending below -1", addr: "consumer.S.c", sev: finding.SevError, diff: "max_ack_pending",
			hcl: consumer("  ack_policy = \"explicit\"\n  max_ack_pending = -5 # NP305\n")},
		{name: "negative max_batch", addr: "consumer.S.c", sev: finding.SevError, diff: "max_batch",
			hcl: consumer("  ack_policy = \"explicit\"\n  max_batch = -1 # NP305\n")},
		{name: "negative max_waiting", addr: "consumer.S.c", sev: finding.SevError, diff: "max_waiting", np303: true,
			hcl: consumer("  ack_policy = \"explicit\"\n  max_waiting = -1 # NP305\n")},
		{name: "ack_wait 0", addr: "consumer.S.c", sev: finding.SevWarning,
			hcl: consumer("  ack_policy = \"explicit\"\n  ack_wait = 0 # NP305\n")},
		{name: "max_waiting 0", addr: "consumer.S.c", sev: finding.SevWarning,
			hcl: consumer("  ack_policy = \"explicit\"\n  max_waiting = 0 # NP305\n")},
		{name: "max_ack_pending 0", addr: "consumer.S.c", sev: finding.SevWarning,
			hcl: consumer("  ack_policy = \"explicit\"\n  max_ack_pending = 0 # NP305\n")},
		{name: "inactive_threshold 0 under stream limits", addr: "consumer.S.c", sev: finding.SevWarning,
			hcl: "stream \"S\" {\n  subjects = [\"s.>\"]\n  consumer_limits {\n    inactive_threshold = \"1h\"\n  }\n}\n" +
				"consumer \"S\" \"c\" {\n  ack_policy = \"explicit\"\n  inactive_threshold = 0 # NP305\n}\n"},
		{name: "priority_timeout 0 with pinned clients", addr: "consumer.S.c", sev: finding.SevWarning,
			hcl: consumer("  ack_policy = \"explicit\"\n  priority_policy = \"pinned_client\"\n  priority_groups = [\"PCG\"]\n  priority_timeout = 0 # NP305\n")},
		{name: "idle_heartbeat 0 with flow_control acks", addr: "consumer.S.c", sev: finding.SevWarning,
			hcl: consumer("  deliver_subject = \"push.c\"\n  ack_policy = \"flow_control\"\n  idle_heartbeat = 0 # NP305\n")},
		{name: "consumer replicas above the stream's", addr: "consumer.S.c", sev: finding.SevError, refusedAtCreate: true,
			hcl: consumer("  ack_policy = \"explicit\"\n  num_replicas = 3 # NP305\n")},
		{name: "ack_wait with backoff in a group template", addr: "consumer.S.g", sev: finding.SevError, diff: "ack_wait",
			hcl: rwStream + "consumer_group \"g\" {\n  stream = \"S\"\n  consumer {\n    ack_wait = \"10s\" # NP305\n    backoff  = [\"1s\"]\n  }\n}\n"},
	}
}

// TestRewritesReported proves, against a real server, that every value the file sets
// and the server would replace is an NP305 finding at that attribute (an error where
// the server refuses it in pedantic mode, a warning where it keeps another value); that
// when the server holds the replaced value, plan and drift show the difference; and
// that the server does refuse the errors and accept the warnings in pedantic mode.
func TestRewritesReported(t *testing.T) {
	for _, tc := range rewriteCases() {
		t.Run(tc.name, func(t *testing.T) {
			desired, file, rng := loadMarked(t, tc.hcl)
			nc := testsrv.Connect(t, testsrv.Start(t))

			p := mustCompute(t, desired, observeModel(t, nc, model.AccountLimits{}))
			if f := rewriteFinding(p, tc.addr); f == nil || f.Severity != tc.sev || f.Range != rng {
				t.Fatalf("want NP305 %s on %s at %s:\n%s", tc.sev, tc.addr, rng, testkit.Describe(p))
			}
			err := createDeclared(nc, desired)
			if tc.refusedAtCreate {
				if err == nil {
					t.Fatalf("the server accepted %s without pedantic mode", file)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}

			live := observeModel(t, nc, model.AccountLimits{})
			p = mustCompute(t, desired, live)
			if f := rewriteFinding(p, tc.addr); f == nil || f.Severity != tc.sev || f.Range != rng {
				t.Fatalf("want NP305 %s on %s at %s against the created object:\n%s", tc.sev, tc.addr, rng, testkit.Describe(p))
			}
			chs := changesOf(p, tc.addr)
			if tc.diff == "" {
				if len(chs) > 0 {
					t.Fatalf("the server keeps what normalisation fills in, yet the plan changes %s:\n%s", tc.addr, testkit.Describe(p))
				}
				return
			}
			if len(chs) == 0 || !hasPath(chs[0].Fields, tc.diff) {
				t.Fatalf("the server holds another %s than the file, and the plan does not show it:\n%s", tc.diff, testkit.Describe(p))
			}
			if (chs[0].Blocked != "") != tc.np303 || tc.np303 && refusal(p, tc.addr, tc.diff) == nil {
				t.Fatalf("blocked = %q, want NP303: %v\n%s", chs[0].Blocked, tc.np303, testkit.Describe(p))
			}
			var drift *plan.Drift
			for _, d := range plan.Drifted(p, false).Drift {
				if d.Address == tc.addr {
					drift = d
				}
			}
			if drift == nil || drift.Status != plan.DriftChanged || !hasPath(drift.Fields, tc.diff) {
				t.Fatalf("drift does not report %s of %s:\n%s", tc.diff, tc.addr, testkit.Describe(p))
			}

			// What the server does with the declared value in pedantic mode.
			err = applyChange(nc, chs[0])
			if refuses := tc.sev == finding.SevError || tc.np303; refuses != (err != nil) {
				t.Fatalf("pedantic update: refused = %v (%v), want %v", err != nil, err, refuses)
			}
		})
	}
}

// TestRewritesCoverDefaulting fails when the table loses a case of the server's
// rewrites: each field the walk of the defaulting code found appears in a case.
func TestRewritesCoverDefaulting(t *testing.T) {
	want := []string{
		"max_msgs", "max_msgs_per_subject", "max_consumers", "duplicate_window", "allow_msg_ttl",
		"allow_rollup_hdrs", "deny_purge", "republish", "mirror_direct", "max_age", "discard", "deny_delete",
		"ack_wait", "idle_heartbeat", "flow_control", "max_deliver", "max_ack_pending", "max_batch", "max_waiting",
		"inactive_threshold", "priority_timeout", "num_replicas",
	}
	var text strings.Builder
	for _, tc := range rewriteCases() {
		for _, line := range strings.Split(tc.hcl, "\n") {
			if strings.HasSuffix(line, "# NP305") {
				text.WriteString(strings.Fields(line)[0] + "\n")
			}
		}
	}
	for _, f := range want {
		if !strings.Contains(text.String(), f+"\n") {
			t.Errorf("no rewrite case sets %s", f)
		}
	}
}

// loadMarked writes src (after a natsplan block) to a file, loads it, and returns the
// model, the file name and the file:line:col of the attribute marked "# NP305".
func loadMarked(t *testing.T, src string) (*model.Model, string, string) {
	t.Helper()
	src = "natsplan {\n  project = \"shop\"\n}\n\n" + src
	file := filepath.Join(t.TempDir(), "shop.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	d, diags := schema.Load([]string{file}, schema.Vars{})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	for i, line := range strings.Split(src, "\n") {
		if strings.HasSuffix(line, "# NP305") {
			col := len(line) - len(strings.TrimLeft(line, " ")) + 1
			return d, file, fmt.Sprintf("%s:%d:%d", file, i+1, col)
		}
	}
	t.Fatal("no line is marked # NP305")
	return nil, "", ""
}

func rewriteFinding(p *plan.Plan, addr string) *finding.Finding {
	for _, f := range p.Findings {
		if f.Code == finding.CodeRewrite && f.Address == addr {
			return f
		}
	}
	return nil
}

func hasPath(fs []*plan.FieldChange, path string) bool {
	for _, f := range fs {
		if f.Path == path || strings.HasPrefix(f.Path, path+".") {
			return true
		}
	}
	return false
}

// createDeclared creates every declared object from its config as the file declares
// it, without pedantic mode, as another tool would: the server keeps what it keeps.
// A sealed stream is created first and sealed in an update, as the server requires.
func createDeclared(nc *nats.Conn, d *model.Model) error {
	names := d.StreamNames()
	sort.SliceStable(names, func(i, j int) bool { // origins before their mirrors
		return d.Streams[names[i]].Config.Mirror == nil && d.Streams[names[j]].Config.Mirror != nil
	})
	for _, name := range names {
		cfg := d.Streams[name].Config
		cfg.Name, cfg.Metadata = name, withProject(cfg.Metadata)
		first := cfg
		first.Sealed = false
		if err := createStreamRaw(nc, first, false); err != nil {
			return err
		}
		if cfg.Sealed {
			if cfg.Storage == 0 {
				cfg.Storage = server.FileStorage
			}
			if err := updateStreamRaw(nc, mustJSON(cfg), false); err != nil {
				return err
			}
		}
	}
	for _, k := range d.ConsumerKeys() {
		cfg := d.Consumers[k].Config
		cfg.Durable, cfg.Metadata = k.Name, withProject(cfg.Metadata)
		if err := consumerRaw(nc, k.Stream, mustJSON(cfg), "create", false); err != nil {
			return err
		}
	}
	return nil
}
