package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// exerciseRemedies covers remedies: recording one applied or awaiting
// approval, the refusal of a second live refund of one transaction and of a
// second waiting request, compare-and-set status changes with who decided,
// the filters, and the refunds that wait for a receipt.
func exerciseRemedies(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	refund := ledger.Remedy{FindingID: "f_dup", Kind: ledger.RemedyRefund, Status: ledger.RemedyAwaitingApproval, Provider: "mpesa",
		IntentKey: "charge:1", TxnID: "SCE2", Amount: kes(t, "2300.00"), Note: "give back the second payment",
		RequestedBy: "ops@example.com", RequestedVia: ledger.SurfaceWeb, RequestedAt: T0, ExpiresAt: T0.Add(24 * time.Hour)}

	t.Run("record and read back", func(t *testing.T) {
		got, err := s.AddRemedy(ctx, refund)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID == 0 || got.Status != ledger.RemedyAwaitingApproval || !got.Amount.Equal(refund.Amount) ||
			!got.RequestedAt.Equal(T0) || !got.ExpiresAt.Equal(T0.Add(24*time.Hour)) || !got.AppliedAt.IsZero() ||
			got.RequestedVia != ledger.SurfaceWeb || got.TxnID != "SCE2" {
			t.Fatalf("stored %+v", got)
		}
		again, err := s.GetRemedy(ctx, got.ID)
		if err != nil || !sameRemedy(again, got) {
			t.Fatalf("read back %+v, %v; want %+v", again, err, got)
		}
		refund.ID = got.ID
		if _, err := s.GetRemedy(ctx, got.ID+1000); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("no such remedy: %v", err)
		}
	})

	t.Run("one live refund of a transaction", func(t *testing.T) {
		dup := refund
		dup.Status = ledger.RemedyApplied
		if _, err := s.AddRemedy(ctx, dup); !errors.Is(err, ledger.ErrConflict) {
			t.Fatalf("second refund of SCE2: %v", err)
		}
		other := refund
		other.TxnID = "SCE3"
		if _, err := s.AddRemedy(ctx, other); err != nil {
			t.Fatalf("refund of another transaction: %v", err)
		}
	})

	t.Run("invalid remedies are refused", func(t *testing.T) {
		for _, bad := range []ledger.Remedy{
			{FindingID: "f", Kind: ledger.RemedyWriteOff, Status: ledger.RemedyApplied, Provider: "mpesa", RequestedBy: "a", RequestedVia: ledger.SurfaceCLI, RequestedAt: T0},
			{FindingID: "f", Kind: ledger.RemedyRetry, Status: ledger.RemedyApplied, Provider: "mpesa", Amount: kes(t, "1"), RequestedBy: "a", RequestedVia: ledger.SurfaceCLI, RequestedAt: T0},
			{FindingID: "f", Kind: "burn", Status: ledger.RemedyApplied, Provider: "mpesa", RequestedBy: "a", RequestedVia: ledger.SurfaceCLI, RequestedAt: T0},
			{FindingID: "f", Kind: ledger.RemedyCancel, Status: ledger.RemedyConfirmed, Provider: "mpesa", RequestedBy: "a", RequestedVia: ledger.SurfaceCLI, RequestedAt: T0},
		} {
			var fe *ledger.FieldError
			if _, err := s.AddRemedy(ctx, bad); !errors.As(err, &fe) {
				t.Errorf("%+v: %v", bad, err)
			}
		}
	})

	t.Run("status changes are compare-and-set", func(t *testing.T) {
		at := T0.Add(time.Hour)
		got, err := s.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: refund.ID, From: []ledger.RemedyStatus{ledger.RemedyAwaitingApproval},
			To: ledger.RemedyApplied, By: "lead@example.com", Via: ledger.SurfaceSlack, Note: "ok", RefundKey: "refund:f_dup:SCE2", Now: at})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != ledger.RemedyApplied || got.DecidedBy != "lead@example.com" || got.DecidedVia != ledger.SurfaceSlack ||
			got.DecisionNote != "ok" || !got.DecidedAt.Equal(at) || !got.AppliedAt.Equal(at) || got.RefundKey != "refund:f_dup:SCE2" {
			t.Fatalf("approved %+v", got)
		}
		cur, err := s.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: refund.ID, From: []ledger.RemedyStatus{ledger.RemedyAwaitingApproval},
			To: ledger.RemedyRejected, By: "x", Via: ledger.SurfaceCLI, Now: at})
		if !errors.Is(err, ledger.ErrConflict) || cur.Status != ledger.RemedyApplied {
			t.Fatalf("rejecting an applied remedy: %s, %v", cur.Status, err)
		}
		later := at.Add(time.Hour)
		got, err = s.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: refund.ID, From: []ledger.RemedyStatus{ledger.RemedyApplied},
			To: ledger.RemedyConfirmed, Now: later})
		if err != nil || got.Status != ledger.RemedyConfirmed || !got.ConfirmedAt.Equal(later) || got.DecidedBy != "lead@example.com" ||
			!got.AppliedAt.Equal(at) {
			t.Fatalf("confirmed %+v, %v", got, err)
		}
		if _, err := s.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: refund.ID + 1000, From: []ledger.RemedyStatus{ledger.RemedyApplied},
			To: ledger.RemedyConfirmed, Now: later}); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("no such remedy: %v", err)
		}
	})

	t.Run("one waiting request of a kind", func(t *testing.T) {
		w := ledger.Remedy{FindingID: "f_amt", Kind: ledger.RemedyWriteOff, Status: ledger.RemedyAwaitingApproval, Provider: "mpesa",
			IntentKey: "charge:2", Amount: kes(t, "20000"), Note: "too small to chase", RequestedBy: "ops", RequestedVia: ledger.SurfaceCLI,
			RequestedAt: T0, ExpiresAt: T0.Add(time.Hour)}
		first, err := s.AddRemedy(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddRemedy(ctx, w); !errors.Is(err, ledger.ErrConflict) {
			t.Fatalf("second waiting write-off: %v", err)
		}
		if _, err := s.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: first.ID, From: []ledger.RemedyStatus{ledger.RemedyAwaitingApproval},
			To: ledger.RemedyExpired, By: "expiry", Via: ledger.SurfaceCLI, Now: T0.Add(2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		w.Status, w.ExpiresAt = ledger.RemedyApplied, time.Time{}
		applied, err := s.AddRemedy(ctx, w)
		if err != nil || !applied.AppliedAt.Equal(T0) {
			t.Fatalf("write-off after the request expired: %+v, %v", applied, err)
		}
	})

	t.Run("filters", func(t *testing.T) {
		all, err := s.ListRemedies(ctx, ledger.RemedyFilter{})
		if err != nil || len(all) < 4 {
			t.Fatalf("all: %d, %v", len(all), err)
		}
		for i := 1; i < len(all); i++ {
			if all[i].ID <= all[i-1].ID {
				t.Fatalf("not by id: %+v", all)
			}
		}
		count := func(f ledger.RemedyFilter) int {
			t.Helper()
			got, err := s.ListRemedies(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		if n := count(ledger.RemedyFilter{FindingIDs: []string{"f_amt"}}); n != 2 {
			t.Errorf("by finding: %d", n)
		}
		if n := count(ledger.RemedyFilter{RefundKeys: []string{"refund:f_dup:SCE2"}}); n != 1 {
			t.Errorf("by refund key: %d", n)
		}
		if n := count(ledger.RemedyFilter{Kinds: []ledger.RemedyKind{ledger.RemedyWriteOff}, Statuses: []ledger.RemedyStatus{ledger.RemedyApplied}}); n != 1 {
			t.Errorf("applied write-offs: %d", n)
		}
		if n := count(ledger.RemedyFilter{FindingIDs: []string{"f_none"}}); n != 0 {
			t.Errorf("no such finding: %d", n)
		}
		if n := count(ledger.RemedyFilter{Limit: 1}); n != 1 {
			t.Errorf("limit: %d", n)
		}
	})

	t.Run("refunds that wait", func(t *testing.T) {
		if _, err := s.GetRefundWait(ctx, "refund:1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("before: %v", err)
		}
		w, err := s.WaitRefund(ctx, ledger.RefundWait{IntentKey: "refund:1", Reason: "receipt unknown", CheckedAt: T0, NextAt: T0.Add(time.Minute)})
		if err != nil || !w.Since.Equal(T0) || w.Checks != 1 || !w.NextAt.Equal(T0.Add(time.Minute)) {
			t.Fatalf("first wait %+v, %v", w, err)
		}
		w, err = s.WaitRefund(ctx, ledger.RefundWait{IntentKey: "refund:1", Reason: "receipt still unknown", CheckedAt: T0.Add(time.Minute),
			NextAt: T0.Add(3 * time.Minute)})
		if err != nil || !w.Since.Equal(T0) || w.Checks != 2 || w.Reason != "receipt still unknown" || !w.CheckedAt.Equal(T0.Add(time.Minute)) {
			t.Fatalf("second wait %+v, %v", w, err)
		}
		if _, err := s.WaitRefund(ctx, ledger.RefundWait{IntentKey: "refund:0", Reason: "r", CheckedAt: T0.Add(time.Hour), NextAt: T0.Add(2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListRefundWaits(ctx, 10)
		if err != nil || len(list) != 2 || list[0].IntentKey != "refund:1" {
			t.Fatalf("list %+v, %v", list, err)
		}
		if err := s.EndRefundWait(ctx, "refund:1"); err != nil {
			t.Fatal(err)
		}
		if err := s.EndRefundWait(ctx, "refund:1"); err != nil {
			t.Fatalf("ending twice: %v", err)
		}
		if _, err := s.GetRefundWait(ctx, "refund:1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("after: %v", err)
		}
	})
}

// sameRemedy compares two remedies, amounts by value.
func sameRemedy(a, b ledger.Remedy) bool {
	if !a.Amount.Equal(b.Amount) {
		return false
	}
	a.Amount, b.Amount = money.Amount{}, money.Amount{}
	return a == b
}
