package reconciler

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestPrefetchTxns checks that prefetched rows are those of the scan, in
// its order, with their own copies of the bytes, through batches small
// enough to be reused many times; and that an error of the consumer ends
// the scan and leaves the store usable.
func TestPrefetchTxns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t)
	if cs, ok := s.(concurrentScanner); !ok || !cs.ConcurrentScans() {
		t.Fatalf("store %T does not take concurrent scans", s)
	}
	t0 := time.Date(2024, 2, 6, 9, 0, 0, 0, time.UTC)
	var batch []ledger.Sighting
	for i := range 50 {
		a, err := money.FromMinor(int64(100+i), "KES")
		if err != nil {
			t.Fatal(err)
		}
		tx := ledger.ProviderTxn{Provider: "mpesa", ID: fmt.Sprintf("SBX%05d", i), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
			Amount: a, OccurredAt: t0.Add(time.Duration(i) * time.Second), Reference: fmt.Sprintf("REF%d", i),
			ProviderRef: fmt.Sprintf("ws_CO_%d", i), Counterparty: "2547****0845"}
		if i%7 == 0 {
			tx.Type, tx.LinkedID = ledger.TxnReversal, "SBX00001"
			if tx.Amount, err = money.FromMinor(-int64(100+i), "KES"); err != nil {
				t.Fatal(err)
			}
		}
		batch = append(batch, ledger.Sighting{Txn: tx, Source: ledger.Source{Channel: "statement", Ref: tx.ID, ReceivedAt: t0}})
	}
	if _, err := s.UpsertProviderTxns(ctx, batch); err != nil {
		t.Fatal(err)
	}
	f := ledger.TxnFilter{Provider: "mpesa", From: t0, To: t0.Add(time.Hour)}
	var want []string
	err := s.ScanProviderTxns(ctx, f, func(r *ledger.TxnRow) error {
		want = append(want, rowText(r))
		return nil
	})
	if err != nil || len(want) != 50 {
		t.Fatalf("scanned %d rows: %v", len(want), err)
	}

	// Each row is compared while it is handed on: a batch's rows are
	// overwritten when the batch is reused.
	i := 0
	pf := prefetchTxns(ctx, s, f, 3, 2)
	err = pf.each(func(r *ledger.TxnRow) error {
		if got := rowText(r); got != want[i] {
			return fmt.Errorf("row %d: prefetched %s, scanned %s", i, got, want[i])
		}
		i++
		return nil
	})
	if err != nil || i != len(want) {
		t.Fatalf("after %d rows: %v", i, err)
	}

	stop := errors.New("stop")
	n := 0
	pf = prefetchTxns(ctx, s, f, 3, 2)
	err = pf.each(func(*ledger.TxnRow) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	pf.stop()
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("stopped with %v after %d rows", err, n)
	}
	if err := s.ScanProviderTxns(ctx, f, func(*ledger.TxnRow) error { return nil }); err != nil {
		t.Fatalf("store after a stopped prefetch: %v", err)
	}
}

func rowText(r *ledger.TxnRow) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%d|%s|%s|%s|%s|%v", r.ID, r.Reference, r.ProviderRef, r.Counterparty, r.LinkedID,
		r.Type, r.Status, r.Currency, r.Minor, r.OccurredAt.Format(time.RFC3339Nano), r.Settlement, r.SettlementCurrency,
		r.ExchangeRate, r.Bad)
}
