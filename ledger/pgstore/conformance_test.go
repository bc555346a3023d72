package pgstore_test

import (
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	ledgertest.Exercise(t, func(t testing.TB) ledger.Store {
		s := dbtest.Postgres(t)
		// After every test of the suite, no sighting is left without
		// its transaction and no attempt without its intent (the schema
		// no longer checks either), and every amount_minor is the one
		// minor_units computes (the writers fill it).
		t.Cleanup(func() {
			if n, err := pgstore.OrphanSources(s.(*pgstore.Store)); err != nil || n != 0 {
				t.Errorf("%d sightings without their transaction (%v)", n, err)
			}
			if n, err := pgstore.OrphanAttempts(s.(*pgstore.Store)); err != nil || n != 0 {
				t.Errorf("%d attempts without their intent (%v)", n, err)
			}
			if n, err := pgstore.StaleMinor(s.(*pgstore.Store)); err != nil || n != 0 {
				t.Errorf("%d rows whose amount_minor is not minor_units(amount, currency) (%v)", n, err)
			}
			if n, err := pgstore.StaleRefNorm(s.(*pgstore.Store)); err != nil || n != 0 {
				t.Errorf("%d rows whose ref_norm is not the normal form of their reference (%v)", n, err)
			}
		})
		return s
	})
}
