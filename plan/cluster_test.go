package plan_test

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/internal/testsrv"
	"github.com/natsplan/natsplan/plan"
)

// TestSeparateStepsOnCluster proves that a change the server only accepts in separate
// updates (move and scale; scale and retention) is split into ordered parts, each of
// which the server accepts, and that the result converges.
func TestSeparateStepsOnCluster(t *testing.T) {
	c := testsrv.StartCluster(t)
	nc, err := nats.Connect(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	for _, tc := range []struct {
		name   string
		to     func(*server.StreamConfig)
		phases int
	}{
		{"MOVE", func(s *server.StreamConfig) {
			s.Replicas = 3
			s.Placement = &server.Placement{Cluster: "c"}
		}, 2},
		{"RETAIN", func(s *server.StreamConfig) {
			s.Retention = server.InterestPolicy
			s.Placement = &server.Placement{Cluster: "c"}
		}, 2},
		{"SCALE", func(s *server.StreamConfig) {
			s.Replicas = 3
			s.Retention = server.InterestPolicy
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			converge(t, nc, desiredModel([]server.StreamConfig{stream(tc.name, nil)}, nil))
			to := stream(tc.name, nil)
			tc.to(&to)
			d := desiredModel([]server.StreamConfig{to}, nil)
			// Sending the whole change at once is what the server refuses.
			whole := plan.NormalizeStream(to, nil)
			whole.Metadata = withProject(nil)
			err := updateStreamRaw(nc, mustJSON(whole), true)
			if tc.phases > 1 && err == nil {
				t.Fatal("server accepted a move with a scale or retention change in one update")
			}
			if tc.phases == 1 {
				// The server takes a scale with a retention change in one update, so the
				// plan must not split it: the update just sent converged.
				if err != nil {
					t.Fatal(err)
				}
				d2 := desiredModel([]server.StreamConfig{stream(tc.name, nil)}, nil)
				p := mustCompute(t, d2, observeSettled(t, nc))
				if chs := changesOf(p, "stream."+tc.name); len(chs) != 1 || chs[0].Phase != "" {
					t.Fatalf("the way back is one change:\n%s", testkit.Describe(p))
				}
				d = d2
			}
			p := mustCompute(t, d, observeSettled(t, nc))
			chs := changesOf(p, "stream."+tc.name)
			if len(chs) != tc.phases {
				t.Fatalf("want %d parts:\n%s", tc.phases, testkit.Describe(p))
			}
			for i, ch := range chs {
				if i > 0 && ch.Step <= chs[i-1].Step {
					t.Fatalf("parts are not in separate steps:\n%s", testkit.Describe(p))
				}
			}
			if err := applyPlan(t, nc, p); err != nil {
				t.Fatal(err)
			}
			if again := mustCompute(t, d, observeSettled(t, nc)); again.HasChanges() {
				t.Fatalf("plan after apply not empty:\n%s", testkit.Describe(again))
			}
		})
	}
}
