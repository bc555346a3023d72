package sqlitestore_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
	"github.com/reconcilehq/reconcile/ledger/sqlitestore"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	ledgertest.Exercise(t, func(t testing.TB) ledger.Store {
		s := dbtest.SQLite(t)
		// After every test of the suite, no sighting is left without
		// its transaction (the schema no longer checks it), and every
		// row keeps its table's constraints.
		t.Cleanup(func() {
			if n, err := sqlitestore.OrphanSources(s.(*sqlitestore.Store)); err != nil || n != 0 {
				t.Errorf("%d sightings without their transaction (%v)", n, err)
			}
			if n, err := sqlitestore.StaleRefNorm(s.(*sqlitestore.Store)); err != nil || n != 0 {
				t.Errorf("%d rows whose ref_norm is not the normal form of their reference (%v)", n, err)
			}
			if res, err := sqlitestore.IntegrityCheck(context.Background(), s.(*sqlitestore.Store)); err != nil || !slices.Equal(res, []string{"ok"}) {
				t.Errorf("integrity check: %q (%v)", res, err)
			}
		})
		return s
	})
}

// TestIntegrityCheckCatchesUncheckedRows proves the net of TestConformance:
// a row that breaks a CHECK constraint, written with the constraints off,
// is reported by IntegrityCheck.
func TestIntegrityCheckCatchesUncheckedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.SQLite(t).(*sqlitestore.Store)
	if res, err := sqlitestore.IntegrityCheck(ctx, s); err != nil || !slices.Equal(res, []string{"ok"}) {
		t.Fatalf("fresh books: integrity check %q (%v)", res, err)
	}
	// The pragma belongs to a connection: the writes on one, handed
	// back before the check (the store may hold a single connection).
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const insert = `INSERT INTO intents (key, provider, amount, currency, reference, state, created_at, updated_at)
		VALUES (?, 'mpesa', '10', 'KES', 'ref', 'lost', '2026-01-02T03:04:05.000000Z', '2026-01-02T03:04:05.000000Z')`
	// With the constraints on, the state is refused...
	if _, err := conn.ExecContext(ctx, insert, "checked"); err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
		t.Fatalf("insert with the constraints on: %v, want a CHECK constraint failure", err)
	}
	// ...with them off, it is written.
	if _, err := conn.ExecContext(ctx, `PRAGMA ignore_check_constraints = ON`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, insert, "unchecked"); err != nil {
		t.Fatalf("insert with the constraints off: %v", err)
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA ignore_check_constraints = OFF`); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := sqlitestore.IntegrityCheck(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(res, []string{"ok"}) || !slices.ContainsFunc(res, func(l string) bool {
		return strings.Contains(l, "CHECK constraint failed in intents")
	}) {
		t.Fatalf("integrity check after a row breaking a CHECK: %q, want the intents' CHECK reported", res)
	}
}
