package main

import (
	"context"
	"errors"
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

With environment blocks (docs/environments.md), status reads every environment, or
those --env selects, each on its own connection, and writes one section per environment
(one JSON document, one Prometheus exposition labelled environment="NAME").

Exit codes: 0 healthy; 2 a condition holds or a declared consumer is missing (in any
environment); 1 error (or any environment that could not be read).`,
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
	envFlag(c, f)
	return c
}

func runStatus(ctx context.Context, f *Factory, o *statusOptions) error {
	runs, err := f.environments(ctx, o.Paths)
	if err != nil {
		return err
	}
	if runs != nil {
		return runStatusEnvs(ctx, f, o, runs)
	}
	// The first sample reads while the files load, as plan does: every consumer list,
	// which Evaluate narrows to the declared streams. Later samples (--watch) know
	// the files and read only the declared streams' consumers.
	desired, live, err := f.loadAndRead(ctx, o.Paths)
	if err != nil {
		return err
	}
	run, err := statusOf(ctx, f, desired, live, o.Thresholds)
	if err != nil {
		return err
	}
	if err := f.writeStatus(run.report, o, false); err != nil {
		return err
	}
	if o.Watch > 0 {
		err := f.watch(ctx, o.Watch, func() error {
			if err := run.next(ctx, o.Thresholds); err != nil {
				return err
			}
			return f.writeStatus(run.report, o, true)
		})
		if err != nil {
			return err
		}
	}
	if !run.report.Healthy() {
		return silentExit(exitChanges)
	}
	return nil
}

// statusRun is one environment's status: the desired model, the last sample and the
// report judged on it. Its Factory is the environment's: its connection, its stderr.
type statusRun struct {
	f       *Factory
	desired *model.Model
	prev    *status.Sample
	report  *status.Report
	// target is who answered the last read, known even when the guard refused it.
	target *model.Target
}

// statusOf judges one environment's first sample: live when it was read already
// (while the files loaded), else a sample read now through f. The expect guard is
// checked before anything is judged. On an error the run is returned when a server
// answered, for its target, and holds no report.
func statusOf(ctx context.Context, f *Factory, desired, live *model.Model, th status.Thresholds) (*statusRun, error) {
	run := &statusRun{f: f, desired: desired}
	var cur *status.Sample
	if live != nil {
		cur = &status.Sample{Time: time.Now().UTC(), Live: live}
	} else {
		var err error
		if cur, err = run.sample(ctx); err != nil {
			return nil, err
		}
	}
	run.target = cur.Live.Target
	if err := plan.CheckTarget(desired.Expect, cur.Live.Target); err != nil {
		return run, err
	}
	run.report = status.Evaluate(desired, cur, nil, th)
	run.prev = cur
	return run, nil
}

// sample reads the declared streams' consumers once.
func (r *statusRun) sample(ctx context.Context) (*status.Sample, error) {
	sess, err := r.f.Session(ctx)
	if err != nil {
		return nil, err
	}
	return status.Read(ctx, sess.JS, r.desired, observe.Options{})
}

// next samples again and judges the sample against the previous one (rates). On an
// error the previous report stays.
func (r *statusRun) next(ctx context.Context, th status.Thresholds) error {
	cur, err := r.sample(ctx)
	if err != nil {
		return err
	}
	r.target = cur.Live.Target
	r.report = status.Evaluate(r.desired, cur, r.prev, th)
	r.prev = cur
	return nil
}

// runStatusEnvs reports several environments: each read and judged in parallel on its
// own connection, then all rendered as one document in declaration order. Under --watch
// every environment is sampled and drawn again at each interval, on the connection it
// opened first; an environment whose read failed is read again at the next interval
// (one never reached from the start: connection and guard), one whose configuration is
// invalid is not. The exit code is 1 when an environment has no report (at the last sample), else
// 2 when one is not healthy, else 0.
func runStatusEnvs(ctx context.Context, f *Factory, o *statusOptions, runs []*envRun) error {
	defer func() {
		for _, r := range runs {
			r.errw.flush()
			r.F.Close()
		}
	}()
	invalid := make([]bool, len(runs)) // failed before any read: the files, not the server
	for i, r := range runs {
		invalid[i] = r.Err != nil
	}
	states := make([]*statusRun, len(runs))
	reports := make([]*status.EnvReport, len(runs))
	round := func() error {
		inParallel(len(runs), func(i int) {
			r := runs[i]
			if invalid[i] {
				reports[i] = &status.EnvReport{Name: r.Name(), Err: errors.New(r.errText())}
				return
			}
			rep := &status.EnvReport{Name: r.Name()}
			var err error
			if states[i] == nil {
				var st *statusRun
				st, err = statusOf(ctx, r.F, r.Desired, nil, o.Thresholds)
				if err == nil {
					states[i] = st
				} else if st != nil {
					rep.Target = st.target // the guard refused it
				}
			} else if err = states[i].next(ctx, o.Thresholds); err != nil {
				rep.Target = states[i].target
			}
			if err != nil && ctx.Err() != nil {
				return // interrupted: this environment keeps its last whole sample
			}
			r.Err = err
			if err != nil {
				rep.Err = errors.New(r.errText())
			} else {
				rep.Target, rep.Report = states[i].target, states[i].report
			}
			reports[i] = rep
			r.errw.flush()
		})
		// An interrupted read is no result: nothing is drawn for it.
		return ctx.Err()
	}
	if err := round(); err != nil {
		return err
	}
	if err := f.writeStatusEnvs(reports, o, false); err != nil {
		return err
	}
	if o.Watch > 0 {
		err := f.watch(ctx, o.Watch, func() error {
			if err := round(); err != nil {
				return err
			}
			return f.writeStatusEnvs(reports, o, true)
		})
		if err != nil {
			return err
		}
	}
	unhealthy := map[*envRun]bool{}
	for i, r := range runs {
		unhealthy[r] = reports[i].Report != nil && !reports[i].Report.Healthy()
	}
	return envExit(runs, func(r *envRun) bool { return unhealthy[r] })
}

// watch calls tick every interval until the context ends or the first Ctrl-C; an
// error of tick ends it.
func (f *Factory) watch(ctx context.Context, every time.Duration, tick func() error) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.Stop:
			return nil
		case <-t.C:
		}
		// When the interval and the end came together, the end wins: no sample is
		// read with an ended context.
		select {
		case <-ctx.Done():
			return nil
		case <-f.Stop:
			return nil
		default:
		}
		if err := tick(); err != nil {
			if ctx.Err() != nil {
				// The end came during the sample: it is dropped, and the command
				// ends by the last whole one, as when the end comes between two.
				return nil
			}
			return err
		}
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
	f.redraw(again)
	return status.Text(f.IO.Out, r, f.Color())
}

// writeStatusEnvs renders the reports of several environments as one document; under
// --watch, every environment is drawn again each time.
func (f *Factory) writeStatusEnvs(envs []*status.EnvReport, o *statusOptions, again bool) error {
	switch o.Format {
	case formatJSON:
		return status.JSONEnvironments(f.IO.Out, envs, o.Watch > 0)
	case formatPrometheus:
		return status.PrometheusEnvironments(f.IO.Out, envs)
	}
	f.redraw(again)
	return status.TextEnvironments(f.IO.Out, envs, f.Color())
}

// redraw separates a text report from the one before it: on a terminal it clears the
// screen to draw in place, elsewhere it writes a blank line.
func (f *Factory) redraw(again bool) {
	if !again {
		return
	}
	if f.IO.StdoutTTY {
		fmt.Fprint(f.IO.Out, "\x1b[H\x1b[2J") // home and clear: redraw in place
	} else {
		fmt.Fprintln(f.IO.Out)
	}
}
