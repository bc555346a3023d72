package ledgertest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reconcilehq/reconcile/ledger"
)

// Exec runs one SQL statement (without parameters) on the store's own
// database, behind the ledger's back: tests use it to plant rows the
// ledger would refuse today (data stored before a limit existed).
func Exec(t testing.TB, s ledger.Store, query string) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch db := s.(type) {
	case interface{ Pool() *pgxpool.Pool }:
		_, err = db.Pool().Exec(ctx, query)
	case interface{ DB() *sql.DB }:
		_, err = db.DB().ExecContext(ctx, query)
	default:
		t.Fatalf("ledgertest.Exec: store %T has no database handle", s)
	}
	if err != nil {
		t.Fatalf("ledgertest.Exec %q: %v", query, err)
	}
}
