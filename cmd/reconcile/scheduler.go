package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/schedule"
)

// ScheduleConfig says when and over which windows a provider is reconciled.
type ScheduleConfig struct {
	// Cron is when to run: five fields, six with leading seconds, or a
	// descriptor, optionally prefixed with CRON_TZ=Zone; e.g.
	// "CRON_TZ=Africa/Nairobi 30 2 * * *" (02:30 in Nairobi every day).
	Cron string `mapstructure:"cron"`
	// Window is the length of a window, aligned to midnight in the
	// provider's zone; it must divide a day. Default 24h (the local day).
	Window time.Duration `mapstructure:"window"`
	// Lookback is how many earlier windows each run reconciles again, to
	// pick up late evidence. Default 2.
	Lookback *int `mapstructure:"lookback"`
	// CatchUp caps how many windows missed during downtime are run on
	// start. Default 7.
	CatchUp *int `mapstructure:"catch_up"`
}

func (sc ScheduleConfig) spec(provider string, zone *time.Location) (schedule.Spec, error) {
	cron, err := schedule.ParseCron(sc.Cron)
	if err != nil {
		return schedule.Spec{}, fmt.Errorf("cron: %w", err)
	}
	spec := schedule.Spec{Provider: provider, Expr: sc.Cron, Cron: cron, Size: sc.Window, Zone: zone, Lookback: 2, CatchUp: 7}
	if sc.Lookback != nil {
		spec.Lookback = *sc.Lookback
	}
	if sc.CatchUp != nil {
		spec.CatchUp = *sc.CatchUp
	}
	return spec, spec.Validate()
}

// specs parses every schedule, naming the key at fault.
func (a *app) specs() ([]schedule.Spec, error) {
	var out []schedule.Spec
	setups := a.providerSetups()
	for _, name := range sortedNames(a.cfg.Schedules) {
		sc := a.cfg.Schedules[name]
		key := "schedules." + name
		setup, ok := setups[name]
		if !ok {
			return nil, fmt.Errorf("config %s: no provider %q is configured (known: %v)", key, name, sortedNames(setups))
		}
		spec, err := sc.spec(name, setup.Zone)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", key, err)
		}
		out = append(out, spec)
	}
	return out, nil
}

// TickArgs asks which windows of a provider are due.
type TickArgs struct {
	Provider string `json:"provider"`
}

// Kind implements river.JobArgs.
func (TickArgs) Kind() string { return "reconcile_tick" }

// RunWindowArgs reconciles one window. A first pass runs a window once ever;
// a lookback pass (Lookback set to the newest window's start) runs it again
// once per newer window, to pick up late evidence.
type RunWindowArgs struct {
	Provider string    `json:"provider"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Lookback time.Time `json:"lookback,omitzero"`
}

// Kind implements river.JobArgs.
func (RunWindowArgs) Kind() string { return "reconcile_run" }

// periodicJobs makes one leader-elected periodic tick per schedule; a new
// leader ticks at once, which catches up windows missed during downtime.
func periodicJobs(specs []schedule.Spec) []*river.PeriodicJob {
	var jobs []*river.PeriodicJob
	for _, spec := range specs {
		jobs = append(jobs, river.NewPeriodicJob(spec.Cron, func() (river.JobArgs, *river.InsertOpts) {
			return TickArgs{Provider: spec.Provider}, &river.InsertOpts{Queue: queue.QueueRuns, MaxAttempts: 5}
		}, &river.PeriodicJobOpts{ID: "reconcile_tick_" + spec.Provider, RunOnStart: true}))
	}
	return jobs
}

// tickWorker enqueues the windows due: the newest closed window and any
// missed since the last finished run (first passes), and the lookback.
type tickWorker struct {
	river.WorkerDefaults[TickArgs]
	store  ledger.Store
	queue  *queue.Queue
	specs  map[string]schedule.Spec
	clock  func() time.Time
	logger *slog.Logger
}

func (w *tickWorker) Work(ctx context.Context, job *river.Job[TickArgs]) error {
	spec, ok := w.specs[job.Args.Provider]
	if !ok {
		return river.JobCancel(fmt.Errorf("no schedule for provider %q", job.Args.Provider))
	}
	now := w.clock()
	closed := spec.Closed(now)
	newest := closed[0]
	lastTo, err := lastFinished(ctx, w.store, spec.Provider)
	if err != nil {
		return err
	}
	first := spec.Missed(lastTo, now)
	if len(first) == 0 || first[len(first)-1] != newest {
		first = append(first, newest)
	}
	opts := &river.InsertOpts{Queue: queue.QueueRuns, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
	var enqueued int
	for _, win := range first {
		res, err := w.queue.Insert(ctx, RunWindowArgs{Provider: spec.Provider, From: win.From, To: win.To}, opts)
		if err != nil {
			return err
		}
		if !res.UniqueSkippedAsDuplicate {
			enqueued++
		}
	}
	for _, win := range closed[1:] {
		res, err := w.queue.Insert(ctx, RunWindowArgs{Provider: spec.Provider, From: win.From, To: win.To, Lookback: newest.From}, opts)
		if err != nil {
			return err
		}
		if !res.UniqueSkippedAsDuplicate {
			enqueued++
		}
	}
	attrs := []any{"provider", spec.Provider, "newest_window", newest.String(), "enqueued", enqueued,
		"next_run", spec.Local(spec.Next(now))}
	if enqueued == 0 {
		w.logger.Info("reconcile tick enqueued nothing", append(attrs, "reason", idleReason(spec, newest, lastTo, len(first), len(closed)-1))...)
		return nil
	}
	w.logger.Info("reconcile tick", attrs...)
	return nil
}

// idleReason says why a tick enqueued no run: every window it found due
// already had a job in River's uniqueness window.
func idleReason(spec schedule.Spec, newest schedule.Window, lastTo time.Time, firsts, lookbacks int) string {
	const held = "already has a job (queued, running, or finished within River's 24-hour uniqueness window)"
	if !lastTo.Before(newest.To) {
		return fmt.Sprintf("the newest closed window (to %s) was reconciled already (the last finished run ends %s) and each of its %d lookback window(s) %s",
			spec.Local(newest.To), spec.Local(lastTo), lookbacks, held)
	}
	return fmt.Sprintf("each due window (%d first pass(es), %d lookback(s)) %s", firsts, lookbacks, held)
}

// logSchedules says at start when each provider is reconciled next, or why
// nothing is scheduled in this process.
func logSchedules(logger *slog.Logger, specs []schedule.Spec, scheduler bool, now time.Time) {
	switch {
	case !scheduler:
		logger.Info("scheduler off in this process (roles.scheduler: false): another replica schedules runs")
		return
	case len(specs) == 0:
		logger.Info("no schedules: nothing is reconciled periodically; set schedules.<provider>.cron to schedule runs")
		return
	}
	for _, spec := range specs {
		size := spec.Size
		if size == 0 {
			size = 24 * time.Hour
		}
		logger.Info("schedule", "provider", spec.Provider, "cron", spec.Expr, "next_run", spec.Local(spec.Next(now)),
			"window", size.String(), "lookback", spec.Lookback, "catch_up", spec.CatchUp,
			"note", "the elected leader ticks at start and then on the cron; each tick logs the next run")
	}
}

// lastFinished returns the end of the latest finished window of provider.
func lastFinished(ctx context.Context, store ledger.Store, provider string) (time.Time, error) {
	runs, err := store.ListRuns(ctx, provider, 50)
	if err != nil {
		return time.Time{}, err
	}
	var last time.Time
	for _, r := range runs {
		if r.State == ledger.RunFinished && r.To.After(last) {
			last = r.To
		}
	}
	return last, nil
}

// runWorker reconciles one window; the run claim keeps two replicas off the
// same window, and a first pass of a window already finished does nothing.
type runWorker struct {
	river.WorkerDefaults[RunWindowArgs]
	store    ledger.Store
	rec      *reconciler.Reconciler
	lease    time.Duration
	logger   *slog.Logger
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	books    *booksGauges
}

func (w *runWorker) Timeout(*river.Job[RunWindowArgs]) time.Duration { return w.lease }

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunWindowArgs]) error {
	args := job.Args
	if args.Lookback.IsZero() {
		finished, err := windowFinished(ctx, w.store, args)
		if err != nil {
			return err
		}
		if finished {
			w.runs.WithLabelValues(args.Provider, "skipped").Inc()
			w.logger.Info("skipped duplicate delivery", "what", "reconcile run", "provider", args.Provider,
				"from", args.From, "to", args.To)
			return nil
		}
	}
	start := time.Now()
	_, err := w.rec.Run(ctx, reconciler.Params{Provider: args.Provider, From: args.From, To: args.To})
	if w.books != nil && !errors.Is(err, reconciler.ErrBusy) {
		w.books.refreshLogged(ctx)
	}
	switch {
	case errors.Is(err, reconciler.ErrBusy):
		w.runs.WithLabelValues(args.Provider, "busy").Inc()
		return river.JobSnooze(time.Minute) // another replica is running this window now
	case err != nil:
		w.runs.WithLabelValues(args.Provider, "failed").Inc()
		return err
	}
	w.runs.WithLabelValues(args.Provider, "finished").Inc()
	w.duration.WithLabelValues(args.Provider).Observe(time.Since(start).Seconds())
	return nil
}

func windowFinished(ctx context.Context, store ledger.Store, args RunWindowArgs) (bool, error) {
	r, err := store.GetRunByKey(ctx, ledger.RunKey(args.Provider, args.From, args.To))
	if errors.Is(err, ledger.ErrNotFound) {
		return false, nil
	}
	return err == nil && r.State == ledger.RunFinished, err
}
