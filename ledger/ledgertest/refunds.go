package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

func refundParams(t testing.TB, key, of, amount string) ledger.IntentParams {
	p := params(t, key, amount)
	p.Kind, p.RefundOf = ledger.IntentRefund, of
	return p
}

func createRefund(s ledger.Executor, p ledger.IntentParams) (ledger.Intent, bool, error) {
	return s.CreateIntent(context.Background(), ledger.NewIntent{IntentParams: p, CreatedAt: T0.Add(time.Hour)})
}

// wantFieldError fails unless err is a *ledger.FieldError on field whose
// message contains msg.
func wantFieldError(t testing.TB, what string, err error, field, msg string) {
	t.Helper()
	var fe *ledger.FieldError
	if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(err.Error(), msg) {
		t.Fatalf("%s: err = %v, want a field error on %s saying %q", what, err, field, msg)
	}
}

func exerciseRefunds(t *testing.T, newStore NewStore) {
	ctx := context.Background()

	t.Run("FindingIntentKind", func(t *testing.T) { t.Parallel(); exerciseFindingIntentKind(t, newStore) })

	t.Run("UpToTheCharge", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		charge := mustCreate(t, s, params(t, "charge:order-4471", "1000"))
		if charge.Kind != ledger.IntentCharge || charge.RefundOf != "" {
			t.Fatalf("charge = kind %q refund_of %q", charge.Kind, charge.RefundOf)
		}
		r1, created, err := createRefund(s, refundParams(t, "refund:order-4471:1", charge.Key, "400"))
		if err != nil || !created {
			t.Fatalf("first refund: created=%v err=%v", created, err)
		}
		got, err := s.GetIntent(ctx, r1.Key)
		if err != nil || got.Kind != ledger.IntentRefund || got.RefundOf != charge.Key || got.State != ledger.StatePending ||
			!got.Amount.Equal(kes(t, "400")) {
			t.Fatalf("stored refund = %+v, %v", got, err)
		}
		// A replay is the same request, answered before any check: its
		// amount is already counted.
		if _, created, err := createRefund(s, refundParams(t, "refund:order-4471:1", charge.Key, "400.00")); err != nil || created {
			t.Fatalf("replay: created=%v err=%v", created, err)
		}
		if _, _, err := createRefund(s, refundParams(t, "refund:order-4471:1", charge.Key, "401")); !errors.Is(err, ledger.ErrConflict) {
			t.Fatalf("key reuse: err = %v", err)
		}
		if _, created, err := createRefund(s, refundParams(t, "refund:order-4471:2", charge.Key, "600")); err != nil || !created {
			t.Fatalf("refund of the rest: created=%v err=%v", created, err)
		}
		_, _, err = createRefund(s, refundParams(t, "refund:order-4471:3", charge.Key, "0.01"))
		wantFieldError(t, "over-refund", err, "amount", "exceeds what remains refundable")
		if _, err := s.GetIntent(ctx, "refund:order-4471:3"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("refused refund stored: %v", err)
		}
		// A failed refund gives its amount back.
		if _, err := s.TransitionIntent(ctx, ledger.TransitionParams{Key: r1.Key, From: []ledger.State{ledger.StatePending},
			To: ledger.StateFailed, Now: T0.Add(2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		_, _, err = createRefund(s, refundParams(t, "refund:order-4471:3", charge.Key, "400.01"))
		wantFieldError(t, "over-refund after a failure", err, "amount", "400.00 of 1000.00")
		if _, created, err := createRefund(s, refundParams(t, "refund:order-4471:3", charge.Key, "400")); err != nil || !created {
			t.Fatalf("refund after a failure: created=%v err=%v", created, err)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		charge := mustCreate(t, s, params(t, "charge:1", "1000"))
		refund := mustCreate(t, s, refundParams(t, "refund:1", charge.Key, "10"))
		usd, _ := money.Parse("10", "USD")
		stripe := refundParams(t, "refund:x", charge.Key, "10")
		stripe.Provider = "stripe"
		withCurrency := refundParams(t, "refund:x", charge.Key, "10")
		withCurrency.Amount = usd
		chargeWithRefundOf := params(t, "charge:x", "10")
		chargeWithRefundOf.RefundOf = charge.Key
		for _, c := range []struct {
			name, field, msg string
			p                ledger.IntentParams
		}{
			{"missing charge", "refund_of", `no intent has key "charge:nope"`, refundParams(t, "refund:x", "charge:nope", "10")},
			{"refund of a refund", "refund_of", "is a refund, not a charge", refundParams(t, "refund:x", refund.Key, "1")},
			{"no refund_of", "refund_of", "is required", refundParams(t, "refund:x", "", "10")},
			{"itself", "refund_of", "names the refund itself", refundParams(t, "refund:x", "refund:x", "10")},
			{"other provider", "provider", "differs from the charge's provider mpesa", stripe},
			{"other currency", "currency", "USD differs from the charge's currency KES", withCurrency},
			{"charge with refund_of", "refund_of", "is set on a charge", chargeWithRefundOf},
			{"unknown kind", "kind", `unknown kind "chargeback"`, ledger.IntentParams{Key: "x", Kind: "chargeback", Provider: "mpesa", Amount: kes(t, "1")}},
			{"zero", "amount", "is not positive", refundParams(t, "refund:x", charge.Key, "0")},
		} {
			_, _, err := createRefund(s, c.p)
			wantFieldError(t, c.name, err, c.field, c.msg)
		}
		if _, err := s.GetIntent(ctx, "refund:x"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("a refused refund was stored: %v", err)
		}
	})

	// Concurrent refunds of one charge never exceed it together: the
	// charge row is locked (PostgreSQL) or the single writer orders them
	// (SQLite).
	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		charge := mustCreate(t, s, params(t, "charge:contended", "1000"))
		const n = 24
		var ok, over atomic.Int32
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, created, err := createRefund(s, refundParams(t, fmt.Sprintf("refund:contended:%d", i), charge.Key, "100"))
				var fe *ledger.FieldError
				switch {
				case err == nil && created:
					ok.Add(1)
				case errors.As(err, &fe) && fe.Field == "amount":
					over.Add(1)
				default:
					t.Errorf("refund %d: created=%v err=%v", i, created, err)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 10 || over.Load() != n-10 {
			t.Fatalf("%d refunds created, %d refused; want 10 and %d", ok.Load(), over.Load(), n-10)
		}
	})

	t.Run("Import", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		stored := mustCreate(t, s, params(t, "charge:stored", "1000"))
		mustCreate(t, s, refundParams(t, "refund:stored:1", stored.Key, "600"))
		refund := func(line int, key, of, amount string, state ledger.State, refs ...string) ledger.ImportIntent {
			r := importRow(t, line, key, amount, state, refs...)
			r.Kind, r.RefundOf = ledger.IntentRefund, of
			return r
		}
		rows := []ledger.ImportIntent{
			importRow(t, 2, "charge:file", "500", ledger.StateSucceeded, "NLJ7RT61SV"),
			refund(3, "refund:file:1", "charge:file", "300", ledger.StateSucceeded, "NLJ7RT61SW"),
			refund(4, "refund:file:2", "charge:file", "200.01", ledger.StateSucceeded, "NLJ7RT61SX"), // over by 0.01
			refund(5, "refund:file:3", "charge:file", "50", ledger.StateFailed),                      // failed: holds nothing
			refund(6, "refund:file:4", "charge:file", "200", ledger.StateSucceeded),
			refund(7, "refund:nope", "charge:nope", "1", ledger.StateSucceeded),
			refund(8, "refund:stored:2", stored.Key, "400.01", ledger.StateSucceeded),
			refund(9, "refund:stored:1", stored.Key, "600", ledger.StatePending), // the stored one: existing
			importRow(t, 10, "charge:pending", "10", ledger.StatePending),
		}
		var pending []string
		var res ledger.ImportIntentsResult
		err := s.InTx(ctx, func(tx ledger.Tx) (err error) {
			res, err = tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values(rows),
				Pending: func(_ context.Context, keys []string) error { pending = append(pending, keys...); return nil }})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := refusedLines(res); !slices.Equal(got, []int{4, 7, 8}) {
			t.Fatalf("refused lines %v (%v), want [4 7 8]", got, res.Refused)
		}
		if res.Rows != 9 || res.Created != 5 || res.Existing != 1 || res.Pending != 1 || res.PendingRefunds != 1 || pending != nil {
			t.Fatalf("import = %+v, pending keys %v", res, pending)
		}
		for _, r := range res.Refused {
			var fe *ledger.FieldError
			if !errors.As(r.Err, &fe) {
				t.Fatalf("line %d: %v", r.Line, r.Err)
			}
		}
		for key, want := range map[string]bool{"refund:file:1": true, "refund:file:2": false, "refund:file:3": true,
			"refund:file:4": true, "refund:nope": false, "refund:stored:2": false} {
			in, err := s.GetIntent(ctx, key)
			switch {
			case want && (err != nil || in.Kind != ledger.IntentRefund || in.RefundOf == ""):
				t.Errorf("%s: %+v, %v", key, in, err)
			case !want && !errors.Is(err, ledger.ErrNotFound):
				t.Errorf("%s: refused but stored (%v)", key, err)
			}
		}
		if atts, err := s.ListAttempts(ctx, "refund:file:2"); err != nil || len(atts) != 0 {
			t.Fatalf("attempts of a refused refund: %v, %v", atts, err)
		}
		// Without the refused rows the same file imports whole. A pending
		// refund is never handed over to be charged: the pending refunds,
		// created now or stored before, go to PendingRefunds for their
		// refund jobs.
		ok := slices.DeleteFunc(slices.Clone(rows), func(r ledger.ImportIntent) bool { return slices.Contains([]int{4, 7, 8}, r.Line) })
		ok = append(ok, refund(11, "refund:file2:1", "charge:file2", "40", ledger.StatePending),
			importRow(t, 12, "charge:file2", "100", ledger.StateSucceeded))
		pending = nil
		var pendingRefunds []string
		err = s.InTx(ctx, func(tx ledger.Tx) (err error) {
			res, err = tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values(ok),
				Pending: func(_ context.Context, keys []string) error { pending = append(pending, keys...); return nil },
				PendingRefunds: func(_ context.Context, keys []string) error {
					pendingRefunds = append(pendingRefunds, keys...)
					return nil
				}})
			return err
		})
		slices.Sort(pendingRefunds)
		if err != nil || len(res.Refused) != 0 || res.Created != 2 || !slices.Equal(pending, []string{"charge:pending"}) ||
			res.PendingRefunds != 2 || !slices.Equal(pendingRefunds, []string{"refund:file2:1", "refund:stored:1"}) {
			t.Fatalf("second import = %+v, pending %v, pending refunds %v, %v", res, pending, pendingRefunds, err)
		}
		// A new pending refund is one to send: refused, as through the API,
		// while its charge has not succeeded. The same refund recorded as
		// made elsewhere (a final state) is history and imports.
		for state, refusedWant := range map[ledger.State]bool{ledger.StatePending: true, ledger.StateSucceeded: false} {
			rows := []ledger.ImportIntent{refund(2, "refund:stored:"+string(state), stored.Key, "100", state)}
			var res ledger.ImportIntentsResult
			err := s.InTx(ctx, func(tx ledger.Tx) (err error) {
				res, err = tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values(rows)})
				if err == nil && len(res.Refused) > 0 {
					err = errRollback
				}
				return err
			})
			var fe *ledger.FieldError
			switch {
			case refusedWant && (len(res.Refused) != 1 || !errors.As(res.Refused[0].Err, &fe) || fe.Field != "refund_of" ||
				!strings.Contains(fe.Error(), "only a succeeded charge")):
				t.Errorf("%s refund of a pending charge: %+v, %v", state, res, err)
			case !refusedWant && (err != nil || len(res.Refused) != 0 || res.Created != 1):
				t.Errorf("%s refund of a pending charge: %+v, %v", state, res, err)
			}
		}
	})
}

// errRollback rolls a test transaction back on purpose.
var errRollback = errors.New("rollback")

// exerciseFindingIntentKind: a finding keeps what its intent is, through
// the single and the batch upsert.
func exerciseFindingIntentKind(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	f := ledger.Finding{Kind: ledger.KindAmountMismatch, Severity: ledger.SeverityHigh, Provider: "stripe",
		IntentKey: "refund:order-1:1", IntentKind: ledger.IntentRefund, ProviderTxnIDs: []string{"re_1"},
		Expected: kes(t, "10"), Actual: kes(t, "12"), AtRisk: kes(t, "2"), Detail: "d", OccurredAt: T0, Status: ledger.FindingOpen}
	f.ID = ledger.FindingID(f.Kind, f.IntentKey, f.ProviderTxnIDs)
	g := f
	g.IntentKey, g.IntentKind = "", ""
	g.ID = ledger.FindingID(g.Kind, g.IntentKey, g.ProviderTxnIDs)
	if _, err := s.UpsertFinding(ctx, f, 1, T0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertFindings(ctx, []ledger.Finding{g}, 1, T0); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]ledger.IntentKind{f.ID: ledger.IntentRefund, g.ID: ""} {
		got, err := s.GetFinding(ctx, id)
		if err != nil || got.IntentKind != want {
			t.Fatalf("finding %s: intent kind %q, %v; want %q", id, got.IntentKind, err, want)
		}
	}
}
