package main

import (
	"context"
	"fmt"
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
	start := time.Now()
	if err := q.Start(ctx); err != nil {
		return err
	}
	for done.Load() < int64(n) {
		if time.Since(start) > 2*time.Minute {
			return fmt.Errorf("only %d of %d no-op jobs worked", done.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	stopCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	_ = q.Stop(stopCtx)
	fmt.Printf("%.1f\n", float64(n)/elapsed.Seconds())
	return nil
}
