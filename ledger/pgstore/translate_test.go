package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
)

// TestTranslateKeepsCause: a translated driver error is the ledger's
// sentinel and still the driver's error, for errors.Is and errors.As, and
// reads as before.
func TestTranslateKeepsCause(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := pgstore.Open(ctx, dbtest.PostgresURL(t), pgstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE dup (k text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO dup VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	_, dupErr := conn.Exec(ctx, `INSERT INTO dup VALUES ('a')`)
	err = ledger.Wrap("insert", "a", pgstore.Translate(dupErr))
	if !errors.Is(err, ledger.ErrConflict) {
		t.Errorf("%v: not ErrConflict", err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Errorf("%v: the *pgconn.PgError (23505) is not in the chain", err)
	}
	if want := `ledger: insert "a": conflict: duplicate key value violates unique constraint`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("text %q, want it to start %q", err, want)
	}

	var k string
	noRow := conn.QueryRow(ctx, `SELECT k FROM dup WHERE k = 'b'`).Scan(&k)
	err = pgstore.Translate(noRow)
	if !errors.Is(err, ledger.ErrNotFound) || !errors.Is(err, pgx.ErrNoRows) || err.Error() != "not found" {
		t.Errorf("%v: want ErrNotFound reading \"not found\" with pgx.ErrNoRows in the chain", err)
	}
}
