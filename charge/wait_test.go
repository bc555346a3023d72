package charge_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/queue"
)

// receiptRefunder refunds as M-Pesa does: a reversal names the charge's
// receipt (ChargeTxnID), and without it nothing can be sent yet.
type receiptRefunder struct {
	mu      sync.Mutex
	sent    []providers.RefundRequest
	checked atomic.Int64
}

func (r *receiptRefunder) Charge(context.Context, providers.ChargeRequest) (providers.ChargeResult, error) {
	return providers.ChargeResult{}, errors.New("not used")
}

func (r *receiptRefunder) CheckRefund(req providers.RefundRequest) error {
	r.checked.Add(1)
	if req.ChargeTxnID == "" {
		return &providers.Error{Provider: "receipts", Kind: providers.Retryable, Code: "receipt_unknown",
			Message: "the charge's receipt is not in the books yet",
			Err:     errors.Join(providers.ErrAwaitingEvidence, &ledger.FieldError{Field: "charge_txn_id", Err: errors.New("not known yet")})}
	}
	return nil
}

func (r *receiptRefunder) Refund(_ context.Context, req providers.RefundRequest) (providers.ChargeResult, error) {
	if err := r.CheckRefund(req); err != nil {
		return providers.ChargeResult{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, req)
	return providers.ChargeResult{ProviderRef: "RV-" + req.ChargeTxnID, TxnID: "RV-" + req.ChargeTxnID, Status: providers.StatusSucceeded,
		At: time.Now()}, nil
}

func (r *receiptRefunder) requests() []providers.RefundRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]providers.RefundRequest(nil), r.sent...)
}

// receiptSetup returns books with a charge confirmed by a status query
// (its request id recorded, its receipt not in the books), a refund of it
// created through the service, and the queue to work it.
func receiptSetup(t *testing.T, newStore func(testing.TB) ledger.Store, wait time.Duration) (*bundle, *receiptRefunder) {
	t.Helper()
	ctx := context.Background()
	store := newStore(t)
	rr := &receiptRefunder{}
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"receipts": rr}},
		charge.Config{Lease: 5 * time.Second, ReceiptPoll: 100 * time.Millisecond, ReceiptWait: wait})
	workers := river.NewWorkers()
	charge.AddWorkers(workers, svc)
	q, err := queue.New(store, queue.Config{Workers: workers, Queues: map[string]int{queue.QueueCharges: 2},
		FetchPollInterval: 50 * time.Millisecond, JobTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	kes, _ := money.Parse("1000", "KES")
	if _, _, err := store.CreateIntent(ctx, ledger.NewIntent{CreatedAt: time.Now().Add(-time.Hour),
		IntentParams: ledger.IntentParams{Key: "charge:q", Provider: "receipts", Amount: kes}}); err != nil {
		t.Fatal(err)
	}
	in, err := store.ClaimIntent(ctx, ledger.ClaimParams{Key: "charge:q", Owner: "w", Lease: time.Minute, Now: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: in.Key, ClaimToken: in.ClaimToken, Now: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a.ID, ProviderRef: "ws_CO_Q1", Outcome: ledger.OutcomeSucceeded, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.TransitionIntent(ctx, ledger.TransitionParams{Key: in.Key, From: []ledger.State{ledger.StateProcessing},
		To: ledger.StateSucceeded, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "refund:q", Kind: ledger.IntentRefund,
		RefundOf: "charge:q", Provider: "receipts", Amount: kes}}); err != nil {
		t.Fatal(err)
	}
	return &bundle{store: store, svc: svc, q: q}, rr
}

// TestRefundWaitsForReceipt: a refund whose charge's receipt is not in the
// books waits, unclaimed and with nothing sent, its wait recorded, for as
// many looks as it takes; when a statement brings the receipt it is sent,
// once, for that receipt, and its wait ends.
func TestRefundWaitsForReceipt(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b, rr := receiptSetup(t, newStore, time.Hour)
		b.work(t, func() bool {
			w, err := b.store.GetRefundWait(ctx, "refund:q")
			return err == nil && w.Checks >= 3
		})
		if s := b.state(t, "refund:q"); s != ledger.StatePending {
			t.Fatalf("waiting refund is %s", s)
		}
		if attempts, _ := b.store.ListAttempts(ctx, "refund:q"); len(attempts) != 0 || len(rr.requests()) != 0 {
			t.Fatalf("a waiting refund was tried: %d attempt(s), %d request(s)", len(attempts), len(rr.requests()))
		}
		w, err := b.store.GetRefundWait(ctx, "refund:q")
		if err != nil || w.Reason != "charge_txn_id: not known yet" || !w.NextAt.After(w.CheckedAt) {
			t.Fatalf("wait %+v, %v", w, err)
		}
		jobs := b.jobs(t, "refund")
		if len(jobs) != 1 || jobs[0].State == rivertype.JobStateDiscarded || len(jobs[0].Errors) != 0 {
			t.Fatalf("refund job %+v", jobs)
		}
		// The statement brings the charge's receipt.
		kes, _ := money.Parse("1000", "KES")
		if _, err := b.store.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "receipts", ID: "SRC1", Type: ledger.TxnCharge,
			Status: ledger.TxnSucceeded, Amount: kes, OccurredAt: time.Now().Add(-time.Hour), ProviderRef: "ws_CO_Q1"},
			ledger.Source{Channel: "statement", Ref: "s.csv:2", ReceivedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		b.work(t, b.final(t, "refund:q"))
		if s := b.state(t, "refund:q"); s != ledger.StateSucceeded {
			t.Fatalf("refund %s", s)
		}
		if sent := rr.requests(); len(sent) != 1 || sent[0].ChargeTxnID != "SRC1" {
			t.Fatalf("sent %+v", sent)
		}
		if _, err := b.store.GetRefundWait(ctx, "refund:q"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("the wait outlived the refund: %v", err)
		}
	})
}

// TestRefundWaitGivesUp: after ReceiptWait the refund fails, nothing sent,
// with the reason, and announces it.
func TestRefundWaitGivesUp(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b, rr := receiptSetup(t, newStore, 300*time.Millisecond)
		b.work(t, b.final(t, "refund:q"))
		if s := b.state(t, "refund:q"); s != ledger.StateFailed {
			t.Fatalf("refund %s", s)
		}
		attempts, _ := b.store.ListAttempts(ctx, "refund:q")
		if len(attempts) != 1 || attempts[0].Outcome != ledger.OutcomeFailed || len(rr.requests()) != 0 {
			t.Fatalf("attempts %+v, %d sent", attempts, len(rr.requests()))
		}
		if _, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventRefundFailed, "refund:q")); err != nil {
			t.Fatalf("no refund.failed: %v", err)
		}
		if _, err := b.store.GetRefundWait(ctx, "refund:q"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("wait kept: %v", err)
		}
		poll.Wait(t, 10*time.Second, "the job completed", func() bool {
			jobs := b.jobs(t, "refund")
			return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCompleted
		})
	})
}
