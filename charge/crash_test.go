package charge_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

var (
	crashFull = flag.Bool("crash.full", os.Getenv("RECONCILE_CRASH_FULL") != "",
		"run the crash test at full size (1,000 intents, more kills, immediate PostgreSQL restarts on a throwaway server)")
	crashSeed = flag.Uint64("crash.seed", 0, "seed of the crash test's random choices; 0 picks one (the test logs it)")
)

// The worker process's settings. Its lease and rescue are short so that the
// jobs a killed worker held come back within the test.
const (
	crashWorkerEnv   = "RECONCILE_CRASH_WORKER"
	crashConcurrency = 8
	crashLease       = 3 * time.Second
	crashRescue      = 3 * time.Second
	crashLatency     = 15 * time.Millisecond
)

// crashPlan sizes one crash run.
type crashPlan struct {
	intents int
	// rounds is how many workers are started and killed; a quarter at the
	// fault point after the provider's answer, a quarter at the one before
	// the call, the rest at a random instant.
	rounds int
	// restartEvery restarts PostgreSQL (immediate mode) in every n-th
	// round; 0 never does (the shared test server must not be restarted).
	restartEvery int
	// minCharged and minBefore are the fewest distinct intents that must be
	// caught in each window over the run. Fault points hold both windows
	// open (before the call and after it), beside the random kills.
	minCharged, minBefore int
}

// TestCrash drains charge jobs through worker processes that are killed with
// SIGKILL while charges are in flight, against the fake provider on
// PostgreSQL: a quarter of the kills land at a fault point right after the
// provider answered and before the worker recorded the answer (the charged
// but not recorded window), a quarter at one after the attempt is recorded
// and before the call (claimed, never charged), the others at a random
// instant once the worker holds claims. The full run also restarts PostgreSQL in immediate mode (a crash
// of the database) under load. Each kill must catch intents mid-charge; at
// the end every intent is checked against the provider's own records: none
// charged twice, none lost, none failed or succeeded against what the
// provider did; with a provider that honours idempotency keys every intent
// succeeds, with one that does not, an attempt whose outcome was lost ends
// unknown instead of being pushed again.
func TestCrash(t *testing.T) {
	t.Parallel()
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	p := crashPlan{intents: 200, rounds: 8, minCharged: 10, minBefore: 4}
	if *crashFull {
		p = crashPlan{intents: 1000, rounds: 40, restartEvery: 5, minCharged: 50, minBefore: 20}
	}
	for i, kind := range []string{"charge", "refund"} {
		for j, honour := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/honour_keys=%v", kind, honour), func(t *testing.T) {
				t.Parallel()
				crash(t, p, kind, honour, rand.New(rand.NewPCG(seed, uint64(2*i+j))))
			})
		}
	}
}

// crashRig is one crash run's database, provider and worker processes.
type crashRig struct {
	t      *testing.T
	url    string
	pg     *throwawayPG // nil on the shared server
	srv    *fake.Server
	store  ledger.Store
	db     *probe
	honour bool
	// kind is what the run's jobs do: "charge", or "refund" (of charges
	// made before the run).
	kind string
	// workerURL and workerFake, when set, are where the worker processes
	// reach the database and the provider instead (through a proxy).
	workerURL, workerFake string
	started               int
}

// worker is a started worker process.
type worker struct {
	cmd     *exec.Cmd
	owner   string
	appName string
	parked  chan string // keys the fault point holds, as it reports them
	exited  chan struct{}
}

// start runs a worker process. parkAfter >= 0 arms the fault point: after
// that many provider answers, every further answer is held before it is
// recorded and reported on the parked channel.
func (r *crashRig) start(parkAfter int, extraEnv ...string) *worker {
	r.t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		r.t.Fatal(err)
	}
	dbURL, fakeURL := r.url, r.srv.URL()
	if r.workerURL != "" {
		dbURL, fakeURL = r.workerURL, r.workerFake
	}
	// The worker's connections carry a name of their own, so that the test
	// can tell when the server is done with them after a kill.
	r.started++
	appName := fmt.Sprintf("crash-worker-%d", r.started)
	u, err := url.Parse(dbURL)
	if err != nil {
		r.t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", appName)
	u.RawQuery = q.Encode()
	dbURL = u.String()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashWorkerEnv+"=1", "CRASH_URL="+dbURL, "CRASH_FAKE="+fakeURL,
		"CRASH_HONOUR="+strconv.FormatBool(r.honour), "CRASH_PARK_AFTER="+strconv.Itoa(parkAfter))
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	pw.Close()
	w := &worker{cmd: cmd, owner: fmt.Sprintf("pid-%d/", cmd.Process.Pid), appName: appName, parked: make(chan string, 64), exited: make(chan struct{})}
	go func() {
		defer close(w.parked)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			w.parked <- sc.Text()
		}
		pr.Close()
	}()
	go func() { _ = cmd.Wait(); close(w.exited) }()
	r.t.Cleanup(w.kill)
	return w
}

func (w *worker) kill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

// stop asks the worker to finish its jobs and exit.
func (w *worker) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(30 * time.Second):
		w.kill()
	}
}

// killTally is what one kill caught: intents the dead worker held in
// processing, split by whether the provider had charged them.
type killTally struct {
	kind          string
	before        []string // claimed and attempt recorded; the provider had not charged
	charged       []string // the provider charged; the outcome was not recorded
	parked        []string // what the fault point reported holding
	parkedMissing []string // parked keys the ledger or provider do not show in the window
	parkedBefore  bool     // the fault point held tries before the call, not answers after it
}

func crash(t *testing.T, p crashPlan, kind string, honour bool, rnd *rand.Rand) {
	ctx := context.Background()
	r := &crashRig{t: t, honour: honour, kind: kind}
	if p.restartEvery > 0 {
		r.pg = startThrowawayPG(t)
		r.url = r.pg.url
		migrateURL(t, r.url)
	} else {
		r.url = dbtest.PostgresURL(t)
	}
	r.srv = fake.NewServer(fake.Options{HonourKeys: honour, Latency: crashLatency})
	defer r.srv.Close()
	store, err := database.Open(ctx, r.url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r.store = store
	r.db = newProbe(t, r.url)

	keys := r.createIntents(p.intents)
	if kind == "refund" {
		// The charges are made first, by a worker nobody kills; then
		// every one of them is refunded, in part, under the kills.
		keys = r.createRefunds(r.chargeAll(keys))
	}

	var (
		kills         []killTally
		caughtBefore  = map[string]bool{}
		caughtCharged = map[string]bool{}
		restarts      int
		lastKill      time.Time
	)
	for round := 0; round < p.rounds; round++ {
		// Kill only while there is work for every worker slot, so that the
		// worker is busy at whatever instant it dies. (Jobs a killed worker
		// had fetched wait for River's rescue and do not count.)
		if ready := r.db.count(`SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'available'`, kind); ready < 2*crashConcurrency {
			t.Logf("round %d: %d %s jobs left ready to run; no more kills", round, ready, kind)
			break
		}
		var k killTally
		var w *worker
		switch {
		case round%4 == 0:
			// The fault point: let a random number of charges through,
			// then hold every answer before it is recorded and kill the
			// worker once several are held.
			k.kind = "fault point"
			w = r.start(rnd.IntN(3 * crashConcurrency))
			want := 2 + rnd.IntN(crashConcurrency-1)
			k.parked = collectParked(t, w, want)
		case round%4 == 2:
			// The fault point before the call: tries recorded that never
			// reached the provider.
			k.kind, k.parkedBefore = "fault point before the call", true
			w = r.start(rnd.IntN(3*crashConcurrency), "CRASH_PARK_BEFORE=1")
			want := 2 + rnd.IntN(crashConcurrency-1)
			k.parked = collectParked(t, w, want)
		default:
			k.kind = "random instant"
			w = r.start(-1)
			r.waitInFlight(w)
			if p.restartEvery > 0 && round%p.restartEvery == p.restartEvery-1 {
				// The database dies under the worker: every connection is
				// cut and uncommitted work is lost. The worker must carry
				// on once it is back; then it is killed too.
				time.Sleep(time.Duration(rnd.IntN(40)) * time.Millisecond)
				k.kind = "random instant after a PostgreSQL restart"
				r.pg.restart(t)
				restarts++
				done := r.db.count(`SELECT count(*) FROM intents WHERE state <> 'pending' AND state <> 'processing'`)
				poll.Wait(t, time.Minute, "the worker to charge again after the restart", func() bool {
					return r.db.count(`SELECT count(*) FROM intents WHERE state <> 'pending' AND state <> 'processing'`) > done
				})
				r.waitInFlight(w)
			}
			time.Sleep(time.Duration(rnd.IntN(150)) * time.Millisecond)
			// Still busy at the instant of the kill: half its slots in
			// flight, so that the few finishing as it dies (their commits
			// land) cannot leave it idle.
			r.waitInFlightN(w, crashConcurrency/2)
		}
		w.kill()
		lastKill = time.Now()
		// A commit the dead worker had sent may still be landing: wait
		// until the server has closed its connections. A request it had
		// sent may still be in the provider's hands: let it land before
		// the provider's books are read.
		poll.WaitErr(t, time.Minute, "the dead worker's database connections to close", func() (bool, error) {
			n, err := r.db.countErr(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, w.appName)
			return n == 0, err
		})
		time.Sleep(3 * crashLatency)
		r.tally(&k, w)
		for _, key := range k.before {
			caughtBefore[key] = true
		}
		for _, key := range k.charged {
			caughtCharged[key] = true
		}
		if len(k.before)+len(k.charged) == 0 {
			t.Errorf("round %d (%s): the kill caught no charge in flight", round, k.kind)
		}
		if len(k.parkedMissing) > 0 {
			t.Errorf("round %d (%s): the fault point held %v but the ledger and provider do not show them in its window", round, k.kind, k.parkedMissing)
		}
		kills = append(kills, k)
		t.Logf("round %d (%s): caught %d before the provider charged, %d charged but not recorded (fault point held %d)",
			round, k.kind, len(k.before), len(k.charged), len(k.parked))
	}

	// One last worker drains what is left, including the jobs the killed
	// workers held, once River rescues them.
	time.Sleep(time.Until(lastKill.Add(crashRescue)))
	w := r.start(-1)
	poll.WaitErr(t, 5*time.Minute, "every intent to be settled", func() (bool, error) {
		n, err := r.db.countErr(`SELECT count(*) FROM intents WHERE state IN ('pending', 'processing')`)
		return n == 0, err
	})
	w.stop()

	f := r.checkAgainstProvider(keys)
	// "charged" is "refunded" in a refund run: the provider moved the money.
	done := map[string]string{"charge": "charged", "refund": "executed"}[kind]
	t.Logf("%s run, honour_keys=%v: %d intents, %d kills, %d PostgreSQL restarts; distinct intents caught: %d before the provider acted, %d acted on but not recorded; "+
		"%d succeeded, %d unknown (%d of them done at the provider, to be settled by evidence), %d failed; %ss %s twice: %d, lost: %d, "+
		"failed although done: %d, sent again without keys: %d",
		kind, honour, len(keys), len(kills), restarts, len(caughtBefore), len(caughtCharged),
		f.states[ledger.StateSucceeded], f.states[ledger.StateUnknown], f.unknownCharged, f.states[ledger.StateFailed],
		kind, done, f.twice, f.lost, f.failedCharged, f.repushed)
	if !honour {
		// Nothing recorded what the provider answered, and nothing can ask
		// it without a reference: each such intent waits, unknown, for
		// evidence; none was pushed again (checked above).
		for key := range caughtCharged {
			if in, err := store.GetIntent(ctx, key); err != nil || in.State != ledger.StateUnknown {
				t.Errorf("%s was caught charged but not recorded and ended %s (%v), want unknown", key, in.State, err)
			}
		}
	}
	if len(caughtCharged) < p.minCharged {
		t.Errorf("only %d distinct intents caught charged but not recorded, want at least %d", len(caughtCharged), p.minCharged)
	}
	if len(caughtBefore) < p.minBefore {
		t.Errorf("only %d distinct intents caught before the provider charged, want at least %d", len(caughtBefore), p.minBefore)
	}
}

// createIntents creates n intents, each with its charge job.
func (r *crashRig) createIntents(n int) []string {
	r.t.Helper()
	ctx := context.Background()
	q, err := queue.New(r.store, queue.Config{})
	if err != nil {
		r.t.Fatal(err)
	}
	svc := charge.New(charge.Deps{Store: r.store, Chargers: map[string]providers.Charger{"fake": &fake.Charger{}}}, charge.Config{MaxAttempts: 25})
	svc.UseQueue(q)
	amount, _ := money.Parse("500", "KES")
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("charge:order-%05d", i)
		if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: keys[i], Provider: "fake", Amount: amount}}); err != nil {
			r.t.Fatal(err)
		}
	}
	return keys
}

// chargeAll charges the intents keys with one worker that is left alone,
// and returns them once all have succeeded, each charged once.
func (r *crashRig) chargeAll(keys []string) []string {
	r.t.Helper()
	w := r.start(-1)
	poll.WaitErr(r.t, 5*time.Minute, "every charge to succeed", func() (bool, error) {
		n, err := r.db.countErr(`SELECT count(*) FROM intents WHERE state IN ('pending', 'processing')`)
		return n == 0, err
	})
	w.stop()
	ctx := context.Background()
	for _, k := range keys {
		in, err := r.store.GetIntent(ctx, k)
		if err != nil || in.State != ledger.StateSucceeded || len(r.srv.Charges(k)) != 1 {
			r.t.Fatalf("%s: %s, %d charges (%v) before the refund run", k, in.State, len(r.srv.Charges(k)), err)
		}
	}
	return keys
}

// createRefunds creates, through the service, a refund of part of each
// charge, each with its refund job, and returns their keys.
func (r *crashRig) createRefunds(charges []string) []string {
	r.t.Helper()
	ctx := context.Background()
	q, err := queue.New(r.store, queue.Config{})
	if err != nil {
		r.t.Fatal(err)
	}
	svc := charge.New(charge.Deps{Store: r.store, Chargers: map[string]providers.Charger{"fake": &fake.Charger{}}}, charge.Config{MaxAttempts: 25})
	svc.UseQueue(q)
	amount, _ := money.Parse("200", "KES")
	keys := make([]string, len(charges))
	for i, of := range charges {
		keys[i] = "refund:" + of + ":1"
		if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: keys[i], Kind: ledger.IntentRefund,
			RefundOf: of, Provider: "fake", Amount: amount}}); err != nil {
			r.t.Fatal(err)
		}
	}
	if n := r.db.count(`SELECT count(*) FROM river_job WHERE kind = 'refund' AND state = 'available'`); n != len(keys) {
		r.t.Fatalf("%d refund jobs for %d refunds", n, len(keys))
	}
	return keys
}

// done returns the provider's own record of what it did for key: the
// charges, or in a refund run the refunds, made under it.
func (r *crashRig) done(key string) []fake.Charge {
	if r.kind == "refund" {
		return r.srv.Refunds(key)
	}
	return r.srv.Charges(key)
}

// doneCounts is done for every key the provider knows.
func (r *crashRig) doneCounts() map[string]int {
	if r.kind == "refund" {
		return r.srv.RefundCounts()
	}
	return r.srv.ChargeCounts()
}

// collectParked waits until the fault point holds want answers (or fewer, if
// no more come within a second of the last) and returns their keys.
func collectParked(t *testing.T, w *worker, want int) []string {
	t.Helper()
	var keys []string
	timeout := time.After(time.Minute)
	for len(keys) < want {
		var quiet <-chan time.Time
		if len(keys) > 0 {
			quiet = time.After(time.Second)
		}
		select {
		case k, ok := <-w.parked:
			if !ok {
				t.Fatalf("the worker exited before its fault point held %d answers", want)
			}
			keys = append(keys, k)
		case <-quiet:
			return keys
		case <-timeout:
			t.Fatalf("the fault point held %d answers in a minute, want %d", len(keys), want)
		}
	}
	return keys
}

// waitInFlight waits until w holds a claim on an intent: a charge is under
// way in it.
func (r *crashRig) waitInFlight(w *worker) {
	r.t.Helper()
	r.waitInFlightN(w, 1)
}

// waitInFlightN waits until w holds claims on n intents, checking often.
func (r *crashRig) waitInFlightN(w *worker, n int) {
	r.t.Helper()
	err := poll.Until(context.Background(), time.Minute, 2*time.Millisecond, func() (bool, error) {
		held, err := r.db.countErr(`SELECT count(*) FROM intents WHERE state = 'processing' AND claim_owner LIKE $1`, w.owner+"%")
		return held >= n, err
	})
	if err != nil {
		r.t.Fatalf("waiting for %d charges in flight: %v", n, err)
	}
}

// tally reads what the dead worker w left in the middle of a charge: intents
// still processing under its claim whose last attempt has no outcome, split
// by the provider's own record of them.
func (r *crashRig) tally(k *killTally, w *worker) {
	r.t.Helper()
	var held []string
	poll.WaitErr(r.t, time.Minute, "the intents the dead worker held", func() (bool, error) {
		var err error
		held, err = r.db.keys(`
			SELECT i.key FROM intents i
			JOIN LATERAL (SELECT outcome FROM attempts a WHERE a.intent_key = i.key ORDER BY number DESC LIMIT 1) a ON true
			WHERE i.state = 'processing' AND i.claim_owner LIKE $1 AND a.outcome IN ('started', 'unknown', 'pending')`, w.owner+"%")
		return err == nil, err
	})
	counts := r.doneCounts()
	inWindow := map[string]bool{}
	for _, key := range held {
		if counts[key] > 0 {
			k.charged = append(k.charged, key)
			inWindow[key] = true
		} else {
			k.before = append(k.before, key)
		}
	}
	for _, key := range k.parked {
		if inWindow[key] == k.parkedBefore || !slices.Contains(held, key) {
			k.parkedMissing = append(k.parkedMissing, key)
		}
	}
}

// providerCheck is every intent checked against the provider's records.
type providerCheck struct {
	states                                                      map[ledger.State]int
	twice, lost, failedCharged, unknownCharged, repushed, stray int
}

func (r *crashRig) checkAgainstProvider(keys []string) providerCheck {
	t := r.t
	ctx := context.Background()
	f := providerCheck{states: map[ledger.State]int{}}
	ours := map[string]bool{}
	for _, k := range keys {
		ours[k] = true
		in, err := r.store.GetIntent(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		f.states[in.State]++
		charges := r.done(k)
		if len(charges) > 1 {
			f.twice++
			t.Errorf("%s executed %d times at the provider", k, len(charges))
		}
		switch in.State {
		case ledger.StateSucceeded:
			attempts, err := r.store.ListAttempts(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			var refs []string
			for _, a := range attempts {
				if a.Outcome == ledger.OutcomeSucceeded {
					refs = append(refs, a.ProviderRef)
				}
			}
			if len(charges) != 1 || len(refs) != 1 || refs[0] != charges[0].ID {
				t.Errorf("%s succeeded with attempts %v; the provider holds %+v", k, refs, charges)
			}
		case ledger.StateFailed:
			if len(charges) > 0 {
				f.failedCharged++
				t.Errorf("%s marked failed although the provider executed it (%s)", k, charges[0].ID)
			}
		case ledger.StateUnknown:
			if len(charges) == 1 {
				f.unknownCharged++
			}
			if r.honour {
				t.Errorf("%s ended unknown although the provider honours keys", k)
			}
		default:
			f.lost++
			t.Errorf("%s left %s", k, in.State)
		}
		if !r.honour && r.srv.Requests(k) > 1 {
			f.repushed++
			t.Errorf("%s was pushed %d times to a provider without idempotency keys", k, r.srv.Requests(k))
		}
	}
	for k := range r.doneCounts() {
		if !ours[k] {
			f.stray++
			t.Errorf("the provider executed %s, which is no intent of ours", k)
		}
	}
	return f
}

// TestCrashWorkerProcess is the worker process of TestCrash and
// TestFaultProxy. CRASH_PARK_AFTER >= 0 arms the fault point: the answers
// after the first CRASH_PARK_AFTER are held, unrecorded, and their intent
// keys written to file descriptor 3, until the process is killed.
func TestCrashWorkerProcess(t *testing.T) {
	if os.Getenv(crashWorkerEnv) != "1" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if parkAfter, _ := strconv.Atoi(os.Getenv("CRASH_PARK_AFTER")); os.Getenv("CRASH_PARK_AFTER") != "" && parkAfter >= 0 {
		report := os.NewFile(3, "parked")
		var (
			answers atomic.Int64
			mu      sync.Mutex
		)
		park := func(key string) {
			if answers.Add(1) <= int64(parkAfter) {
				return
			}
			mu.Lock()
			_, _ = fmt.Fprintln(report, key)
			mu.Unlock()
			<-make(chan struct{}) // held until the test kills the process
		}
		if os.Getenv("CRASH_PARK_BEFORE") == "1" {
			charge.SetBeforeProviderCall(park)
		} else {
			charge.SetAfterProviderCall(park)
		}
	}
	timeout := time.Second
	if d, err := time.ParseDuration(os.Getenv("CRASH_PROVIDER_TIMEOUT")); err == nil {
		timeout = d
	}
	store, err := database.Open(ctx, os.Getenv("CRASH_URL"), database.Options{MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	honour, _ := strconv.ParseBool(os.Getenv("CRASH_HONOUR"))
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{
		"fake": &fake.Charger{Name: "fake", BaseURL: os.Getenv("CRASH_FAKE"), HonoursKeys: honour, Timeout: timeout}}},
		charge.Config{Lease: crashLease, MaxAttempts: 25, Owner: fmt.Sprintf("pid-%d", os.Getpid())})
	workers := river.NewWorkers()
	charge.AddWorkers(workers, svc)
	q, err := queue.New(store, queue.Config{Workers: workers, Queues: map[string]int{queue.QueueCharges: crashConcurrency},
		FetchPollInterval: 10 * time.Millisecond, JobTimeout: 2 * time.Second, RescueStuckJobsAfter: crashRescue,
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
