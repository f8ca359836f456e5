package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/internal/testsrv"
)

// refusal is a configuration the server refuses. The line that causes it ends with
// "# ERROR <code> <server error code>"; plan must report exactly that there, apply
// must send nothing, and validate (when no server is needed) must report it too.
type refusal struct {
	name string
	// live is applied first: the refusal is of an update. Empty for creates.
	live string
	// config is the configuration planned; the natsplan block is added to both.
	config string
	// offline: validate, with no server, must refuse it too.
	offline bool
}

const refusalProject = "natsplan {\n  project = \"refused\"\n}\n"

// refusedCreates are one case per server error code a stream or consumer create can
// return for a configuration (jetstream_api.go, stream.go checkStreamCfgLocked,
// consumer.go setConsumerConfigDefaults and checkConsumerCfg), and every example of the
// issues that found them.
var refusedCreates = []refusal{
	{name: "max_age below 100ms", config: `
stream "S" {
  subjects = ["s.>"]
  max_age  = "50ms" # ERROR NP304 10052
}`},
	{name: "description over 4096 characters", config: `
stream "S" {
  subjects    = ["s.>"]
  description = "` + strings.Repeat("d", 5000) + `" # ERROR NP304 10052
}`},
	{name: "empty subject token", config: `
stream "S" {
  subjects = ["a..b"] # ERROR NP304 10052
}`},
	{name: "subject with a space", config: `
stream "S" {
  subjects = ["a b"] # ERROR NP304 10052
}`},
	{name: "max_msgs below -1", config: `
stream "S" {
  subjects = ["s.>"]
  max_msgs = -5 # ERROR NP305 -
}`},
	{name: "max_age below duplicate_window", config: `
stream "S" {
  subjects         = ["s.>"]
  max_age          = "1m"
  duplicate_window = "2m" # ERROR NP304 10052
}`},
	{name: "overlapping subjects of one stream", config: `
stream "S" {
  subjects = ["s.>", "s.a"] # ERROR NP304 10052
}`},
	{name: "roll-ups with deny_purge", config: `
stream "S" {
  subjects          = ["s.>"]
  deny_purge        = true
  allow_rollup_hdrs = true # ERROR NP304 10052
}`},
	{name: "discard_new_per_subject without discard new", config: `
stream "S" {
  subjects                = ["s.>"]
  max_msgs_per_subject    = 1
  discard_new_per_subject = true # ERROR NP304 10052
}`},
	{name: "subject delete marker TTL below 1s", config: `
stream "S" {
  subjects                  = ["s.>"]
  allow_msg_ttl             = true
  allow_rollup_hdrs         = true
  subject_delete_marker_ttl = "500ms" # ERROR NP304 10052
}`},
	{name: "counter stream with discard new", config: `
stream "S" {
  subjects          = ["s.>"]
  allow_msg_counter = true
  discard           = "new" # ERROR NP304 10052
}`},
	{name: "async persist on memory storage", config: `
stream "S" {
  subjects     = ["s.>"]
  storage      = "memory"
  persist_mode = "async" # ERROR NP304 10052
}`},
	{name: "republish forming a cycle", config: `
stream "S" {
  subjects = ["s.>"]
  republish { # ERROR NP304 10052
    src  = "s.>"
    dest = "s.again.>"
  }
}`},
	{name: "mirror with subjects", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "M" {
  subjects = ["m.>"] # ERROR NP304 10034
  mirror {
    name = "O"
  }
}`},
	{name: "mirror with sources", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "M" {
  mirror {
    name = "O"
  }
  source { # ERROR NP304 10031
    name = "O"
  }
}`},
	{name: "mirror with first_seq", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "M" {
  first_seq = 10 # ERROR NP304 10143
  mirror {
    name = "O"
  }
}`},
	{name: "mirror with a filter and transforms", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "M" {
  mirror {
    name           = "O"
    filter_subject = "o.a" # ERROR NP304 10150
    subject_transform {
      src  = "o.b"
      dest = "m.b"
    }
  }
}`},
	{name: "mirror smaller max_msg_size than its origin", config: `
stream "O" {
  subjects     = ["o.>"]
  max_msg_size = 2048
}
stream "M" {
  max_msg_size = 1024 # ERROR NP304 10030
  mirror {
    name = "O"
  }
}`},
	{name: "mirror calculating counters", config: `
stream "O" {
  subjects          = ["o.>"]
}
stream "M" {
  allow_msg_counter = true # ERROR NP304 10173
  mirror {
    name = "O"
  }
}`},
	{name: "source with a filter and transforms", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "S" {
  source {
    name           = "O"
    filter_subject = "o.a" # ERROR NP304 10144
    subject_transform {
      src  = "o.b"
      dest = "s.b"
    }
  }
}`},
	{name: "the same source twice", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "S" {
  source { # ERROR NP304 10140
    name = "O"
  }
  source {
    name = "O"
  }
}`},
	{name: "source transforms overlapping", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "S" {
  source {
    name = "O"
    subject_transform { # ERROR NP304 10147
      src  = "o.>"
      dest = "s.>"
    }
    subject_transform {
      src  = "o.a"
      dest = "s.a"
    }
  }
}`},
	{name: "source transform to a bad destination", config: `
stream "O" {
  subjects = ["o.>"]
}
stream "S" {
  source {
    name = "O"
    subject_transform {
      src  = "o.*"
      dest = "s.{{wildcard(2)}}" # ERROR NP304 10146
    }
  }
}`},
	{name: "stream transform to a bad destination", config: `
stream "S" {
  subjects = ["s.*"]
  subject_transform {
    src  = "s.*"
    dest = "t.{{wildcard(3)}}" # ERROR NP304 10156
  }
}`},
	{name: "consumer with filter_subject and filter_subjects", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  filter_subject  = "s.a" # ERROR NP304 10136
  filter_subjects = ["s.b"]
}`},
	{name: "backoff longer than max_deliver", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy  = "explicit"
  ack_wait    = "1s"
  backoff     = ["1s", "2s", "3s"] # ERROR NP304 10116
  max_deliver = 2
}`},
	{name: "last_per_subject without a filter", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy     = "explicit"
  deliver_policy = "last_per_subject" # ERROR NP304 10094
}`},
	{name: "start sequence with deliver all", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy    = "explicit"
  opt_start_seq = 5 # ERROR NP304 10094
}`},
	{name: "stream consumer_limits below the consumer's max_ack_pending", config: `
stream "S" {
  subjects = ["s.>"]
  consumer_limits {
    max_ack_pending = 10
  }
}
consumer "S" "c" {
  ack_policy      = "explicit"
  max_ack_pending = 100 # ERROR NP304 10121
}`},
	{name: "stream consumer_limits below the consumer's inactive_threshold", config: `
stream "S" {
  subjects = ["s.>"]
  consumer_limits {
    inactive_threshold = "1m"
    max_ack_pending    = 100
  }
}
consumer "S" "c" {
  ack_policy         = "explicit"
  max_ack_pending    = 100
  inactive_threshold = "1h" # ERROR NP304 10153
}`},
	{name: "overlapping filters", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  filter_subjects = ["s.>", "s.a"] # ERROR NP304 10138
}`},
	{name: "pull consumer with heartbeats", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy     = "explicit"
  idle_heartbeat = "5s" # ERROR NP304 10088
}`},
	{name: "pull consumer with flow control", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy   = "explicit"
  flow_control = true # ERROR NP304 10089
}`},
	{name: "pull consumer with a rate limit", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy     = "explicit"
  rate_limit_bps = 1000 # ERROR NP304 10086
}`},
	{name: "push consumer delivering to a wildcard", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  deliver_subject = "out.*" # ERROR NP304 10079
}`},
	{name: "push consumer delivering into its stream", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  deliver_subject = "s.out" # ERROR NP304 10081
}`},
	{name: "push consumer with max_waiting", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  deliver_subject = "out"
  max_waiting     = 10 # ERROR NP304 10080
}`},
	{name: "push consumer with a tiny heartbeat", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  deliver_subject = "out"
  idle_heartbeat  = "50ms" # ERROR NP304 10083
}`},
	{name: "max_ack_pending without acks", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "none"
  deliver_subject = "out"
  max_ack_pending = 10 # ERROR NP304 10082
}`},
	{name: "pull consumer without acks on a workqueue", config: `
stream "S" {
  subjects  = ["s.>"]
  retention = "workqueue"
}
consumer "S" "c" {
  ack_policy = "none" # ERROR NP304 10084
}`},
	{name: "max_expires below 1ms", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy  = "explicit"
  max_expires = "500us" # ERROR NP304 10115
}`},
	{name: "bad sampling", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy  = "explicit"
  sample_freq = "often" # ERROR NP304 10095
}`},
	{name: "consumer description over 4096 characters", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy  = "explicit"
  description = "` + strings.Repeat("d", 5000) + `" # ERROR NP304 10107
}`},
	{name: "priority policy without groups", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  priority_policy = "overflow" # ERROR NP304 10159
}`},
	{name: "bad priority group name", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  priority_policy = "overflow"
  priority_groups = ["not valid!"] # ERROR NP304 10162
}`},
	{name: "flow control ack policy on a pull consumer", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "flow_control" # ERROR NP304 10218
  max_ack_pending = 10
}`},
	{name: "consumer replicas above its stream's", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy   = "explicit"
  num_replicas = 3 # ERROR NP305 -
}`},
	{name: "kv bucket with a ttl below 100ms", config: `
kv "sessions" {
  history = 2
  ttl     = "50ms" # ERROR NP304 10052
}`},
	{name: "object store with a description over 4096 characters", config: `
object_store "assets" {
  description = "` + strings.Repeat("d", 5000) + `" # ERROR NP304 10052
}`},
}

func init() {
	for i := range refusedCreates {
		refusedCreates[i].offline = true
	}
}

// refusedUpdates are updates of existing objects that the server refuses.
var refusedUpdates = []refusal{
	{name: "max_age lowered below 100ms", live: `
stream "S" {
  subjects = ["s.>"]
  max_age  = "1h"
}`, config: `
stream "S" {
  subjects = ["s.>"]
  max_age  = "50ms" # ERROR NP304 10052
}`},
	{name: "max_age lowered below the duplicate window", live: `
stream "S" {
  subjects         = ["s.>"]
  duplicate_window = "2m"
}`, config: `
stream "S" {
  subjects         = ["s.>"]
  max_age          = "1m" # ERROR NP304 10052
  duplicate_window = "2m"
}`},
	{name: "consumer_limits lowered below a live consumer", live: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  max_ack_pending = 500
}`, config: `
stream "S" {
  subjects = ["s.>"]
  consumer_limits {
    max_ack_pending = 100 # ERROR NP304 10069
  }
}
consumer "S" "c" {
  ack_policy      = "explicit"
  max_ack_pending = 500
}`},
	{name: "consumer updated to filter_subject and filter_subjects", live: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy     = "explicit"
  filter_subject = "s.a"
}`, config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy      = "explicit"
  filter_subject  = "s.a"
  filter_subjects = ["s.b"] # ERROR NP304 10136
}`},
	{name: "consumer updated to a backoff longer than max_deliver", live: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy  = "explicit"
  ack_wait    = "1s"
  max_deliver = 2
}`, config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "c" {
  ack_policy  = "explicit"
  ack_wait    = "1s"
  backoff     = ["1s", "2s", "3s"] # ERROR NP304 10116
  max_deliver = 2
}`},
	{name: "subjects updated to overlap each other", live: `
stream "S" {
  subjects = ["s.a"]
}`, config: `
stream "S" {
  subjects = ["s.a", "s.>"] # ERROR NP304 10052
}`},
	{name: "republish added that forms a cycle", live: `
stream "S" {
  subjects = ["s.>"]
}`, config: `
stream "S" {
  subjects = ["s.>"]
  republish { # ERROR NP304 10052
    src  = "s.>"
    dest = "s.copy.>"
  }
}`},
	{name: "mirror given subject delete markers", live: `
stream "O" {
  subjects = ["o.>"]
}
stream "M" {
  mirror {
    name = "O"
  }
}`, config: `
stream "O" {
  subjects = ["o.>"]
}
stream "M" {
  mirror {
    name = "O"
  }
  subject_delete_marker_ttl = "5s" # ERROR NP304 10052
  allow_msg_ttl             = true
  allow_rollup_hdrs         = true
}`},
}

// TestRefusedConfigurations: every configuration the server refuses is a plan error
// at the attribute that causes it (and a validate error where no server is needed),
// and apply sends nothing at all.
func TestRefusedConfigurations(t *testing.T) {
	for _, tc := range append(append([]refusal{}, refusedCreates...), refusedUpdates...) {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			url := s.ClientURL()
			nc := testsrv.Connect(t, s)
			if tc.live != "" {
				mustCLI(t, url, "apply", "--auto-approve", writeConfig(t, map[string]string{"c.hcl": refusalProject + tc.live}))
			}
			expectRefused(t, url, nc, tc)
		})
	}
}

// expectRefused plans and applies tc.config against url and proves the refusal is
// reported where marked, and that apply sent no write (nc is in the target account).
func expectRefused(t *testing.T, url string, nc *nats.Conn, tc refusal) {
	t.Helper()
	src := refusalProject + tc.config
	dir := writeConfig(t, map[string]string{"c.hcl": src})
	code, line, want := errorMarker(t, src)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	before := serverState(t, js)

	exit, p := planJSON(t, url, dir)
	if exit != exitError {
		t.Fatalf("plan exit %d, want 1", exit)
	}
	requireFinding(t, "plan", p.Findings, code, line, want)

	writes := countWrites(t, nc)
	if exit, out, errOut := cli(t, url, "apply", "--auto-approve", dir); exit != exitError {
		t.Fatalf("apply exit %d, want 1\n%s\n%s", exit, out, errOut)
	}
	writes.settle(t)
	if n := writes.Load(); n != 0 {
		t.Fatalf("apply sent %d write requests, want none", n)
	}
	if diff := diffStates(before, serverState(t, js)); diff != "" {
		t.Fatalf("apply changed the server:\n%s", diff)
	}

	if tc.offline {
		exit, out, errOut := cli(t, "", "validate", "--format", "json", dir)
		if exit != exitError {
			t.Fatalf("validate exit %d, want 1\n%s\n%s", exit, out, errOut)
		}
		var doc struct {
			Findings []*finding.Finding `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("validate --format json: %v\n%s", err, out)
		}
		requireFinding(t, "validate", doc.Findings, code, line, want)
	}
}

// errorMarker finds the "# ERROR <code> <server code>" line of src. The server code is
// "-" for a finding plan makes without the server (NP305 names the rewrite instead).
func errorMarker(t *testing.T, src string) (code string, line int, serverCode string) {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if _, marker, ok := strings.Cut(l, "# ERROR "); ok {
			f := strings.Fields(marker)
			if len(f) != 2 {
				t.Fatalf("bad marker %q", l)
			}
			return f[0], i + 1, f[1]
		}
	}
	t.Fatal("the configuration has no # ERROR marker")
	return "", 0, ""
}

// requireFinding fails unless findings hold an error with code at line whose message
// names the server's error code.
func requireFinding(t *testing.T, what string, findings []*finding.Finding, code string, line int, serverCode string) {
	t.Helper()
	var got []string
	for _, f := range findings {
		if f.Severity != finding.SevError {
			continue
		}
		got = append(got, fmt.Sprintf("%s %s %s", f.Code, f.Range, f.Message))
		if string(f.Code) == code && strings.Contains(f.Range, fmt.Sprintf(".hcl:%d:", line)) &&
			(serverCode == "-" || strings.Contains(f.Message, "JetStream error "+serverCode)) {
			return
		}
	}
	t.Fatalf("%s: no %s error at line %d naming JetStream error %s; errors:\n  %s", what, code, line, serverCode, strings.Join(got, "\n  "))
}

// diffStates lists what differs between two serverState snapshots.
func diffStates(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, "changed or gone: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "new: "+k)
		}
	}
	return strings.Join(out, "\n")
}

// accountLimitsConf is a server with accounts whose JetStream limits the cases reach.
const accountLimitsConf = `
listen: "127.0.0.1:-1"
jetstream { store_dir: %q }
accounts {
  COUNTS { jetstream { max_streams: 5, max_consumers: 2, max_mem: -1, max_file: -1 }, users: [{user: counts, password: p}] }
  BYTES  { jetstream { max_file: 16M, max_mem: 1M, max_bytes_required: true, max_ack_pending: 100 }, users: [{user: bytes, password: p}] }
  TIERED { users: [{user: tiered, password: p}] }
}
`

// TestRefusedByAccountLimits: the account's JetStream limits refuse what the plan asks
// for; plan says so at the create the server would refuse first, apply sends nothing.
func TestRefusedByAccountLimits(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, accountLimitsConf, filepath.Join(dir, "js")), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	s := testsrv.StartOptions(t, opts)
	// Tiered limits come from account JWTs; a config file can not write them.
	tiered, err := s.LookupAccount("TIERED")
	if err != nil {
		t.Fatal(err)
	}
	if err := tiered.EnableJetStream(map[string]server.JetStreamAccountLimits{
		"R1": {MaxStreams: 2, MaxConsumers: -1, MaxMemory: -1, MaxStore: -1, MaxAckPending: -1},
	}, nil); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(s.ClientURL(), "nats://")
	eightStreams := ""
	for i := range 8 {
		line := ""
		if i == 5 {
			line = " # ERROR NP403 10027"
		}
		eightStreams += fmt.Sprintf("stream \"S%d\" {%s\n  subjects = [\"s%d.>\"]\n  max_bytes = \"1MiB\"\n}\n", i, line, i)
	}
	cases := []struct {
		user string
		refusal
	}{
		{"counts", refusal{name: "more streams than max_streams", config: eightStreams}},
		{"counts", refusal{name: "more consumers on a stream than max_consumers", config: `
stream "S" {
  subjects = ["s.>"]
}
consumer "S" "a" {
  ack_policy = "explicit"
}
consumer "S" "b" {
  ack_policy = "explicit"
}
consumer "S" "c" { # ERROR NP403 10026
  ack_policy = "explicit"
}`}},
		{"counts", refusal{name: "a stream's max_consumers above the account's", config: `
stream "S" {
  subjects      = ["s.>"]
  max_consumers = 10 # ERROR NP403 10026
}`}},
		{"bytes", refusal{name: "max_bytes required", config: `
stream "S" { # ERROR NP403 10113
  subjects = ["s.>"]
}`}},
		{"bytes", refusal{name: "file reservations above max_file", config: `
stream "A" {
  subjects  = ["a.>"]
  max_bytes = "10MiB"
}
stream "B" {
  subjects  = ["b.>"]
  max_bytes = "10MiB" # ERROR NP403 10047
}`}},
		{"bytes", refusal{name: "memory reservation above max_mem", config: `
stream "A" {
  subjects  = ["a.>"]
  storage   = "memory"
  max_bytes = "2MiB" # ERROR NP403 10028
}`}},
		{"bytes", refusal{name: "max_ack_pending above the account's", config: `
stream "A" {
  subjects  = ["a.>"]
  max_bytes = "1MiB"
}
consumer "A" "c" {
  ack_policy      = "explicit"
  max_ack_pending = 500 # ERROR NP403 10121
}`}},
		{"tiered", refusal{name: "more R1 streams than the tier allows", config: `
stream "A" {
  subjects = ["a.>"]
}
stream "B" {
  subjects = ["b.>"]
}
stream "C" { # ERROR NP403 10027
  subjects = ["c.>"]
}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := "nats://" + tc.user + ":p@" + host
			nc, err := nats.Connect(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(nc.Close)
			expectRefused(t, url, nc, tc.refusal)
		})
	}
}

// TestRefusedByClusterSize: a 3-node cluster refuses five replicas, and replica rules
// the single-node preflight server can not see are still checked.
func TestRefusedByClusterSize(t *testing.T) {
	c := testsrv.StartCluster(t)
	url := c.Servers[0].ClientURL()
	nc := testsrv.Connect(t, c.Servers[0])
	for _, tc := range []refusal{
		{name: "five replicas on three servers", config: `
stream "S" {
  subjects     = ["s.>"]
  num_replicas = 5 # ERROR NP403 10005
}`},
		{name: "consumer replicas unlike its interest stream's", config: `
stream "S" {
  subjects     = ["s.>"]
  retention    = "interest"
  num_replicas = 3
}
consumer "S" "c" {
  ack_policy   = "explicit"
  num_replicas = 1 # ERROR NP304 10134
}`},
	} {
		t.Run(tc.name, func(t *testing.T) { expectRefused(t, url, nc, tc) })
	}
}

// TestRefusedOnSingleServer: replicas on a server outside a cluster; above the
// server's maximum of 5 validate refuses them too.
func TestRefusedOnSingleServer(t *testing.T) {
	for _, tc := range []refusal{
		{name: "three replicas", config: `
stream "S" {
  subjects     = ["s.>"]
  num_replicas = 3 # ERROR NP403 10074
}`},
		{name: "seven replicas", config: `
kv "flags" {
  num_replicas = 7 # ERROR NP403 10074
}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testsrv.Start(t)
			expectRefused(t, s.ClientURL(), testsrv.Connect(t, s), tc)
		})
	}
	dir := writeConfig(t, map[string]string{"c.hcl": refusalProject + `
stream "S" {
  subjects     = ["s.>"]
  num_replicas = 7
}`})
	code, out, errOut := offlineCLI(t, "validate", dir)
	if code != exitError || !strings.Contains(errOut, "c.hcl:7:3: error NP304") || !strings.Contains(errOut, "maximum replicas is 5") {
		t.Fatalf("validate of 7 replicas: exit %d, want the server's refusal at c.hcl:7:3\n%s\n%s", code, out, errOut)
	}
}

// TestExamplesValidate: no example is refused offline (no false refusals); that they
// plan and apply cleanly against a server is TestExamplesConverge.
func TestExamplesValidate(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if code, out, errOut := offlineCLI(t, "validate", dir); code != 0 {
				t.Fatalf("validate exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}
