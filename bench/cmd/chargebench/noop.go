package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// noopArgs is a job that does nothing: working n of them measures River's
// own cost per job on this database, the ceiling any charge path on River
// stays under.
type noopArgs struct {
	N int `json:"n"`
}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	done *atomic.Int64
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.done.Add(1)
	return nil
}

// runNoop inserts n no-op jobs, then times working them with workers.
func runNoop(ctx context.Context, store ledger.Store, n, workers int) error {
	var done atomic.Int64
	w := river.NewWorkers()
	river.AddWorker(w, &noopWorker{done: &done})
	q, err := queue.New(store, queue.Config{Workers: w, Queues: map[string]int{queue.QueueCharges: workers},
		FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	for i := range n {
		if _, err := q.Insert(ctx, noopArgs{N: i}, &river.InsertOpts{Queue: queue.QueueCharges}); err != nil {
			return err
		}
	}
	return drain(ctx, q, n, "no-op jobs", 5*time.Millisecond, func() (int, error) { return int(done.Load()), nil })
}
