// Command chargebench measures charges per second through River: it creates
// intents (each enqueuing its charge job in the same transaction) and works
// them with an instant provider, timing until all are final. By default the
// intents are created first and only the working is timed; with -e2e they
// are created while the workers run (by as many creators as workers), and
// the time covers both, as a charge's three transactions do in pgbench.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"golang.org/x/sync/errgroup"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

func main() {
	url := flag.String("url", "", "database URL")
	n := flag.Int("n", 5000, "intents to charge")
	workers := flag.Int("workers", 32, "charge workers")
	noop := flag.Bool("noop", false, "work no-op River jobs instead of charges: River's own ceiling")
	e2e := flag.Bool("e2e", false, "time the creation of the intents too, concurrently with the workers")
	conns := flag.Int("conns", 0, "pool size; default workers + 8, and twice the workers + 8 with -e2e (creators too)")
	cooldown := flag.Duration("cooldown", 0, "River's least time between two fetches; default the queue's")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the charging to this file")
	flag.Parse()
	profile = *cpuprofile
	noopMode = *noop
	e2eMode = *e2e
	poolSize, fetchCooldown = *conns, *cooldown
	if err := run(*url, *n, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "chargebench:", err)
		os.Exit(1)
	}
}

var (
	profile  string
	noopMode bool
	e2eMode  bool

	poolSize      int
	fetchCooldown time.Duration
)

func run(url string, n, workers int) error {
	ctx := context.Background()
	if poolSize == 0 {
		poolSize = workers + 8
		if e2eMode {
			poolSize += workers
		}
	}
	store, err := database.Open(ctx, url, database.Options{MaxConns: int32(poolSize)})
	if err != nil {
		return err
	}
	defer store.Close()
	if noopMode {
		return runNoop(ctx, store, n, workers)
	}
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"instant": fake.Instant{}}}, charge.Config{})
	w := river.NewWorkers()
	charge.AddWorkers(w, svc)
	q, err := queue.New(store, queue.Config{Workers: w, Queues: map[string]int{queue.QueueCharges: workers},
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: fetchCooldown})
	if err != nil {
		return err
	}
	svc.UseQueue(q)
	amount, _ := money.Parse("100", "KES")
	prefix := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	var created atomic.Int64
	create := func(from, step int) error {
		for i := from; i < n; i += step {
			if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{
				Key: fmt.Sprintf("%s-%d", prefix, i), Provider: "instant", Amount: amount}}); err != nil {
				return err
			}
			created.Add(1)
		}
		return nil
	}
	var creating errgroup.Group
	if e2eMode {
		// Created by as many creators as there are workers, once the
		// queue has started (drain starts it and then calls this).
		startCreating = func() {
			for c := range workers {
				creating.Go(func() error { return create(c, workers) })
			}
		}
	} else if err := create(0, 1); err != nil {
		return err
	}
	pg, ok := store.(*pgstore.Store)
	if !ok {
		return fmt.Errorf("chargebench measures PostgreSQL")
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	// Done is what the books say: every intent created is no longer open
	// (pending, processing or unknown), then all of this run's succeeded. The first count reads the small partial
	// index of open intents, so asking often costs the database little.
	err = drain(ctx, q, n, "charges", 20*time.Millisecond, func() (int, error) {
		c := int(created.Load())
		var open int
		if err := pg.Pool().QueryRow(ctx, `SELECT count(*) FROM intents WHERE provider = 'instant'
			AND state IN ('pending', 'processing', 'unknown') AND key LIKE $1`, prefix+"-%").Scan(&open); err != nil {
			return 0, err
		}
		if c < n || open > 0 {
			return c - open, nil
		}
		var done int
		err := pg.Pool().QueryRow(ctx, `SELECT count(*) FROM intents WHERE key LIKE $1 AND state = 'succeeded'`,
			prefix+"-%").Scan(&done)
		if err == nil && done != n {
			err = fmt.Errorf("%d of %d charges succeeded, the others failed", done, n)
		}
		return done, err
	})
	if cerr := creating.Wait(); err == nil {
		err = cerr
	}
	return err
}

// startCreating, when set, starts creating the intents once the queue runs.
var startCreating func()

// drain starts q, waits until finished reports n jobs done (asking every
// interval), stops q and prints the jobs done per second.
func drain(ctx context.Context, q *queue.Queue, n int, what string, every time.Duration, finished func() (int, error)) error {
	start := time.Now()
	if err := q.Start(ctx); err != nil {
		return err
	}
	if startCreating != nil {
		startCreating()
	}
	defer func() {
		stopCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		_ = q.Stop(stopCtx)
	}()
	for {
		done, err := finished()
		if err != nil {
			return err
		}
		if done == n {
			break
		}
		if time.Since(start) > 2*time.Minute {
			return fmt.Errorf("only %d of %d %s finished", done, n, what)
		}
		time.Sleep(every)
	}
	fmt.Printf("%.1f\n", float64(n)/time.Since(start).Seconds())
	return nil
}
