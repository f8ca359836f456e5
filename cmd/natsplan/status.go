package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/status"
)

type statusOptions struct {
	Paths      []string
	Format     Format
	Watch      time.Duration
	Thresholds status.Thresholds
}

func newCmdStatus(f *Factory) *cobra.Command {
	o := &statusOptions{Thresholds: status.DefaultThresholds()}
	formats := []Format{formatText, formatJSON, formatPrometheus}
	c := &cobra.Command{
		Use:   "status [PATH...]",
		Short: "Read the live counters of what the files declare and name the condition that holds",
		Long: `status reads the counters of every consumer, lane and dead-letter stream the files
declare, and of the consumers nobody declared on declared streams: pending, in flight
against max_ack_pending, redelivered, parked pull requests, the last delivery and ack.
It names the concurrency condition that holds (NP501..NP507, docs/rules) at the line
that declares it, with the counters that prove it and what to change. It changes nothing.

--watch INTERVAL samples again every INTERVAL and adds rates and a drain estimate per
group; on a terminal it redraws in place. Ctrl-C ends it.

Exit codes: 0 healthy; 2 a condition holds or a declared consumer is missing; 1 error.`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Paths = pathsOrDefault(args)
			if err := checkFormat(o.Format, formats...); err != nil {
				return err
			}
			if o.Watch < 0 || (o.Watch > 0 && o.Watch < 100*time.Millisecond) {
				return usageErr("--watch %s is too short: use an interval of at least 100ms, such as 5s", o.Watch)
			}
			if o.Watch > 0 && o.Format == formatPrometheus {
				return usageErr("--watch does not combine with --format prometheus: Prometheus computes rates itself; run status from cron or a textfile loop instead")
			}
			if o.Thresholds.LaneSkew < 1 {
				return usageErr("--lane-skew %g: use a factor of at least 1", o.Thresholds.LaneSkew)
			}
			if o.Thresholds.Idle < 0 {
				return usageErr("--idle %s: use a duration of zero or more", o.Thresholds.Idle)
			}
			return runStatus(c.Context(), f, o)
		},
	}
	formatFlag(c, &o.Format, formats...)
	fl := c.Flags()
	fl.DurationVar(&o.Watch, "watch", 0, "sample again every `INTERVAL` (such as 5s) and show rates; Ctrl-C ends")
	fl.Float64Var(&o.Thresholds.LaneSkew, "lane-skew", o.Thresholds.LaneSkew, "NP503: a lane is far behind at this many times the median lane's backlog")
	fl.Uint64Var(&o.Thresholds.LaneBacklog, "lane-backlog", o.Thresholds.LaneBacklog, "NP503: no lane is far behind below this backlog (pending plus in flight)")
	fl.DurationVar(&o.Thresholds.Idle, "idle", o.Thresholds.Idle, "NP504: how long messages may wait with no delivery; NP506: how recent a delivery makes a consumer live")
	return c
}

func runStatus(ctx context.Context, f *Factory, o *statusOptions) error {
	// The first sample reads while the files load, as plan does: every consumer list,
	// which Evaluate narrows to the declared streams. Later samples (--watch) know
	// the files and read only the declared streams' consumers.
	desired, live, err := f.loadAndRead(ctx, o.Paths)
	if err != nil {
		return err
	}
	if err := plan.CheckTarget(desired.Expect, live.Target); err != nil {
		return err
	}
	cur := &status.Sample{Time: time.Now().UTC(), Live: live}
	sample := func() (*status.Sample, error) {
		sess, err := f.Session(ctx)
		if err != nil {
			return nil, err
		}
		return status.Read(ctx, sess.JS, desired, observe.Options{})
	}
	r := status.Evaluate(desired, cur, nil, o.Thresholds)
	if err := f.writeStatus(r, o, false); err != nil {
		return err
	}
	if o.Watch > 0 {
		if r, err = f.watchStatus(ctx, desired, cur, r, o, sample); err != nil {
			return err
		}
	}
	if !r.Healthy() {
		return silentExit(exitChanges)
	}
	return nil
}

// watchStatus samples every o.Watch until the context ends or the first Ctrl-C, and
// returns the last report, by which the command exits.
func (f *Factory) watchStatus(ctx context.Context, desired *model.Model, prev *status.Sample, last *status.Report, o *statusOptions, sample func() (*status.Sample, error)) (*status.Report, error) {
	t := time.NewTicker(o.Watch)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return last, nil
		case <-f.Stop:
			return last, nil
		case <-t.C:
		}
		cur, err := sample()
		if err != nil {
			return nil, err
		}
		last = status.Evaluate(desired, cur, prev, o.Thresholds)
		if err := f.writeStatus(last, o, true); err != nil {
			return nil, err
		}
		prev = cur
	}
}

// writeStatus renders one report. Under --watch on a terminal each text report
// replaces the previous one; elsewhere reports follow each other (JSON one per line).
func (f *Factory) writeStatus(r *status.Report, o *statusOptions, again bool) error {
	switch o.Format {
	case formatJSON:
		return status.JSON(f.IO.Out, r, o.Watch > 0)
	case formatPrometheus:
		return status.Prometheus(f.IO.Out, r)
	}
	if again {
		if f.IO.StdoutTTY {
			fmt.Fprint(f.IO.Out, "\x1b[H\x1b[2J") // home and clear: redraw in place
		} else {
			fmt.Fprintln(f.IO.Out)
		}
	}
	return status.Text(f.IO.Out, r, f.Color())
}
