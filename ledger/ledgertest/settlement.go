package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// exerciseSettlement checks that a transaction's settlement amount,
// currency and exchange rate are stored exactly (zero- and three-decimal
// currencies included), filled in by a later sighting when the first had
// none, read back by the scan, and that another settlement amount is a
// conflict.
func exerciseSettlement(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	amt := func(v, cur string) money.Amount {
		a, err := money.Parse(v, cur)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	jpy := ledger.ProviderTxn{Provider: "stripe", ID: "ch_jpy", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: amt("1500", "JPY"), OccurredAt: T0, Settlement: amt("10.02", "USD"), ExchangeRate: "0.006682"}
	kwd := ledger.ProviderTxn{Provider: "stripe", ID: "ch_kwd", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: amt("12.345", "KWD"), OccurredAt: T0}
	src := func(ref string) ledger.Source { return ledger.Source{Channel: "api", Ref: ref, ReceivedAt: T0} }
	for _, x := range []ledger.ProviderTxn{jpy, kwd} {
		if _, err := s.UpsertProviderTxn(ctx, x, src(x.ID)); err != nil {
			t.Fatal(err)
		}
	}
	// A report row names the settlement the API listing did not.
	withSettle := kwd
	withSettle.Settlement, withSettle.ExchangeRate = amt("40.12", "USD"), "3.25"
	res, err := s.UpsertProviderTxn(ctx, withSettle, ledger.Source{Channel: "statement", Ref: "r1", ReceivedAt: T0})
	if err != nil || res.Conflict != "" || !res.Txn.Settlement.Equal(withSettle.Settlement) || res.Txn.ExchangeRate != "3.25" {
		t.Fatalf("fill in settlement = %+v, %v", res, err)
	}
	got, err := s.GetProviderTxn(ctx, "stripe", "ch_jpy")
	if err != nil || !got.Settlement.Equal(jpy.Settlement) || got.ExchangeRate != "0.006682" || !got.Amount.Equal(jpy.Amount) {
		t.Fatalf("get = %+v, %v", got, err)
	}
	other := jpy
	other.Settlement = amt("10.03", "USD")
	res, err = s.UpsertProviderTxn(ctx, other, ledger.Source{Channel: "statement", Ref: "r2", ReceivedAt: T0})
	if err != nil || res.Conflict == "" || !res.Txn.Settlement.Equal(jpy.Settlement) {
		t.Fatalf("other settlement = %+v, %v", res, err)
	}
	rows := map[string][3]string{}
	err = s.ScanProviderTxns(ctx, ledger.TxnFilter{Provider: "stripe", From: T0.Add(-time.Hour), To: T0.Add(time.Hour)},
		func(r *ledger.TxnRow) error {
			rows[string(r.ID)] = [3]string{string(r.Settlement), string(r.SettlementCurrency), string(r.ExchangeRate)}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if rows["ch_jpy"] != [3]string{"10.02", "USD", "0.006682"} || rows["ch_kwd"] != [3]string{"40.12", "USD", "3.25"} {
		t.Fatalf("scan = %v", rows)
	}
}
