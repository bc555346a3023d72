package engine_test

import (
	"errors"
	"testing"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

// TestDrivers: each store and each of its transactions has its engine's
// driver, and a driver refuses a transaction of the other engine.
func TestDrivers(t *testing.T) {
	t.Parallel()
	pg, lite := dbtest.Postgres(t), dbtest.SQLite(t)
	for _, pair := range [][2]ledger.Store{{pg, lite}, {lite, pg}} {
		s, other := pair[0], pair[1]
		drv, err := engine.Of(s)
		if err != nil {
			t.Fatal(err)
		}
		if drv.Engine() != s.Engine() {
			t.Errorf("driver of %s store is %s", s.Engine(), drv.Engine())
		}
		c, err := drv.NewRiverClient(&river.Config{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if err := s.InTx(ctx, func(tx ledger.Tx) error {
			td, err := engine.Of(tx)
			if err != nil || td.Engine() != s.Engine() {
				t.Errorf("driver of a %s transaction: %v, %v", s.Engine(), td, err)
			}
			if _, err := c.InsertTx(ctx, tx, noopArgs{}, nil); err != nil {
				t.Errorf("%s: insert in own transaction: %v", s.Engine(), err)
			}
			return errors.New("roll back")
		}); err == nil {
			t.Fatal("no rollback")
		}
		_ = other.InTx(ctx, func(tx ledger.Tx) error {
			if _, err := c.InsertTx(ctx, tx, noopArgs{}, nil); !errors.Is(err, engine.ErrOtherEngine) {
				t.Errorf("%s driver took a %s transaction: %v", s.Engine(), other.Engine(), err)
			}
			return nil
		})
	}
	if _, err := engine.Of(struct{}{}); err == nil {
		t.Error("a value without a driver has one")
	}
}
