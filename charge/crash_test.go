package charge_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

var crashFull = flag.Bool("crash.full", os.Getenv("RECONCILE_CRASH_FULL") != "", "run the crash test at full size (1,000 intents, more kills)")

const crashWorkerEnv = "RECONCILE_CRASH_WORKER"

// TestCrash drains charge jobs through a worker process that is killed with
// SIGKILL at random instants, again and again, against the fake provider on
// PostgreSQL. With a provider that honours idempotency keys every intent is
// charged exactly once; with one that does not, none is charged more than
// once and every attempt whose outcome was lost ends unknown instead of
// being pushed again. No intent is lost either way.
func TestCrash(t *testing.T) {
	t.Parallel()
	n, kills := 200, 12
	if *crashFull {
		n, kills = 1000, 40
	}
	for _, honour := range []bool{true, false} {
		t.Run(fmt.Sprintf("honour_keys=%v", honour), func(t *testing.T) {
			t.Parallel()
			crash(t, honour, n, kills)
		})
	}
}

func crash(t *testing.T, honour bool, n, kills int) {
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	srv := fake.NewServer(fake.Options{HonourKeys: honour, Latency: 3 * time.Millisecond})
	defer srv.Close()

	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	q, err := queue.New(store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"fake": &fake.Charger{}}}, charge.Config{MaxAttempts: 25})
	svc.UseQueue(q)
	amount, _ := money.Parse("500", "KES")
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("charge:order-%05d", i)
		if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: keys[i], Provider: "fake", Amount: amount}}); err != nil {
			t.Fatal(err)
		}
	}

	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWorkerProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashWorkerEnv+"=1", "CRASH_URL="+url, "CRASH_FAKE="+srv.URL(),
			"CRASH_HONOUR="+strconv.FormatBool(honour))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// tally counts the intents that are final and those a killed worker
	// left in processing (a crash inside a charge).
	tally := func() (done, inFlight int) {
		for _, k := range keys {
			in, err := store.GetIntent(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case in.State.Final() || in.State == ledger.StateUnknown:
				done++
			case in.State == ledger.StateProcessing:
				inFlight++
			}
		}
		return done, inFlight
	}
	finals := func() int { d, _ := tally(); return d }
	interrupted := 0
	for i := range kills {
		cmd := start()
		time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		done, inFlight := tally()
		interrupted += inFlight
		if i%4 == 3 {
			t.Logf("after %d kills: %d/%d intents final, %d caught in flight by the last kill", i+1, done, n, inFlight)
		}
	}
	// One last worker drains what is left, including the jobs the killed
	// workers held, once River rescues them.
	cmd := start()
	deadline := time.Now().Add(3 * time.Minute)
	for finals() < n && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()

	counts := srv.ChargeCounts()
	states := map[ledger.State]int{}
	var twice, lost, unknownWithCharge, repushed int
	for _, k := range keys {
		in, err := store.GetIntent(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		states[in.State]++
		c := counts[k]
		switch {
		case c > 1:
			twice++
			t.Errorf("%s charged %d times", k, c)
		case !in.State.Final() && in.State != ledger.StateUnknown:
			lost++
			t.Errorf("%s left %s", k, in.State)
		case in.State == ledger.StateSucceeded && c != 1:
			t.Errorf("%s succeeded with %d charges", k, c)
		case in.State == ledger.StateUnknown && c == 1:
			unknownWithCharge++
		}
		if !honour && srv.Requests(k) > 1 {
			repushed++
			t.Errorf("%s was pushed %d times to a provider without idempotency keys", k, srv.Requests(k))
		}
		if honour && in.State != ledger.StateSucceeded {
			t.Errorf("%s ended %s although the provider honours keys", k, in.State)
		}
	}
	t.Logf("honour_keys=%v: %d intents, %d kills (%d intents caught mid-charge, summed over kills): %d succeeded, %d unknown (%d of them charged, to be settled by evidence), %d failed; "+
		"charged twice: %d, lost: %d, pushed again without keys: %d",
		honour, n, kills, interrupted, states[ledger.StateSucceeded], states[ledger.StateUnknown], unknownWithCharge, states[ledger.StateFailed],
		twice, lost, repushed)
}

// TestCrashWorkerProcess is the worker process of TestCrash.
func TestCrashWorkerProcess(t *testing.T) {
	if os.Getenv(crashWorkerEnv) != "1" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	store, err := database.Open(ctx, os.Getenv("CRASH_URL"), database.Options{MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	honour, _ := strconv.ParseBool(os.Getenv("CRASH_HONOUR"))
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{
		"fake": &fake.Charger{Name: "fake", BaseURL: os.Getenv("CRASH_FAKE"), HonoursKeys: honour, Timeout: time.Second}}},
		charge.Config{Lease: 3 * time.Second, MaxAttempts: 25, Owner: fmt.Sprintf("pid-%d", os.Getpid())})
	workers := river.NewWorkers()
	charge.AddWorkers(workers, svc)
	q, err := queue.New(store, queue.Config{Workers: workers, Queues: map[string]int{queue.QueueCharges: 8},
		FetchPollInterval: 50 * time.Millisecond, JobTimeout: 2 * time.Second, RescueStuckJobsAfter: 3 * time.Second,
		RetryPolicy: queue.Backoff{Base: 100 * time.Millisecond, Max: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = q.Stop(stopCtx)
}
