package main

import (
	"testing"

	"github.com/natsplan/natsplan/internal/testsrv"
)

const clusterConfig = `
natsplan {
  project = "ha"
}

stream "HA" {
  subjects     = ["ha.>"]
  num_replicas = 3
  placement {
    cluster = "c"
  }
}

consumer "HA" "worker" {
  ack_policy      = "explicit"
  num_replicas    = 3
  max_ack_pending = 100
}
`

// TestClusterConverges covers the fields a single server refuses: replicas and
// placement converge on a 3-node cluster, and a second apply sends no write.
func TestClusterConverges(t *testing.T) {
	c := testsrv.StartCluster(t)
	// One node's URL: the write counter listens on that node, so every request the CLI
	// sends passes it before its reply, with no route in between.
	url := c.Servers[0].ClientURL()
	dir := writeConfig(t, map[string]string{"ha.hcl": clusterConfig})
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", dir); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, url, "plan", "--detailed-exitcode", dir); code != 0 {
		t.Fatalf("plan after apply: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	writes := writeCounter(t, c.Servers[0])
	if code, out, errOut := cli(t, url, "apply", "--auto-approve", dir); code != 0 {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, out, errOut)
	}
	writes.settle(t)
	if n := writes.Load(); n != 0 {
		t.Fatalf("second apply sent %d write requests, want 0", n)
	}
}
