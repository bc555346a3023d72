package sqlitestore

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/migrations"
	"github.com/reconcilehq/reconcile/money"
)

// TestTxStatementsAreReused guards the memory of long transactions: a
// statement is prepared once per transaction however often it runs, not once
// per call (each held until the commit).
func TestTxStatementsAreReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.exec(ctx, `CREATE TABLE intents (key TEXT PRIMARY KEY, provider TEXT NOT NULL, amount TEXT NOT NULL,
		currency TEXT NOT NULL, customer TEXT NOT NULL DEFAULT '', reference TEXT NOT NULL, metadata TEXT, state TEXT NOT NULL,
		claim_token INTEGER NOT NULL DEFAULT 0, claim_owner TEXT NOT NULL DEFAULT '', lease_expires_at TEXT,
		created_at TEXT NOT NULL, updated_at TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'charge',
		refund_of TEXT NOT NULL DEFAULT '', due_at TEXT, tolerance TEXT, ref_norm TEXT, account TEXT NOT NULL DEFAULT '')`); err != nil {
		t.Fatal(err)
	}
	amount, _ := money.Parse("10", "KES")
	var prepared int
	err = s.InTx(ctx, func(ltx ledger.Tx) error {
		for i := range 500 {
			n := ledger.NewIntent{IntentParams: ledger.IntentParams{Key: fmt.Sprintf("k%d", i), Provider: "mpesa", Amount: amount},
				CreatedAt: time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)}
			if _, _, err := ltx.CreateIntent(ctx, n); err != nil {
				return err
			}
		}
		prepared = len(ltx.(*tx).txStmts.m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if prepared > 3 {
		t.Fatalf("500 creations in one transaction hold %d statements, want one per distinct query", prepared)
	}
}

// TestImportStatementsBounded: an import whose chunks are part new, part
// stored (every chunk with another number of new intents) prepares a
// bounded number of statements, whatever the mix: the transaction keeps
// each until it ends.
func TestImportStatementsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, s.sqldb, migrations.SQLite(),
		goose.WithSlog(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	amount, _ := money.Parse("10", "KES")
	row := func(i int) ledger.ImportIntent {
		return ledger.ImportIntent{Line: i + 2, ProviderRefs: []string{fmt.Sprintf("ref-%d", i)},
			NewIntent: ledger.NewIntent{IntentParams: ledger.IntentParams{Key: fmt.Sprintf("k%05d", i), Provider: "mpesa",
				Amount: amount}, State: ledger.StateSucceeded, CreatedAt: time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)}}
	}
	const n = 40 * importChunk
	// First a part of every chunk, another for each...
	_, err = s.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: func(yield func(ledger.ImportIntent) bool) {
		for i := range n {
			if i%importChunk < 25*(i/importChunk) && !yield(row(i)) {
				return
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	// ...then all of them.
	var prepared int
	err = s.InTx(ctx, func(ltx ledger.Tx) error {
		res, err := ltx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: func(yield func(ledger.ImportIntent) bool) {
			for i := range n {
				if !yield(row(i)) {
					return
				}
			}
		}})
		if err != nil {
			return err
		}
		if res.Created+res.Existing != n || len(res.Refused) != 0 {
			t.Errorf("result %+v", res)
		}
		prepared = len(ltx.(*tx).txStmts.m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if prepared > 40 {
		t.Fatalf("an import of %d rows in mixed chunks holds %d statements", n, prepared)
	}
}
