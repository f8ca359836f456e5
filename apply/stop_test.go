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

// TestRunOnFailure: OnFailure is called once, when the first change fails and before
// the run ends, so that closing Stop from it keeps the later steps from starting; a
// run without a failure never calls it.
func TestRunOnFailure(t *testing.T) {
	c := testkit.Client(t)
	p := &plan.Plan{Changes: []*plan.Change{
		// The server refuses a max_age under 100ms, both times.
		stream(plan.ActCreate, "BAD1", 1, `{"subjects":["bad1.>"],"max_age":1000000}`),
		stream(plan.ActCreate, "BAD2", 1, `{"subjects":["bad2.>"],"max_age":1000000}`),
		stream(plan.ActCreate, "LATER", 2, `{"subjects":["later.>"]}`),
	}}
	stop := make(chan struct{})
	calls := 0
	res := mustRun(t, c, p, Options{Parallelism: 1, Stop: stop, OnFailure: func() {
		calls++
		close(stop)
	}})
	if calls != 1 {
		t.Fatalf("OnFailure called %d times, want once", calls)
	}
	got := statuses(res)
	if got["stream.BAD1"] != StatusFailed || got["stream.BAD2"] != StatusNotStarted || got["stream.LATER"] != StatusNotStarted {
		t.Fatalf("statuses after OnFailure closed Stop: %v", got)
	}
	if streamInfo(t, c, "LATER") != nil {
		t.Fatal("stream LATER was created after OnFailure stopped the run")
	}

	ok := &plan.Plan{Changes: []*plan.Change{stream(plan.ActCreate, "FINE", 1, `{"subjects":["fine.>"]}`)}}
	res = mustRun(t, c, ok, Options{OnFailure: func() { t.Error("OnFailure called for a run without a failure") }})
	if !res.OK() {
		t.Fatalf("run failed: %+v", res.Counts())
	}
}
