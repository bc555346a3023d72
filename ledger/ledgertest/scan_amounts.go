package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// exerciseScanAmounts checks that the scans read every amount exactly in
// minor units of its currency, for every currency the money package knows,
// and that an amount with no exact minor units (more decimals than its
// currency allows, or beyond int64) is handed on as unreadable with an
// error naming the row and the amount: never rounded, never clamped.
func exerciseScanAmounts(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	from, to := T0.Add(-time.Hour), T0.Add(time.Hour)
	ifl := ledger.IntentFilter{Provider: "amounts", From: from, To: to}
	tfl := ledger.TxnFilter{Provider: "amounts", From: from, To: to}

	// One smallest unit of every currency, and the same amount with one
	// more decimal than the currency allows.
	wantMinor := map[string]int64{}
	wantBad := map[string]string{} // key or id -> what the error must say
	for i, code := range money.Codes() {
		exp, err := money.Exponent(code)
		if err != nil {
			t.Fatal(err)
		}
		one, err := money.FromMinor(1, code)
		if err != nil {
			t.Fatal(err)
		}
		at := T0.Add(time.Duration(i) * time.Second)
		for _, k := range []string{"unit-" + code, "fine-" + code} {
			_, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: k, Provider: "amounts",
				Amount: one}, State: ledger.StateSucceeded, CreatedAt: at, UpdatedAt: at})
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			id := "T" + k
			if _, err := s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "amounts", ID: id, Type: ledger.TxnCharge,
				Status: ledger.TxnSucceeded, Amount: one, OccurredAt: at}, ledger.Source{Channel: "statement", Ref: id, ReceivedAt: at}); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
		wantMinor["unit-"+code], wantMinor["Tunit-"+code] = 1, 1
		fine := decimal.New(1, -exp-1).String()
		Exec(t, s, fmt.Sprintf(`UPDATE intents SET amount = '%s' WHERE key = 'fine-%s'`, fine, code))
		Exec(t, s, fmt.Sprintf(`UPDATE provider_txns SET amount = '-%s' WHERE txn_id = 'Tfine-%s'`, fine, code))
		wantBad["fine-"+code], wantBad["Tfine-"+code] = fine, "-"+fine
	}
	// At the edge of int64 minor units: the largest fits, one more does not.
	plant := func(key, amount string, bad bool) {
		t.Helper()
		at := T0.Add(-time.Minute)
		a, err := money.Parse("1", "KES")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: key, Provider: "amounts",
			Amount: a}, State: ledger.StateSucceeded, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		id := "T" + key
		if _, err := s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "amounts", ID: id, Type: ledger.TxnCharge,
			Status: ledger.TxnSucceeded, Amount: a, OccurredAt: at}, ledger.Source{Channel: "statement", Ref: id, ReceivedAt: at}); err != nil {
			t.Fatal(err)
		}
		Exec(t, s, fmt.Sprintf(`UPDATE intents SET amount = '%s' WHERE key = '%s'`, amount, key))
		Exec(t, s, fmt.Sprintf(`UPDATE provider_txns SET amount = '-%s' WHERE txn_id = '%s'`, amount, id))
		if bad {
			wantBad[key], wantBad[id] = amount, "-"+amount
			return
		}
		m := decimal.RequireFromString(amount).Shift(2).IntPart()
		wantMinor[key], wantMinor[id] = m, -m
	}
	plant("max", "92233720368547758.07", false)
	plant("max-trailing-zeros", "92233720368547758.0700", false)
	plant("over-max", "92233720368547758.08", true)
	plant("huge", "1000000000000000000000000000000", true)
	plant("over-precise", "12.345", true)
	plant("just-over-precise", "0.0000000000000000000001", true)

	got := map[string]int64{}
	check := func(key string, minor int64, bad error, asType func() error) {
		t.Helper()
		want, isBad := wantBad[key]
		switch {
		case isBad && bad == nil:
			t.Errorf("%s (amount %s) scanned as %d minor units, want it refused", key, want, minor)
		case isBad:
			err := asType()
			if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), strings.TrimPrefix(want, "-")) || minor != 0 {
				t.Errorf("%s (amount %s): minor %d, error %v; want one naming the row and the amount", key, want, minor, err)
			}
		case bad != nil:
			t.Errorf("%s: refused: %v", key, bad)
		default:
			got[key] = minor
		}
	}
	n := 0
	err := s.ScanIntents(ctx, ifl, func(r *ledger.IntentRow) error {
		n++
		check(string(r.Key), r.Minor, r.Bad, func() error { _, err := r.Intent(); return err })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.ScanProviderTxns(ctx, tfl, func(r *ledger.TxnRow) error {
		n++
		check(string(r.ID), r.Minor, r.Bad, func() error { _, err := r.Txn(); return err })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(wantMinor)+len(wantBad) {
		t.Fatalf("scanned %d rows, want %d", n, len(wantMinor)+len(wantBad))
	}
	for k, w := range wantMinor {
		if got[k] != w {
			t.Errorf("%s scanned as %d minor units, want %d", k, got[k], w)
		}
	}
	// The reason is kept: too many decimals is money.ErrTooPrecise.
	err = s.ScanIntents(ctx, ifl, func(r *ledger.IntentRow) error {
		if string(r.Key) == "over-precise" && !errors.Is(r.Bad, money.ErrTooPrecise) {
			return fmt.Errorf("over-precise: %v", r.Bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
