package reconciler_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
	"github.com/reconcilehq/reconcile/reconciler"
)

// BenchmarkBankWindow times a bank account's run (dry, on PostgreSQL) over
// a window of BANK_BENCH_PAYOUTS Stripe payouts (default 10,000) of 100
// items each: a charge per item, in the books and carried by its payout,
// each payout arriving in a credit that names it. The run reads the
// payouts, their million items and their transactions, the credits with
// their entries, and the charges due in the window with their payouts.
// Seeding is not timed.
func BenchmarkBankWindow(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("BANK_BENCH_PAYOUTS")); err == nil && v > 0 {
		n = v
	}
	const items = 100
	ctx := context.Background()
	s := dbtest.Postgres(b)
	day := time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC) // a Wednesday
	usd := func(minor int64) money.Amount { a, _ := money.FromMinor(minor, "USD"); return a }
	var batch []ledger.Sighting
	var its []ledger.PayoutItem
	var payouts []ledger.Payout
	flush := func() {
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			if _, err := tx.UpsertProviderTxns(ctx, batch); err != nil {
				return err
			}
			if _, err := tx.RecordPayouts(ctx, payouts); err != nil {
				return err
			}
			_, err := tx.RecordPayoutItems(ctx, its)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		batch, its, payouts = batch[:0], its[:0], payouts[:0]
	}
	sight := func(t ledger.ProviderTxn) {
		batch = append(batch, ledger.Sighting{Txn: t, Source: ledger.Source{Channel: "bench", Ref: t.ID, ReceivedAt: day}})
	}
	var entries []ledger.BankEntry
	for i := range n {
		po := fmt.Sprintf("po_bench%08d", i)
		for j := range items {
			ch := fmt.Sprintf("ch_bench%08d%03d", i, j)
			sight(ledger.ProviderTxn{Provider: "stripe", ID: ch, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: usd(1000),
				OccurredAt: day.AddDate(0, 0, -2).Add(time.Duration(i) * time.Second)})
			its = append(its, ledger.PayoutItem{Provider: "stripe", PayoutID: po, TxnID: ch, FirstSeenAt: day})
		}
		sight(ledger.ProviderTxn{Provider: "stripe", ID: po, Type: ledger.TxnPayout, Status: ledger.TxnSucceeded, Amount: usd(items * 1000),
			OccurredAt: day.Add(-6 * time.Hour)})
		payouts = append(payouts, ledger.Payout{Provider: "stripe", ID: po, InitiatedAt: day.Add(-6 * time.Hour), ArrivalAt: day, FirstSeenAt: day})
		id := fmt.Sprintf("ACH%08d@BENCH.%d", i, i)
		sight(ledger.ProviderTxn{Provider: "bank:bench", ID: id, Type: ledger.TxnBankCredit, Status: ledger.TxnSucceeded,
			Amount: usd(items * 1000), OccurredAt: day.Add(4 * time.Hour), Reference: po, ProviderRef: po})
		entries = append(entries, ledger.BankEntry{Provider: "bank:bench", TxnID: id, Statement: "BENCH", Index: i + 1, BookingDate: day,
			ValueDate: day, BankRef: fmt.Sprintf("ACH%08d", i), EndToEndID: po, Text: "STRIPE PAYOUT " + po})
		if len(batch) >= 10000 {
			flush()
		}
	}
	flush()
	for start := 0; start < len(entries); start += 10000 {
		if _, err := s.RecordBankEntries(ctx, entries[start:min(start+10000, len(entries))]); err != nil {
			b.Fatal(err)
		}
	}
	acct := &bankaccount.Account{Name: "bench", Number: "1", Currency: "USD", Zone: time.UTC, Format: bankaccount.FormatBAI2,
		Sources: []bankaccount.Source{{Provider: "stripe", Descriptor: nil, ShortCode: "", PayoutDays: 2}}}
	rec := reconciler.New(s, reconciler.Config{Clock: func() time.Time { return day.AddDate(0, 0, 14) },
		Banks: map[string]*bankaccount.Account{acct.Provider(): acct}})
	b.ResetTimer()
	for range b.N {
		out, err := rec.Run(ctx, reconciler.Params{Provider: acct.Provider(), From: day, To: day.AddDate(0, 0, 1), DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		if out.Bank.Payouts != n || out.Bank.Arrived != n || len(out.Findings) != 0 {
			b.Fatalf("%+v, %d findings", out.Bank, len(out.Findings))
		}
	}
	b.ReportMetric(float64(n*items)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
