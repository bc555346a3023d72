package sqlitestore_test

import (
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
		// its transaction (the schema no longer checks it).
		t.Cleanup(func() {
			if n, err := sqlitestore.OrphanSources(s.(*sqlitestore.Store)); err != nil || n != 0 {
				t.Errorf("%d sightings without their transaction (%v)", n, err)
			}
		})
		return s
	})
}
