package charge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

type bundle struct {
	store   ledger.Store
	svc     *charge.Service
	q       *queue.Queue
	fake    *fake.Server
	metrics *charge.Metrics
	// accounts are the fake servers of the provider's other accounts.
	accounts map[string]*fake.Server
}

type setupOpts struct {
	fake        fake.Options
	maxAttempts int
	endpoints   []string
	// accounts are other accounts of the provider, each with a charger
	// (and fake server) of its own.
	accounts []string
}

func setup(t *testing.T, newStore func(testing.TB) ledger.Store, o setupOpts) *bundle {
	t.Helper()
	store := newStore(t)
	srv := fake.NewServer(o.fake)
	t.Cleanup(srv.Close)
	m := charge.NewMetrics()
	chargers := map[string]providers.Charger{"fake": &fake.Charger{Name: "fake", BaseURL: srv.URL(), HonoursKeys: o.fake.HonourKeys, Timeout: 2 * time.Second}}
	accounts := map[string]*fake.Server{}
	for _, a := range o.accounts {
		as := fake.NewServer(o.fake)
		t.Cleanup(as.Close)
		accounts[a] = as
		chargers[ledger.Scope("fake", a)] = &fake.Charger{Name: "fake", BaseURL: as.URL(), HonoursKeys: o.fake.HonourKeys, Timeout: 2 * time.Second}
	}
	svc := charge.New(charge.Deps{Store: store, Metrics: m, Chargers: chargers},
		charge.Config{Lease: 5 * time.Second, MaxAttempts: o.maxAttempts, Endpoints: o.endpoints, SigningSecret: "whsec_test_secret"})
	workers := river.NewWorkers()
	charge.AddWorkers(workers, svc)
	q, err := queue.New(store, queue.Config{Workers: workers, Queues: map[string]int{queue.QueueCharges: 4, queue.QueueEvents: 2},
		FetchPollInterval: 50 * time.Millisecond, RetryPolicy: queue.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond},
		JobTimeout: 4 * time.Second, RescueStuckJobsAfter: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	return &bundle{store: store, svc: svc, q: q, fake: srv, metrics: m, accounts: accounts}
}

func (b *bundle) create(t *testing.T, key, amount string) ledger.Intent {
	t.Helper()
	a, err := money.Parse(amount, "KES")
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := b.svc.CreateIntent(context.Background(), ledger.NewIntent{IntentParams: ledger.IntentParams{Key: key, Provider: "fake", Amount: a, Customer: "254712340845"}})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// work runs the queue until cond holds.
func (b *bundle) work(t *testing.T, cond func() bool) {
	t.Helper()
	ctx := context.Background()
	if err := b.q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := b.q.Stop(stopCtx); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	poll.Wait(t, 30*time.Second, "the queue", cond)
}

func (b *bundle) state(t *testing.T, key string) ledger.State {
	t.Helper()
	in, err := b.store.GetIntent(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return in.State
}

func (b *bundle) final(t *testing.T, keys ...string) func() bool {
	return func() bool {
		for _, k := range keys {
			if s := b.state(t, k); !s.Final() && s != ledger.StateUnknown {
				return false
			}
		}
		return true
	}
}

func forEngines(t *testing.T, fn func(t *testing.T, newStore func(testing.TB) ledger.Store)) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) { t.Parallel(); fn(t, e.New) })
	}
}

func TestChargesOnce(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: true}})
		keys := make([]string, 20)
		for i := range keys {
			keys[i] = fmt.Sprintf("charge:order-%d", i)
			b.create(t, keys[i], "100")
		}
		b.work(t, b.final(t, keys...))
		ctx := context.Background()
		for _, k := range keys {
			if s := b.state(t, k); s != ledger.StateSucceeded {
				t.Errorf("%s: %s", k, s)
			}
			if n := len(b.fake.Charges(k)); n != 1 {
				t.Errorf("%s charged %d times", k, n)
			}
			attempts, _ := b.store.ListAttempts(ctx, k)
			if len(attempts) != 1 || attempts[0].Outcome != ledger.OutcomeSucceeded || attempts[0].ProviderRef == "" {
				t.Errorf("%s attempts = %+v", k, attempts)
			}
			if _, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventChargeSucceeded, k)); err != nil {
				t.Errorf("%s: no charge.succeeded event: %v", k, err)
			}
		}
	})
}

// TestAccountsChargeThroughTheirOwn: an intent of another account of the
// provider is charged through that account's charger (its short code),
// never the default one, and the default account's through its own.
func TestAccountsChargeThroughTheirOwn(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: true}, accounts: []string{"600639"}})
		a, err := money.Parse("100", "KES")
		if err != nil {
			t.Fatal(err)
		}
		in, _, err := b.svc.CreateIntent(context.Background(), ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "charge:branch-1",
			Provider: "fake", Account: "600639", Amount: a, Customer: "254712340845"}})
		if err != nil || in.Account != "600639" {
			t.Fatalf("create: %+v, %v", in, err)
		}
		b.create(t, "charge:main-1", "100")
		b.work(t, b.final(t, "charge:branch-1", "charge:main-1"))
		branch := b.accounts["600639"]
		if n, m := len(branch.Charges("charge:branch-1")), len(b.fake.Charges("charge:branch-1")); n != 1 || m != 0 {
			t.Fatalf("the branch's intent charged %d times through its account, %d through the default", n, m)
		}
		if n, m := len(b.fake.Charges("charge:main-1")), len(branch.Charges("charge:main-1")); n != 1 || m != 0 {
			t.Fatalf("the default account's intent charged %d times through it, %d through the branch", n, m)
		}
	})
}

// TestSameJobTwice runs the same charge job twice in a row: one charge.
func TestSameJobTwice(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: false}})
		b.create(t, "charge:order-1", "250")
		b.work(t, b.final(t, "charge:order-1"))
		ctx := context.Background()
		// A second delivery of the very same job (River's uniqueness is only
		// a window, so insert it without).
		res, err := b.q.Insert(ctx, charge.ChargeArgs{IntentKey: "charge:order-1"}, &river.InsertOpts{Queue: queue.QueueCharges})
		if err != nil {
			t.Fatal(err)
		}
		b.work(t, func() bool {
			j, err := b.q.Get(ctx, res.Job.ID)
			return err == nil && j.State == rivertype.JobStateCompleted
		})
		if n := len(b.fake.Charges("charge:order-1")); n != 1 {
			t.Fatalf("charged %d times", n)
		}
		if got := testutil.ToFloat64(b.metrics.SkippedDuplicates.WithLabelValues("charge_job")); got != 1 {
			t.Fatalf("skipped duplicates = %v, want 1", got)
		}
	})
}

func TestPermanentErrorFails(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: true, Fail: func(string, int) fake.Failure { return fake.Decline }}})
		b.create(t, "charge:declined", "100")
		b.work(t, b.final(t, "charge:declined"))
		if s := b.state(t, "charge:declined"); s != ledger.StateFailed {
			t.Fatalf("state %s", s)
		}
		if n := b.fake.Requests("charge:declined"); n != 1 {
			t.Fatalf("a permanent error was retried: %d requests", n)
		}
		ev, err := b.store.GetEvent(context.Background(), ledger.EventID(ledger.EventChargeFailed, "charge:declined"))
		if err != nil || ev.Type != ledger.EventChargeFailed {
			t.Fatalf("event = %+v, %v", ev, err)
		}
	})
}

func TestRetryableErrorsAreRetried(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: false, Fail: func(_ string, n int) fake.Failure {
			if n <= 2 {
				return fake.Unavailable
			}
			return fake.None
		}}})
		b.create(t, "charge:flaky", "100")
		b.work(t, b.final(t, "charge:flaky"))
		attempts, _ := b.store.ListAttempts(context.Background(), "charge:flaky")
		if s := b.state(t, "charge:flaky"); s != ledger.StateSucceeded || len(attempts) != 3 ||
			attempts[0].Outcome != ledger.OutcomeFailed || attempts[2].Outcome != ledger.OutcomeSucceeded {
			t.Fatalf("state %s, attempts %+v", s, attempts)
		}
		if n := len(b.fake.Charges("charge:flaky")); n != 1 {
			t.Fatalf("charged %d times", n)
		}
	})
}

// TestAmbiguousFailure drops the connection after charging. With keys the
// retry sends the same key and the provider replays; without, the intent goes
// to unknown and nothing is sent again.
func TestAmbiguousFailure(t *testing.T) {
	t.Parallel()
	dropFirst := func(_ string, n int) fake.Failure {
		if n == 1 {
			return fake.ChargeThenDrop
		}
		return fake.None
	}
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: true, Fail: dropFirst}})
		b.create(t, "charge:drop", "100")
		b.work(t, b.final(t, "charge:drop"))
		if s, n, r := b.state(t, "charge:drop"), len(b.fake.Charges("charge:drop")), b.fake.Requests("charge:drop"); s != ledger.StateSucceeded || n != 1 || r != 2 {
			t.Fatalf("with keys: state %s, %d charges, %d requests; want succeeded, 1, 2", s, n, r)
		}

		b = setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: false, Fail: dropFirst}})
		b.create(t, "charge:drop", "100")
		b.work(t, b.final(t, "charge:drop"))
		if s, n, r := b.state(t, "charge:drop"), len(b.fake.Charges("charge:drop")), b.fake.Requests("charge:drop"); s != ledger.StateUnknown || n != 1 || r != 1 {
			t.Fatalf("without keys: state %s, %d charges, %d requests; want unknown, 1, 1", s, n, r)
		}
		if _, err := b.store.GetEvent(context.Background(), ledger.EventID(ledger.EventChargeUnknown, "charge:drop")); err != nil {
			t.Fatalf("no charge.unknown event: %v", err)
		}
	})
}

// TestExhaustedJobsAreDiscarded: a job that keeps failing ends in River's
// discarded state after the configured attempts, where jobs list finds it,
// and a retry by hand can finish it.
func TestExhaustedJobsAreDiscarded(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		var mu sync.Mutex
		down := true
		b := setup(t, newStore, setupOpts{maxAttempts: 3, fake: fake.Options{HonourKeys: true, Fail: func(string, int) fake.Failure {
			mu.Lock()
			defer mu.Unlock()
			if down {
				return fake.Unavailable
			}
			return fake.None
		}}})
		b.create(t, "charge:down", "100")
		ctx := context.Background()
		var discarded *rivertype.JobRow
		b.work(t, func() bool {
			res, err := b.q.List(ctx, river.NewJobListParams().States(rivertype.JobStateDiscarded))
			if err == nil && len(res.Jobs) == 1 {
				discarded = res.Jobs[0]
			}
			return discarded != nil
		})
		if discarded.Attempt != 3 || b.fake.Requests("charge:down") != 3 || b.state(t, "charge:down") != ledger.StatePending {
			t.Fatalf("discarded after %d attempts, %d requests, state %s", discarded.Attempt, b.fake.Requests("charge:down"), b.state(t, "charge:down"))
		}
		mu.Lock()
		down = false
		mu.Unlock()
		if _, err := b.q.Retry(ctx, discarded.ID); err != nil {
			t.Fatal(err)
		}
		b.work(t, b.final(t, "charge:down"))
		if s := b.state(t, "charge:down"); s != ledger.StateSucceeded || len(b.fake.Charges("charge:down")) != 1 {
			t.Fatalf("after retry: %s", s)
		}
	})
}

// TestOutbox: an intent created in a transaction that rolls back leaves no
// job; one that commits leaves exactly one.
func TestOutbox(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{})
		ctx := context.Background()
		amount, _ := money.Parse("10", "KES")
		n := ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "charge:outbox", Provider: "fake", Amount: amount}}
		boom := errors.New("caller failed later in its transaction")
		err := b.store.InTx(ctx, func(tx ledger.Tx) error {
			if _, _, err := b.svc.CreateIntentTx(ctx, tx, n); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		jobs, err := b.q.List(ctx, river.NewJobListParams().Kinds("charge"))
		if err != nil || len(jobs.Jobs) != 0 {
			t.Fatalf("rolled back intent left %d jobs (%v)", len(jobs.Jobs), err)
		}
		if _, err := b.store.GetIntent(ctx, "charge:outbox"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("intent: %v", err)
		}
		for range 2 {
			if err := b.store.InTx(ctx, func(tx ledger.Tx) error { _, _, err := b.svc.CreateIntentTx(ctx, tx, n); return err }); err != nil {
				t.Fatal(err)
			}
		}
		jobs, _ = b.q.List(ctx, river.NewJobListParams().Kinds("charge"))
		if len(jobs.Jobs) != 1 {
			t.Fatalf("committed intent (created twice) has %d jobs", len(jobs.Jobs))
		}
	})
}

// TestApplyOutcome: a provider verdict settles pending, processing and
// unknown intents, and never flips a final one.
func TestApplyOutcome(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{})
		ctx := context.Background()
		amount, _ := money.Parse("10", "KES")
		for key, state := range map[string]ledger.State{"k-unknown": ledger.StateUnknown, "k-failed": ledger.StateFailed} {
			if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{State: state, CreatedAt: time.Now(),
				IntentParams: ledger.IntentParams{Key: key, Provider: "fake", Amount: amount}}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: key, ProviderRef: "ref-" + key, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		apply := func(ref string, st providers.ChargeStatus) {
			if err := b.store.InTx(ctx, func(tx ledger.Tx) error {
				return b.svc.ApplyOutcome(ctx, tx, "fake", providers.AttemptOutcome{ProviderRef: ref, Status: st, TxnID: "R1"})
			}); err != nil {
				t.Fatal(err)
			}
		}
		apply("ref-k-unknown", providers.StatusSucceeded)
		apply("ref-k-failed", providers.StatusSucceeded)
		apply("ref-nobody", providers.StatusSucceeded)
		if s := b.state(t, "k-unknown"); s != ledger.StateSucceeded {
			t.Errorf("late success for unknown: %s", s)
		}
		if s := b.state(t, "k-failed"); s != ledger.StateFailed {
			t.Errorf("late success flipped a failed intent: %s", s)
		}
	})
}

// TestEventsAreSignedAndDelivered: each state change is announced once, to
// every endpoint, signed, with the event id as idempotency key.
func TestEventsAreSignedAndDelivered(t *testing.T) {
	t.Parallel()
	type got struct {
		key, sig, ts string
		body         []byte
	}
	var (
		mu       sync.Mutex
		received []got
		failures = 1
	)
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 { // the receiver is down once: the delivery is retried
			failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		received = append(received, got{r.Header.Get(charge.HeaderIdempotencyKey), r.Header.Get(charge.HeaderSignature), r.Header.Get(charge.HeaderTimestamp), body})
	}))
	defer ep.Close()
	b := setup(t, dbtest.Postgres, setupOpts{fake: fake.Options{HonourKeys: true}, endpoints: []string{ep.URL}})
	b.create(t, "charge:evt", "100")
	b.work(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(received) == 1 })
	r := received[0]
	if r.key != ledger.EventID(ledger.EventChargeSucceeded, "charge:evt") {
		t.Fatalf("idempotency key %q", r.key)
	}
	sec := int64(0)
	fmt.Sscan(r.ts, &sec)
	if err := charge.Verify("whsec_test_secret", r.ts, r.sig, r.body, time.Unix(sec, 0), time.Minute); err != nil {
		t.Fatalf("signature: %v", err)
	}
	if err := charge.Verify("other", r.ts, r.sig, r.body, time.Unix(sec, 0), time.Minute); err == nil {
		t.Fatal("a wrong secret verified")
	}
	var payload struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			IntentKey string `json:"intent_key"`
			Amount    string `json:"amount"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &payload); err != nil || payload.Type != "charge.succeeded" || payload.Data.Amount != "100.00" || payload.ID != r.key {
		t.Fatalf("payload %s (%v)", r.body, err)
	}
}
