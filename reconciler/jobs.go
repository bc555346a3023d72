package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/schedule"
)

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
	Provider string `json:"provider"`
	// Account is the provider account; the default one is left out, so
	// that its jobs are those enqueued before providers had accounts.
	Account  string    `json:"account,omitempty"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Lookback time.Time `json:"lookback,omitzero"`
}

// Kind implements river.JobArgs.
func (RunWindowArgs) Kind() string { return "reconcile_run" }

// PeriodicJobs makes one leader-elected periodic tick per schedule; a new
// leader ticks at once, which catches up windows missed during downtime.
func PeriodicJobs(specs []schedule.Spec) []*river.PeriodicJob {
	var jobs []*river.PeriodicJob
	for _, spec := range specs {
		jobs = append(jobs, river.NewPeriodicJob(spec.Cron, func() (river.JobArgs, *river.InsertOpts) {
			return TickArgs{Provider: spec.Provider}, &river.InsertOpts{Queue: queue.QueueRuns, MaxAttempts: 5}
		}, &river.PeriodicJobOpts{ID: "reconcile_tick_" + spec.Provider, RunOnStart: true}))
	}
	return jobs
}

// Inserter enqueues a job on its own (queue.Queue does).
type Inserter interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// TickWorker enqueues the windows due: the newest closed window and any
// missed since the last finished run (first passes), and the lookback.
type TickWorker struct {
	river.WorkerDefaults[TickArgs]
	Store ledger.RunStore
	Queue Inserter
	Specs map[string]schedule.Spec
	// Accounts lists, by provider, its accounts beyond the default one:
	// each account's windows are jobs of their own, which any replica
	// takes.
	Accounts map[string][]string
	Clock    func() time.Time
	Logger   *slog.Logger
}

// Work enqueues the due windows of each account of the provider of job.
func (w *TickWorker) Work(ctx context.Context, job *river.Job[TickArgs]) error {
	spec, ok := w.Specs[job.Args.Provider]
	if !ok {
		return river.JobCancel(fmt.Errorf("no schedule for provider %q", job.Args.Provider))
	}
	for _, acct := range append([]string{""}, w.Accounts[spec.Provider]...) {
		if err := w.enqueue(ctx, spec, acct); err != nil {
			return err
		}
	}
	return nil
}

// enqueue enqueues the due windows of one account.
func (w *TickWorker) enqueue(ctx context.Context, spec schedule.Spec, account string) error {
	now := w.Clock()
	closed := spec.Closed(now)
	newest := closed[0]
	lastTo, err := LastFinished(ctx, w.Store, spec.Provider, account)
	if err != nil {
		return err
	}
	first := spec.Missed(lastTo, now)
	if len(first) == 0 || first[len(first)-1] != newest {
		first = append(first, newest)
	}
	opts := &river.InsertOpts{Queue: queue.QueueRuns, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
	var enqueued int
	insert := func(args RunWindowArgs) error {
		res, err := w.Queue.Insert(ctx, args, opts)
		if err == nil && !res.UniqueSkippedAsDuplicate {
			enqueued++
		}
		return err
	}
	for _, win := range first {
		if err := insert(RunWindowArgs{Provider: spec.Provider, Account: account, From: win.From, To: win.To}); err != nil {
			return err
		}
	}
	for _, win := range closed[1:] {
		err := insert(RunWindowArgs{Provider: spec.Provider, Account: account, From: win.From, To: win.To, Lookback: newest.From})
		if err != nil {
			return err
		}
	}
	attrs := []any{"provider", ledger.Scope(spec.Provider, account), "newest_window", newest.String(), "enqueued", enqueued,
		"next_run", spec.Local(spec.Next(now))}
	if enqueued == 0 {
		w.Logger.Info("reconcile tick enqueued nothing", append(attrs, "reason", idleReason(spec, newest, lastTo, len(first), len(closed)-1))...)
		return nil
	}
	w.Logger.Info("reconcile tick", attrs...)
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

// LastFinished returns the end of the latest finished window of one
// account of provider.
func LastFinished(ctx context.Context, store ledger.RunStore, provider, account string) (time.Time, error) {
	runs, err := store.ListRuns(ctx, provider, 50)
	if err != nil {
		return time.Time{}, err
	}
	var last time.Time
	for _, r := range runs {
		if r.Account == account && r.State == ledger.RunFinished && r.To.After(last) {
			last = r.To
		}
	}
	return last, nil
}

// WindowFinished reports whether the window of args has a finished run.
func WindowFinished(ctx context.Context, store ledger.RunStore, args RunWindowArgs) (bool, error) {
	r, err := store.GetRunByKey(ctx, ledger.AccountRunKey(args.Provider, args.Account, args.From, args.To))
	if errors.Is(err, ledger.ErrNotFound) {
		return false, nil
	}
	return err == nil && r.State == ledger.RunFinished, err
}

// Run outcomes told to RunWorker.Outcome.
const (
	OutcomeFinished = "finished"
	OutcomeFailed   = "failed"
	OutcomeBusy     = "busy"
	OutcomeSkipped  = "skipped"
)

// RunWorker reconciles one window; the run claim keeps two replicas off the
// same window, and a first pass of a window already finished does nothing.
type RunWorker struct {
	river.WorkerDefaults[RunWindowArgs]
	Store      ledger.RunStore
	Reconciler *Reconciler
	// Lease bounds one run (the job's timeout).
	Lease  time.Duration
	Logger *slog.Logger
	// Outcome, when set, is told each run's outcome (one of the Outcome
	// constants) and, when finished, how long it took.
	Outcome func(provider, outcome string, took time.Duration)
	// AfterRun, when set, is called after every run that was not busy.
	AfterRun func(ctx context.Context)
}

// Timeout is the lease.
func (w *RunWorker) Timeout(*river.Job[RunWindowArgs]) time.Duration { return w.Lease }

// Work reconciles the window of job.
func (w *RunWorker) Work(ctx context.Context, job *river.Job[RunWindowArgs]) error {
	args := job.Args
	if args.Lookback.IsZero() {
		finished, err := WindowFinished(ctx, w.Store, args)
		if err != nil {
			return err
		}
		if finished {
			w.outcome(args.Provider, OutcomeSkipped, 0)
			w.Logger.Info("skipped duplicate delivery", "what", "reconcile run", "provider", ledger.Scope(args.Provider, args.Account),
				"from", args.From, "to", args.To)
			return nil
		}
	}
	start := time.Now()
	_, err := w.Reconciler.Run(ctx, Params{Provider: args.Provider, Account: args.Account, From: args.From, To: args.To})
	if w.AfterRun != nil && !errors.Is(err, ErrBusy) {
		w.AfterRun(ctx)
	}
	switch {
	case errors.Is(err, ErrBusy):
		w.outcome(args.Provider, OutcomeBusy, 0)
		return river.JobSnooze(time.Minute) // another replica is running this window now
	case err != nil:
		w.outcome(args.Provider, OutcomeFailed, 0)
		return err
	}
	w.outcome(args.Provider, OutcomeFinished, time.Since(start))
	return nil
}

func (w *RunWorker) outcome(provider, outcome string, took time.Duration) {
	if w.Outcome != nil {
		w.Outcome(provider, outcome, took)
	}
}
