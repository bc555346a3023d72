package alerts

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// Worker delivers alert jobs on River: a rate limit or an earlier alert still
// on its way snoozes the job (not an attempt), a refused payload cancels it,
// anything else is retried with backoff.
type Worker struct {
	river.WorkerDefaults[JobArgs]
	Deliverer *Deliverer
}

// Work delivers one alert.
func (w *Worker) Work(ctx context.Context, job *river.Job[JobArgs]) error {
	err := w.Deliverer.Deliver(ctx, job.Args.AlertID, job.Attempt)
	if wait, ok := RetryAfter(err); ok {
		return river.JobSnooze(wait)
	}
	if IsPermanent(err) {
		return river.JobCancel(err)
	}
	return err
}

// EnqueueFunc returns the function Planner.Hook needs: one delivery job per
// new alert, in the run's transaction.
func EnqueueFunc(q *queue.Queue, cfg Config) func(ctx context.Context, tx ledger.Tx, alerts []ledger.Alert) error {
	cfg = cfg.WithDefaults()
	return func(ctx context.Context, tx ledger.Tx, alerts []ledger.Alert) error {
		for _, a := range alerts {
			if _, err := q.InsertTx(ctx, tx, JobArgs{AlertID: a.ID},
				&river.InsertOpts{Queue: queue.QueueAlerts, MaxAttempts: cfg.MaxAttempts}); err != nil {
				return err
			}
		}
		return nil
	}
}
