package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// BenchmarkUpsertFindings measures a run's batched finding writes of 5,000
// findings: all new, all seen again unchanged (no history written), and all
// escalated (one history event each).
func BenchmarkUpsertFindings(b *testing.B) {
	const n = 5000
	t0 := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	batch := func(prefix string, risk int64) []ledger.Finding {
		fs := make([]ledger.Finding, n)
		for i := range fs {
			key := fmt.Sprintf("%s-%05d", prefix, i)
			fs[i] = ledger.Finding{ID: ledger.FindingID(ledger.KindMissingAtProvider, key, nil), Kind: ledger.KindMissingAtProvider,
				Severity: ledger.SeverityMedium, Provider: "mpesa", IntentKey: key, Expected: money.Amount{Value: decimal.New(100, 0), Currency: "KES"},
				AtRisk: money.Amount{Value: decimal.New(risk, 0), Currency: "KES"}, Detail: "missing", OccurredAt: t0}
		}
		return fs
	}
	ctx := context.Background()
	write := func(b *testing.B, s ledger.Store, fs []ledger.Finding, run int64) {
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			_, err := tx.UpsertFindings(ctx, fs, run, t0.Add(time.Duration(run)*time.Minute))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("new", func(b *testing.B) {
		s := dbtest.Postgres(b)
		for i := 0; b.Loop(); i++ {
			write(b, s, batch(fmt.Sprint("new", i), 100), int64(i+1))
		}
	})
	b.Run("seen_again", func(b *testing.B) {
		s := dbtest.Postgres(b)
		fs := batch("seen", 100)
		write(b, s, fs, 1)
		for i := 0; b.Loop(); i++ {
			write(b, s, fs, int64(i+2))
		}
	})
	b.Run("escalated", func(b *testing.B) {
		s := dbtest.Postgres(b)
		write(b, s, batch("esc", 100), 1)
		for i := 0; b.Loop(); i++ {
			write(b, s, batch("esc", int64(101+i)), int64(i+2))
		}
	})
}
