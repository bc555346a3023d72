package charge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
	"github.com/reconcilehq/reconcile/queue"
)

// createRefund creates, through the service, a refund of amount KES of the
// charge intent of.
func (b *bundle) createRefund(t *testing.T, key, of, amount string) (ledger.Intent, error) {
	t.Helper()
	a, err := money.Parse(amount, "KES")
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := b.svc.CreateIntent(context.Background(), ledger.NewIntent{IntentParams: ledger.IntentParams{
		Key: key, Kind: ledger.IntentRefund, RefundOf: of, Provider: "fake", Amount: a, Customer: "254712340845"}})
	return in, err
}

// charged creates a charge intent and works it to succeeded.
func (b *bundle) charged(t *testing.T, key, amount string) {
	t.Helper()
	b.create(t, key, amount)
	b.work(t, b.final(t, key))
	if s := b.state(t, key); s != ledger.StateSucceeded {
		t.Fatalf("charge %s: %s", key, s)
	}
}

func (b *bundle) jobs(t *testing.T, kind string) []*rivertype.JobRow {
	t.Helper()
	res, err := b.q.List(context.Background(), river.NewJobListParams().Kinds(kind).States(
		rivertype.JobStateAvailable, rivertype.JobStateCompleted, rivertype.JobStateRetryable, rivertype.JobStateScheduled,
		rivertype.JobStateRunning, rivertype.JobStateCancelled, rivertype.JobStateDiscarded))
	if err != nil {
		t.Fatal(err)
	}
	return res.Jobs
}

func fieldOf(err error) string {
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// TestRefundJob: a refund of a succeeded charge is created with its job in
// one transaction, sent once under the refund key for the charge the
// charge's attempt recorded, and announced by refund.succeeded.
func TestRefundJob(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: false}})
		ctx := context.Background()
		b.charged(t, "charge:order-1", "100")
		// Created in a transaction that rolls back: no refund, no job.
		boom := errors.New("the caller failed later in its transaction")
		err := b.store.InTx(ctx, func(tx ledger.Tx) error {
			a, _ := money.Parse("40", "KES")
			if _, _, err := b.svc.CreateIntentTx(ctx, tx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "refund:order-1:1",
				Kind: ledger.IntentRefund, RefundOf: "charge:order-1", Provider: "fake", Amount: a, Customer: "254712340845"}}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) || len(b.jobs(t, "refund")) != 0 {
			t.Fatalf("rolled back refund: %v, %d refund jobs", err, len(b.jobs(t, "refund")))
		}
		for range 2 { // a replay enqueues nothing more
			if _, err := b.createRefund(t, "refund:order-1:1", "charge:order-1", "40"); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(b.jobs(t, "refund")); n != 1 {
			t.Fatalf("%d refund jobs, want 1", n)
		}
		b.work(t, b.final(t, "refund:order-1:1"))
		if s := b.state(t, "refund:order-1:1"); s != ledger.StateSucceeded {
			t.Fatalf("refund %s", s)
		}
		charges, refunds := b.fake.Charges("charge:order-1"), b.fake.Refunds("refund:order-1:1")
		if len(charges) != 1 || len(refunds) != 1 || refunds[0].ChargeID != charges[0].ID || refunds[0].Amount != "40.00" {
			t.Fatalf("provider holds charges %+v, refunds %+v", charges, refunds)
		}
		attempts, _ := b.store.ListAttempts(ctx, "refund:order-1:1")
		if len(attempts) != 1 || attempts[0].Outcome != ledger.OutcomeSucceeded || attempts[0].ProviderRef != refunds[0].ID {
			t.Fatalf("attempts %+v", attempts)
		}
		ev, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventRefundSucceeded, "refund:order-1:1"))
		if err != nil {
			t.Fatalf("no refund.succeeded event: %v", err)
		}
		var payload struct {
			Type string `json:"type"`
			Data struct {
				RefundOf string `json:"refund_of"`
				Amount   string `json:"amount"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Payload, &payload); err != nil || payload.Type != "refund.succeeded" ||
			payload.Data.RefundOf != "charge:order-1" || payload.Data.Amount != "40.00" {
			t.Fatalf("payload %s (%v)", ev.Payload, err)
		}
		if _, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventChargeSucceeded, "refund:order-1:1")); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("a refund announced as a charge: %v", err)
		}
		if got := testutil.ToFloat64(b.metrics.RefundOutcomes.WithLabelValues("fake", "succeeded")); got != 1 {
			t.Fatalf("refund outcomes = %v", got)
		}
		// Over what remains (100 - 40): refused at create, no job.
		if _, err := b.createRefund(t, "refund:order-1:2", "charge:order-1", "60.01"); fieldOf(err) != "amount" {
			t.Fatalf("over-refund: %v", err)
		}
		if _, err := b.store.GetIntent(ctx, "refund:order-1:2"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("refused refund stored: %v", err)
		}
		if n := len(b.jobs(t, "refund")); n != 1 {
			t.Fatalf("%d refund jobs after a refused refund, want 1", n)
		}
	})
}

// TestRefundOfUnsucceededChargeRefused: a refund of a charge that is not
// succeeded is refused at create; a refund job that finds its charge not
// succeeded fails the refund without calling the provider.
func TestRefundOfUnsucceededChargeRefused(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: true, Fail: func(key string, _ int) fake.Failure {
			if key == "charge:declined" {
				return fake.Decline
			}
			return fake.None
		}}})
		ctx := context.Background()
		b.create(t, "charge:declined", "100")
		b.work(t, b.final(t, "charge:declined"))
		b.create(t, "charge:pending", "100") // its job is queued, not worked
		for _, of := range []string{"charge:declined", "charge:pending"} {
			if _, err := b.createRefund(t, "refund:"+of, of, "10"); fieldOf(err) != "refund_of" {
				t.Fatalf("refund of %s: %v", of, err)
			}
			if _, err := b.store.GetIntent(ctx, "refund:"+of); !errors.Is(err, ledger.ErrNotFound) {
				t.Fatalf("refused refund of %s stored: %v", of, err)
			}
		}
		if n := len(b.jobs(t, "refund")); n != 0 {
			t.Fatalf("%d refund jobs", n)
		}
		// Written past the service (an import, another tool), then a
		// refund job: the job checks again.
		a, _ := money.Parse("10", "KES")
		if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{CreatedAt: time.Now(), IntentParams: ledger.IntentParams{Key: "refund:x",
			Kind: ledger.IntentRefund, RefundOf: "charge:declined", Provider: "fake", Amount: a}}); err != nil {
			t.Fatal(err)
		}
		res, err := b.q.Insert(ctx, charge.RefundArgs{IntentKey: "refund:x"}, &river.InsertOpts{Queue: queue.QueueCharges})
		if err != nil {
			t.Fatal(err)
		}
		b.work(t, func() bool {
			j, err := b.q.Get(ctx, res.Job.ID)
			return err == nil && j.State == rivertype.JobStateCompleted
		})
		if s := b.state(t, "refund:x"); s != ledger.StateFailed {
			t.Fatalf("refund of a failed charge: %s", s)
		}
		if n := b.fake.Requests("refund:x"); n != 0 {
			t.Fatalf("the provider was asked %d times", n)
		}
		if _, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventRefundFailed, "refund:x")); err != nil {
			t.Fatalf("no refund.failed event: %v", err)
		}
	})
}

// TestRefundResumesAfterCrash: a worker died holding a refund whose
// attempt it had recorded (its lease runs out). With a provider that
// honours keys the next worker sends the same refund key (one refund);
// without, the refund is never sent again blind: it ends unknown, announced
// by refund.unknown, for evidence to settle.
func TestRefundResumesAfterCrash(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		for _, honour := range []bool{true, false} {
			// The first refund request is made and its answer lost.
			b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: honour, Fail: func(key string, n int) fake.Failure {
				if key == "refund:drop" && n == 1 {
					return fake.ChargeThenDrop
				}
				return fake.None
			}}})
			ctx := context.Background()
			b.charged(t, "charge:a", "100")
			b.charged(t, "charge:b", "100")
			if _, err := b.createRefund(t, "refund:drop", "charge:a", "100"); err != nil {
				t.Fatal(err)
			}
			// A worker that died after recording its attempt, before the
			// call: the claim's lease is all that is left of it.
			if _, err := b.createRefund(t, "refund:died", "charge:b", "25"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := b.store.ClaimAndStart(ctx, ledger.ClaimParams{Key: "refund:died", Owner: "dead-worker", Lease: time.Second, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			b.work(t, b.final(t, "refund:drop", "refund:died"))
			want, wantRequests := ledger.StateSucceeded, 2
			if !honour {
				want, wantRequests = ledger.StateUnknown, 1
			}
			if s, n, r := b.state(t, "refund:drop"), len(b.fake.Refunds("refund:drop")), b.fake.Requests("refund:drop"); s != want || n != 1 || r != wantRequests {
				t.Fatalf("honour=%v, answer lost: %s, %d refunds, %d requests; want %s, 1, %d", honour, s, n, r, want, wantRequests)
			}
			diedRefunds := 1
			if !honour {
				diedRefunds = 0 // nothing can tell whether the dead try reached the provider
			}
			if s, n := b.state(t, "refund:died"), len(b.fake.Refunds("refund:died")); s != want || n != diedRefunds {
				t.Fatalf("honour=%v, worker died: %s, %d refunds; want %s, %d", honour, s, n, want, diedRefunds)
			}
			if !honour {
				for _, k := range []string{"refund:drop", "refund:died"} {
					if _, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventRefundUnknown, k)); err != nil {
						t.Fatalf("%s: no refund.unknown event: %v", k, err)
					}
				}
			}
		}
	})
}

// TestRefundOutcomesAndSettle: a provider's verdict by callback settles a
// refund waiting on it, and evidence settles an unknown refund, each with
// its refund.* event.
func TestRefundOutcomesAndSettle(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{})
		ctx := context.Background()
		a, _ := money.Parse("100", "KES")
		ten, _ := money.Parse("10", "KES")
		now := time.Now()
		if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StateSucceeded, CreatedAt: now,
			IntentParams: ledger.IntentParams{Key: "charge:c", Provider: "fake", Amount: a}}); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"refund:cb", "refund:ev", "refund:no", "refund:whole"} {
			if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StateUnknown, CreatedAt: now,
				IntentParams: ledger.IntentParams{Key: k, Kind: ledger.IntentRefund, RefundOf: "charge:c", Provider: "fake", Amount: ten}}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: k, ProviderRef: "conv-" + k, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		err := b.store.InTx(ctx, func(tx ledger.Tx) error {
			if err := b.svc.ApplyOutcome(ctx, tx, "fake", providers.AttemptOutcome{ProviderRef: "conv-refund:cb", Status: providers.StatusSucceeded, TxnID: "R1"}); err != nil {
				return err
			}
			if err := b.svc.ApplyOutcome(ctx, tx, "fake", providers.AttemptOutcome{ProviderRef: "conv-refund:no", Status: providers.StatusFailed, Code: "R000002"}); err != nil {
				return err
			}
			// The whole payment reversed for a refund of part of it: money
			// moved, but not this refund's success.
			if err := b.svc.ApplyOutcome(ctx, tx, "fake", providers.AttemptOutcome{ProviderRef: "conv-refund:whole", Status: providers.StatusSucceeded,
				TxnID: "R3", Amount: a}); err != nil {
				return err
			}
			in, err := tx.GetIntent(ctx, "refund:ev")
			if err != nil {
				return err
			}
			return b.svc.Settle(ctx, tx, in, ledger.ProviderTxn{ID: "R2", Type: ledger.TxnReversal}, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{"refund:cb": ledger.EventRefundSucceeded, "refund:ev": ledger.EventRefundSucceeded, "refund:no": ledger.EventRefundFailed} {
			if s := b.state(t, k); string(s)+"" != want[len("refund."):] {
				t.Errorf("%s: %s", k, s)
			}
			if _, err := b.store.GetEvent(ctx, ledger.EventID(want, k)); err != nil {
				t.Errorf("%s: no %s event: %v", k, want, err)
			}
		}
		if s := b.state(t, "refund:whole"); s != ledger.StateUnknown {
			t.Errorf("refund:whole settled by a verdict for another amount: %s", s)
		}
		if _, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventRefundSucceeded, "refund:whole")); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("refund:whole: an event for a verdict of another amount (%v)", err)
		}
	})
}

// TestJobOfTheOtherKind: a charge job for a refund intent (or a refund job
// for a charge) sends nothing and leaves the intent to its own job.
func TestJobOfTheOtherKind(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{fake: fake.Options{HonourKeys: false}})
		ctx := context.Background()
		b.charged(t, "charge:k", "100")
		a, _ := money.Parse("10", "KES")
		if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{CreatedAt: time.Now(), IntentParams: ledger.IntentParams{Key: "refund:k",
			Kind: ledger.IntentRefund, RefundOf: "charge:k", Provider: "fake", Amount: a}}); err != nil {
			t.Fatal(err)
		}
		res, err := b.q.Insert(ctx, charge.ChargeArgs{IntentKey: "refund:k"}, &river.InsertOpts{Queue: queue.QueueCharges})
		if err != nil {
			t.Fatal(err)
		}
		b.work(t, func() bool {
			j, err := b.q.Get(ctx, res.Job.ID)
			return err == nil && j.State == rivertype.JobStateCancelled
		})
		if s, n := b.state(t, "refund:k"), b.fake.Requests("refund:k"); s != ledger.StatePending || n != 0 {
			t.Fatalf("after a charge job: %s, %d requests", s, n)
		}
		// Its own job then sends it once, as if nothing had happened.
		if _, err := b.q.Insert(ctx, charge.RefundArgs{IntentKey: "refund:k"}, &river.InsertOpts{Queue: queue.QueueCharges}); err != nil {
			t.Fatal(err)
		}
		b.work(t, b.final(t, "refund:k"))
		if s, n := b.state(t, "refund:k"), len(b.fake.Refunds("refund:k")); s != ledger.StateSucceeded || n != 1 {
			t.Fatalf("after its refund job: %s, %d refunds", s, n)
		}
	})
}

// TestRefundRequestNamesTheCharge: the request of a refund names the charge
// by its succeeded attempt's reference and, when the books hold it, the
// receipt of the provider transaction with that reference (what an M-Pesa
// reversal needs).
func TestRefundRequestNamesTheCharge(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{})
		ctx := context.Background()
		now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
		kes := func(s string) money.Amount { a, _ := money.Parse(s, "KES"); return a }
		for _, k := range []string{"charge:stk", "charge:bare", "charge:paybill", "charge:twice"} {
			ref := map[string]string{"charge:paybill": "INV4471", "charge:twice": "INV4472"}[k]
			if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StateSucceeded, CreatedAt: now,
				IntentParams: ledger.IntentParams{Key: k, Provider: "fake", Amount: kes("1500"), Reference: ref}}); err != nil {
				t.Fatal(err)
			}
		}
		// Paid by paybill against the intent's reference (no attempt
		// recorded a request id): the one payment of its amount that echoes
		// the reference names it. Two such payments name nothing.
		for _, p := range []struct{ id, ref, amount string }{
			{"SKP1PAYBILL", "inv4471", "1500"}, {"SKP2OTHER", "INV4471", "1000"},
			{"SKP3TWICE", "INV4472", "1500"}, {"SKP4TWICE", "INV4472", "1500"},
		} {
			if _, err := b.store.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "fake", ID: p.id, Type: ledger.TxnCharge,
				Status: ledger.TxnSucceeded, Amount: kes(p.amount), OccurredAt: now.Add(time.Minute), Reference: p.ref},
				ledger.Source{Channel: "c2b_confirmation", Ref: p.id, ReceivedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		// An attempt that failed, then the one that succeeded.
		for i, o := range []ledger.Outcome{ledger.OutcomeFailed, ledger.OutcomeSucceeded} {
			if _, err := b.store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "charge:stk", ProviderRef: fmt.Sprintf("ws_CO_%d", i),
				Outcome: o, Now: now}); err != nil {
				t.Fatal(err)
			}
		}
		for i, id := range []string{"SKX0FAILED", "SKX1RCPT"} {
			st := ledger.TxnFailed
			if i == 1 {
				st = ledger.TxnSucceeded
			}
			if _, err := b.store.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "fake", ID: id, Type: ledger.TxnCharge, Status: st,
				Amount: kes("1500"), OccurredAt: now.Add(time.Minute), ProviderRef: fmt.Sprintf("ws_CO_%d", i)},
				ledger.Source{Channel: "stk_callback", Ref: id, ReceivedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		for of, want := range map[string]providers.RefundRequest{
			"charge:stk":     {ChargeRef: "ws_CO_1", ChargeTxnID: "SKX1RCPT"},
			"charge:bare":    {}, // nothing recorded: the provider says whether it can do without
			"charge:paybill": {ChargeTxnID: "SKP1PAYBILL"},
			"charge:twice":   {},
		} {
			in, err := b.createRefund(t, "refund:"+of, of, "500")
			if err != nil {
				t.Fatal(err)
			}
			req, err := b.svc.RefundRequest(ctx, in)
			if err != nil || req.RefundKey != in.Key || req.ChargeKey != of || req.ChargeRef != want.ChargeRef ||
				req.ChargeTxnID != want.ChargeTxnID || req.Amount.Text() != "500.00" || req.Attempt != 1 {
				t.Errorf("%s: request %+v, %v", of, req, err)
			}
		}
	})
}

// TestStripeRefundAfterKeyRetention: a Stripe refund whose answer was lost
// is not sent again once Stripe may have forgotten its key: the refund job
// finds it among the charge's refunds by the refund key in its metadata.
func TestStripeRefundAfterKeyRetention(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		store := newStore(t)
		var now atomic.Pointer[time.Time]
		start := time.Now().UTC()
		now.Store(&start)
		clock := func() time.Time { return *now.Load() }
		sf := stripefake.New(clock)
		url := sf.Start()
		// No connection is reused: net/http would replay the lost request
		// by itself on a reused one (it carries an Idempotency-Key), which
		// Stripe answers safely but which would hide the loss here.
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		t.Cleanup(func() { hc.CloseIdleConnections(); sf.Close() })
		sc, err := stripe.New(stripe.Config{APIKey: "sk_test_refunds", BaseURL: url, HTTPClient: hc, PaymentMethod: stripefake.PaymentMethodVisa, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		svc := charge.New(charge.Deps{Store: store, Clock: clock, Chargers: map[string]providers.Charger{"stripe": sc}},
			charge.Config{Lease: 5 * time.Second, MaxAttempts: 1})
		workers := river.NewWorkers()
		charge.AddWorkers(workers, svc)
		q, err := queue.New(store, queue.Config{Workers: workers, Queues: map[string]int{queue.QueueCharges: 1},
			FetchPollInterval: 50 * time.Millisecond, JobTimeout: 4 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		svc.UseQueue(q)
		b := &bundle{store: store, svc: svc, q: q}
		ctx := context.Background()
		usd := func(s string) money.Amount { a, _ := money.Parse(s, "USD"); return a }
		if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "charge:s-1", Provider: "stripe", Amount: usd("20.00")}}); err != nil {
			t.Fatal(err)
		}
		b.work(t, b.final(t, "charge:s-1"))
		if s := b.state(t, "charge:s-1"); s != ledger.StateSucceeded {
			t.Fatalf("charge %s", s)
		}
		sf.InjectFault(stripefake.Fault{Method: "POST", Path: "/v1/refunds", Mode: stripefake.DropAfter})
		if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "refund:s-1:1", Kind: ledger.IntentRefund,
			RefundOf: "charge:s-1", Provider: "stripe", Amount: usd("5.00")}}); err != nil {
			t.Fatal(err)
		}
		var job *rivertype.JobRow
		b.work(t, func() bool { // one try, its answer lost: the job is discarded
			if js := b.jobs(t, "refund"); len(js) == 1 && js[0].State == rivertype.JobStateDiscarded {
				job = js[0]
			}
			return job != nil
		})
		if n := len(sf.Refunds()); n != 1 || b.state(t, "refund:s-1:1") == ledger.StateSucceeded {
			t.Fatalf("after the lost answer: %d refunds, %s", n, b.state(t, "refund:s-1:1"))
		}
		// A day and more later Stripe has forgotten the key; the job is
		// retried by hand.
		later := start.Add(stripe.KeyRetention + time.Hour)
		now.Store(&later)
		sf.ExpireIdempotencyKeys()
		if _, err := q.Retry(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
		b.work(t, b.final(t, "refund:s-1:1"))
		refunds := sf.Refunds()
		attempts, _ := store.ListAttempts(ctx, "refund:s-1:1")
		if s := b.state(t, "refund:s-1:1"); s != ledger.StateSucceeded || len(refunds) != 1 || len(attempts) != 1 ||
			attempts[0].ProviderRef != refunds[0].ID {
			t.Fatalf("after the retry: %s, refunds %+v, attempts %+v", s, refunds, attempts)
		}
		if n := countRequests(sf, "POST", "/v1/refunds"); n != 1 {
			t.Errorf("%d refund requests, want 1 (then a look-up)", n)
		}
	})
}

func countRequests(sf *stripefake.Server, method, path string) int {
	n := 0
	for _, r := range sf.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// asyncRefunder answers like M-Pesa's Reversal API: a refund is accepted
// (pending) and its verdict comes by callback; a status query only sends
// the question (unknown).
type asyncRefunder struct {
	refunds, queries atomic.Int64
}

func (*asyncRefunder) Charge(context.Context, providers.ChargeRequest) (providers.ChargeResult, error) {
	return providers.ChargeResult{}, errors.New("not used")
}

func (r *asyncRefunder) Refund(_ context.Context, req providers.RefundRequest) (providers.ChargeResult, error) {
	r.refunds.Add(1)
	return providers.ChargeResult{ProviderRef: "AG_" + req.RefundKey, Status: providers.StatusPending}, nil
}

func (r *asyncRefunder) QueryRefundStatus(context.Context, providers.RefundRequest, string) (providers.ChargeResult, error) {
	r.queries.Add(1)
	return providers.ChargeResult{Status: providers.StatusUnknown}, nil
}

// TestAsyncRefundWaitsForItsCallback: an accepted refund whose verdict comes
// by callback waits for it, asking the provider meanwhile and never sending
// the refund again; the callback settles it (refund.succeeded, no
// refund.unknown). One whose callback never comes turns unknown after
// PendingGiveUp.
func TestAsyncRefundWaitsForItsCallback(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		store := newStore(t)
		ctx := context.Background()
		ar := &asyncRefunder{}
		// The clock jumps past the give-up once the answered refund has its
		// callback, whatever the machine's load.
		var skew atomic.Int64
		clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		svc := charge.New(charge.Deps{Store: store, Clock: clock, Chargers: map[string]providers.Charger{"async": ar}},
			charge.Config{Lease: 5 * time.Second, PendingPoll: 100 * time.Millisecond, PendingGiveUp: time.Minute})
		workers := river.NewWorkers()
		charge.AddWorkers(workers, svc)
		q, err := queue.New(store, queue.Config{Workers: workers, Queues: map[string]int{queue.QueueCharges: 2},
			FetchPollInterval: 50 * time.Millisecond, JobTimeout: 4 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		svc.UseQueue(q)
		b := &bundle{store: store, svc: svc, q: q}
		kes := func(s string) money.Amount { a, _ := money.Parse(s, "KES"); return a }
		if _, _, err := store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StateSucceeded, CreatedAt: time.Now(),
			IntentParams: ledger.IntentParams{Key: "charge:m", Provider: "async", Amount: kes("1000")}}); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"refund:m:answered", "refund:m:silent"} {
			if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: k, Kind: ledger.IntentRefund,
				RefundOf: "charge:m", Provider: "async", Amount: kes("100")}}); err != nil {
				t.Fatal(err)
			}
		}
		answered := false
		b.work(t, func() bool {
			if !answered && ar.queries.Load() >= 1 && waiting(t, store, "refund:m:answered") {
				// The reversal result callback arrives.
				if err := store.InTx(ctx, func(tx ledger.Tx) error {
					return svc.ApplyOutcome(ctx, tx, "async", providers.AttemptOutcome{ProviderRef: "AG_refund:m:answered",
						Status: providers.StatusSucceeded, TxnID: "RV1"})
				}); err != nil {
					t.Fatal(err)
				}
				answered = true
				skew.Store(int64(2 * time.Minute))
			}
			return answered && b.final(t, "refund:m:answered", "refund:m:silent")()
		})
		if s := b.state(t, "refund:m:answered"); s != ledger.StateSucceeded {
			t.Errorf("answered refund: %s", s)
		}
		if s := b.state(t, "refund:m:silent"); s != ledger.StateUnknown {
			t.Errorf("refund without a callback: %s", s)
		}
		if n := ar.refunds.Load(); n != 2 {
			t.Errorf("%d refund requests for 2 refunds", n)
		}
		if _, err := store.GetEvent(ctx, ledger.EventID(ledger.EventRefundUnknown, "refund:m:answered")); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("the answered refund was announced unknown: %v", err)
		}
		for k, typ := range map[string]string{"refund:m:answered": ledger.EventRefundSucceeded, "refund:m:silent": ledger.EventRefundUnknown} {
			if _, err := store.GetEvent(ctx, ledger.EventID(typ, k)); err != nil {
				t.Errorf("%s: no %s: %v", k, typ, err)
			}
		}
	})
}

// waiting reports whether key's latest attempt was accepted and waits for
// its verdict.
func waiting(t *testing.T, store ledger.Store, key string) bool {
	t.Helper()
	attempts, err := store.ListAttempts(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return len(attempts) > 0 && attempts[len(attempts)-1].Outcome == ledger.OutcomePending
}
