package apply

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/natsplan/natsplan/internal/testkit"
	"github.com/natsplan/natsplan/plan"
)

// TestRunPause checks pause_until, which the server honours only when it creates a
// consumer: apply pauses and resumes through the PAUSE API where the write did not.
func TestRunPause(t *testing.T) {
	c := testkit.Client(t)
	seedStream(t, c, "P", `{"subjects":["p.>"]}`)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	later := until.Add(time.Hour)
	pausedCfg := func(at time.Time) string {
		return fmt.Sprintf(`{"ack_policy":"explicit","pause_until":%q}`, at.Format(time.RFC3339Nano))
	}
	const plain = `{"ack_policy":"explicit"}`
	pauseField := []*plan.FieldChange{{Path: "pause_until", Rule: plan.RuleInPlace}}

	cases := []struct {
		name   string
		seed   string     // existing consumer config, "" for none
		paused *time.Time // paused by hand before the run
		action plan.Action
		after  string
		fields []*plan.FieldChange
		want   *time.Time // pause_until afterwards, nil for not paused
	}{
		{name: "create paused", action: plan.ActCreate, after: pausedCfg(until), want: &until},
		{name: "update pauses", seed: plain, action: plan.ActUpdate, after: pausedCfg(until), fields: pauseField, want: &until},
		{name: "update moves the pause", seed: pausedCfg(until), action: plan.ActUpdate, after: pausedCfg(later), fields: pauseField, want: &later},
		{name: "adopt pauses", seed: plain, action: plan.ActAdopt, after: pausedCfg(until), want: &until},
		{name: "update resumes", seed: pausedCfg(until), action: plan.ActUpdate, after: plain, fields: pauseField},
		{name: "a pause by hand survives an unrelated update", seed: plain, paused: &until, action: plan.ActUpdate,
			after: `{"ack_policy":"explicit","max_deliver":5}`, fields: []*plan.FieldChange{{Path: "max_deliver"}}, want: &until},
		{name: "replace paused", seed: plain, action: plan.ActReplace, after: `{"ack_policy":"explicit","deliver_policy":"new","pause_until":"` + until.Format(time.RFC3339) + `"}`, want: &until},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("c%d", i)
			if tc.seed != "" {
				seedConsumer(t, c, "P", name, tc.seed)
			}
			if tc.paused != nil {
				if err := c.PauseConsumer(context.Background(), "P", name, *tc.paused); err != nil {
					t.Fatal(err)
				}
			}
			ch := consumer(tc.action, "P", name, 1, tc.after)
			ch.Fields = tc.fields
			res := mustRun(t, c, &plan.Plan{Changes: []*plan.Change{ch}}, Options{AllowDelete: true})
			if !res.OK() {
				t.Fatalf("%s: %v", res.Steps[0].Status, res.Steps[0].Err)
			}
			ci := consumerInfo(t, c, "P", name)
			got := ci.Config.PauseUntil
			switch {
			case tc.want == nil && (ci.Paused || got != nil):
				t.Errorf("paused until %v, want not paused", got)
			case tc.want != nil && (!ci.Paused || got == nil || !got.Equal(*tc.want)):
				t.Errorf("paused=%v until %v, want paused until %v", ci.Paused, got, *tc.want)
			}
		})
	}
}
