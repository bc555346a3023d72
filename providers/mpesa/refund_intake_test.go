package mpesa

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// createRefundAttempt books a succeeded charge intent and a refund of it
// whose first attempt recorded ref (a reversal's OriginatorConversationID),
// as the refund worker leaves it after Refund answered pending.
func createRefundAttempt(t *testing.T, s ledger.Store, chargeKey, refundKey, ref string) {
	t.Helper()
	ctx := context.Background()
	createIntent(t, s, chargeKey, "ws_CO_"+chargeKey, ledger.StateSucceeded)
	amt, _ := money.Parse("1", "KES")
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: refundKey, Kind: ledger.IntentRefund,
		RefundOf: chargeKey, Provider: Provider, Amount: amt, Customer: "254708374149"}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: refundKey, Owner: "worker", Lease: time.Minute, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: refundKey, ClaimToken: in.ClaimToken, ProviderRef: ref,
		Outcome: ledger.OutcomePending, Now: t0}); err != nil {
		t.Fatal(err)
	}
}

// TestReversalResultSettlesRefund: through the handler and the ledger on
// both engines, with the charge package's ApplyOutcome: a queue timeout
// leaves the refund attempt open; the reversal result delivered twice (byte
// for byte, re-serialised, and concurrently) is one reversal with one
// source, and settles the refund once; the status result about the same
// reversal adds a source and changes nothing; a failed reversal fails its
// refund, and a later contradicting success is kept as evidence only.
func TestReversalResultSettlesRefund(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		e := setupEnv(t, newStore, HandlerConfig{})
		e.proc.Applier = charge.New(charge.Deps{Store: e.store, Clock: func() time.Time { return t0 }}, charge.Config{})
		const ref = "dad6-4c34-8787-c8cb963a496d1268232"
		createRefundAttempt(t, e.store, "charge:order-9", "refund:order-9:1", ref)
		post := func(path string, body []byte) {
			t.Helper()
			if rec := e.post("/daraja/"+testToken+"/"+path, body); rec.Code != http.StatusOK ||
				rec.Body.String() != `{"ResultCode":0,"ResultDesc":"Success"}` {
				t.Fatalf("%s answered %d %s", path, rec.Code, rec.Body)
			}
		}

		post("reversal/timeout", readFixture(t, "testdata/callbacks/reversal_timeout.json"))
		if st := intentState(t, e.store, "refund:order-9:1"); st != ledger.StateProcessing {
			t.Fatalf("after a queue timeout the refund is %s, want it still processing", st)
		}

		success := readFixture(t, "testdata/callbacks/reversal_success.json")
		post("reversal/result", success)
		settled, err := e.store.GetIntent(ctx, "refund:order-9:1")
		if err != nil || settled.State != ledger.StateSucceeded {
			t.Fatalf("refund = %+v, %v", settled, err)
		}
		post("reversal/result", success)
		post("reversal/result", bytes.ReplaceAll(success, []byte("\n"), []byte(" ")))
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				b := bytes.ReplaceAll(success, []byte("\n"), bytes.Repeat([]byte(" "), i+2))
				if rec := e.post("/daraja/"+testToken+"/reversal/result", b); rec.Code != http.StatusOK {
					t.Errorf("concurrent delivery answered %d", rec.Code)
				}
			})
		}
		wg.Wait()
		post("status/result", readFixture(t, "testdata/callbacks/status_reversal.json"))

		rev, err := e.store.GetProviderTxn(ctx, Provider, "SKE52PAWR9")
		if err != nil {
			t.Fatal(err)
		}
		if rev.Type != ledger.TxnReversal || rev.LinkedID != "SKC82PACB8" || rev.ProviderRef != ref || len(rev.Sources) != 2 {
			t.Errorf("reversal = %+v", rev)
		}
		if n := txnCount(t, e.store); n != 1 {
			t.Errorf("%d provider transactions, want the one reversal", n)
		}
		again, err := e.store.GetIntent(ctx, "refund:order-9:1")
		if err != nil || again.State != ledger.StateSucceeded || !again.UpdatedAt.Equal(settled.UpdatedAt) {
			t.Errorf("duplicates changed the refund: %+v -> %+v, %v", settled, again, err)
		}
		attempts, err := e.store.ListAttempts(ctx, "refund:order-9:1")
		if err != nil || len(attempts) != 1 || attempts[0].Outcome != ledger.OutcomeSucceeded || attempts[0].ProviderRef != ref {
			t.Errorf("attempts = %+v, %v", attempts, err)
		}
		if q, err := e.store.ListQuarantine(ctx, "", 10); err != nil || len(q) != 0 {
			t.Errorf("quarantined: %+v, %v", q, err)
		}
		if left, _ := e.store.ListUnprocessedCallbacks(ctx, Provider, 10); len(left) != 0 {
			t.Errorf("unprocessed callbacks: %d", len(left))
		}

		// A failure fails its refund; a contradicting success later is
		// evidence, never a flip.
		const failedRef = "8521-4298025-1"
		createRefundAttempt(t, e.store, "charge:order-10", "refund:order-10:1", failedRef)
		post("reversal/result", readFixture(t, "testdata/callbacks/reversal_failure.json"))
		if st := intentState(t, e.store, "refund:order-10:1"); st != ledger.StateFailed {
			t.Fatalf("refund after a failed reversal is %s", st)
		}
		late := []byte(strings.NewReplacer("dad6-4c34-8787-c8cb963a496d1268232", failedRef, "SKE52PAWR9", "SKE52PAWS2",
			"AG_20211114_201018edbbf9f1582eaa", "AG_20211114_2010late").Replace(string(success)))
		post("reversal/result", late)
		if st := intentState(t, e.store, "refund:order-10:1"); st != ledger.StateFailed {
			t.Errorf("a late success flipped the failed refund to %s", st)
		}
		if got, err := e.store.GetProviderTxn(ctx, Provider, "SKE52PAWS2"); err != nil || got.ProviderRef != failedRef {
			t.Errorf("the late success is not kept as evidence: %+v, %v", got, err)
		}
	})
}
