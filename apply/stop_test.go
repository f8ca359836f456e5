package apply

import (
	"fmt"
	"strings"
	"testing"

	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/plan"
)

// TestRunStop closes Stop while a change is being started: that change and the ones
// already in flight finish, nothing else starts, and the rest is not_started.
func TestRunStop(t *testing.T) {
	cases := []struct {
		par      int
		stopAt   int // Stop closes as stream S<stopAt> starts
		wantDone int // streams S1..S<wantDone> done
	}{
		{par: 1, stopAt: 2, wantDone: 2},
		{par: 3, stopAt: 4, wantDone: 4},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("parallelism %d", tc.par), func(t *testing.T) {
			c := testkit.Client(t)
			var changes []*plan.Change
			for i := 1; i <= 6; i++ {
				changes = append(changes, stream(plan.ActCreate, fmt.Sprintf("S%d", i), 1, fmt.Sprintf(`{"subjects":["s%d.>"]}`, i)))
			}
			changes = append(changes, consumer(plan.ActCreate, "S1", "c", 2, `{"ack_policy":"explicit"}`, "stream.S1"))
			stop := make(chan struct{})
			out := &lines{marker: fmt.Sprintf("stream.S%d: creating", tc.stopAt), onMark: func() { close(stop) }}
			res := mustRun(t, c, &plan.Plan{Changes: changes}, Options{Parallelism: tc.par, Progress: out, Stop: stop})

			for i, s := range res.Steps[:6] {
				want := StatusNotStarted
				if i < tc.wantDone {
					want = StatusDone
				}
				if s.Status != want {
					t.Errorf("%s: %s, want %s", s.Address, s.Status, want)
				}
				if exists := streamInfo(t, c, fmt.Sprintf("S%d", i+1)) != nil; exists != (want == StatusDone) {
					t.Errorf("%s exists on the server: %v, want %v", s.Address, exists, want == StatusDone)
				}
			}
			if s := res.Steps[6]; s.Status != StatusNotStarted || consumerInfo(t, c, "S1", "c") != nil {
				t.Errorf("%s: %s after stop, want not_started and absent", s.Address, s.Status)
			}
			if got := res.Counts(); got != (Counts{Done: tc.wantDone, NotStarted: len(changes) - tc.wantDone}) {
				t.Errorf("counts = %+v", got)
			}
			if !strings.Contains(out.String(), "stopping:") {
				t.Errorf("progress does not say it stops:\n%s", out.String())
			}
		})
	}
}
