package apply

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// TestRunDeleteGhostConsumer makes the cluster ghost of reference §5.2 (a filtered
// consumer created after an unfiltered one on a workqueue stream: refused, but its
// assignment stays and its delete times out) and checks that deleting it counts as done
// because the consumer is gone afterwards.
func TestRunDeleteGhostConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	cl := testsrv.StartCluster(t)
	nc, err := nats.Connect(cl.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// A short request timeout for the deletes; listing waits for the ghost to not
	// answer, so it gets longer.
	c := jsapi.New(nc, "", time.Second)
	ctx := context.Background()
	listCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	seedStream(t, c, "WQ", `{"subjects":["wq.>"],"retention":"workqueue","num_replicas":3}`)
	seedConsumer(t, c, "WQ", "all", `{"ack_policy":"explicit"}`)
	_, err = c.WriteConsumer(ctx, "WQ", "ghost", withField(`{"ack_policy":"explicit","filter_subject":"wq.a"}`, "durable_name", "ghost"), jsapi.ConsumerCreate)
	if jsapi.ErrCode(err) != 10100 {
		t.Fatalf("creating the ghost: %v, want 10100", err)
	}
	page, err := c.ListConsumers(listCtx, "WQ", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Missing) != 1 || page.Missing[0] != "ghost" {
		t.Fatalf("missing consumers %v, want the ghost", page.Missing)
	}

	var out lines
	res := mustRun(t, c, &plan.Plan{Changes: []*plan.Change{consumer(plan.ActDelete, "WQ", "ghost", 1, "")}}, Options{AllowDelete: true, Progress: &out})
	if s := res.Steps[0]; s.Status != StatusDone {
		t.Fatalf("delete of the ghost: %s %v\n%s", s.Status, s.Err, out.String())
	}
	page, err = c.ListConsumers(listCtx, "WQ", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Missing) != 0 || len(page.Consumers) != 1 {
		t.Errorf("after the delete: consumers %d, missing %v; want only the unfiltered one", len(page.Consumers), page.Missing)
	}
}
