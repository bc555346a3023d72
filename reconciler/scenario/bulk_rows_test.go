package scenario_test

import (
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

// TestBulkRows: the row generators describe the same day as Intent and
// TxnsOf, and allocate nothing per row.
func TestBulkRows(t *testing.T) {
	bk := scenario.Bulk{Seed: 42, Provider: "mpesa", From: time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC), N: 20000}
	var buf scenario.RowBuf
	var row ledger.IntentRow
	for i := range bk.N {
		want := bk.Intent(i)
		refs := bk.IntentRow(i, &buf, &row)
		got, err := row.Intent()
		got.Provider = bk.Provider
		var gotRefs []string
		for _, r := range refs {
			if r != nil {
				gotRefs = append(gotRefs, string(r))
			}
		}
		if err != nil || got.Key != want.Key || got.Reference != want.Reference || got.Customer != want.Customer ||
			!got.Amount.Equal(want.Amount) || got.State != want.State || !got.CreatedAt.Equal(want.CreatedAt) ||
			!got.UpdatedAt.Equal(want.UpdatedAt) || !got.LeaseExpiresAt.Equal(want.LeaseExpiresAt) ||
			!slices.Equal(gotRefs, want.ProviderRefs) {
			t.Fatalf("intent %d: row %+v refs %q (%v), want %+v", i, got, gotRefs, err, want)
		}
		var wantTxns, gotTxns []ledger.ProviderTxn
		_ = bk.TxnsOf(i, func(x ledger.ProviderTxn) error { wantTxns = append(wantTxns, x); return nil })
		err = bk.TxnRowsOf(i, &buf, func(r *ledger.TxnRow) error {
			x, err := r.Txn()
			x.Provider = bk.Provider
			gotTxns = append(gotTxns, x)
			return err
		})
		if err != nil || len(gotTxns) != len(wantTxns) {
			t.Fatalf("txns of %d: %d rows (%v), want %d", i, len(gotTxns), err, len(wantTxns))
		}
		for k, w := range wantTxns {
			g := gotTxns[k]
			if g.ID != w.ID || g.Type != w.Type || g.Status != w.Status || !g.Amount.Equal(w.Amount) || !g.OccurredAt.Equal(w.OccurredAt) ||
				g.Reference != w.Reference || g.ProviderRef != w.ProviderRef || g.Counterparty != w.Counterparty || g.LinkedID != w.LinkedID {
				t.Fatalf("txn %d of %d: row %+v, want %+v", k, i, g, w)
			}
		}
	}
	n := testing.AllocsPerRun(1000, func() {
		for i := range 10 {
			bk.IntentRow(i, &buf, &row)
			_ = bk.TxnRowsOf(i, &buf, func(*ledger.TxnRow) error { return nil })
		}
	})
	if n != 0 {
		t.Fatalf("row generators allocate %.1f times per 10 rows", n)
	}
}
