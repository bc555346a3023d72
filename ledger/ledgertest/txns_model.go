package ledgertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
)

// exerciseTxnsAsModel holds UpsertProviderTxns to the TxnModel on random
// batches, small ones and ones past the sizes at which stores change their
// way of writing (256 and 1024 rows).
func exerciseTxnsAsModel(t *testing.T, newStore NewStore) {
	seed := Seed(t)
	t.Run("Small", func(t *testing.T) { t.Parallel(); RecordAsModel(t, newStore(t), seed, 30, 16, 40) })
	t.Run("Large", func(t *testing.T) { t.Parallel(); RecordAsModel(t, newStore(t), seed+1, 1500, 300, 1200) })
}

// RecordAsModel records random batches (SightingGen: sightings of ids
// transactions, up to one of sizes per batch, batches sent again whole or
// changed) through s, one to three batches per transaction or alone, and
// fails t unless every batch's counts and the books after every
// transaction are the TxnModel's.
func RecordAsModel(t *testing.T, s ledger.Store, seed uint64, ids int, sizes ...int) {
	t.Helper()
	ctx := context.Background()
	g := NewSightingGen(seed, 17, ids)
	m := NewTxnModel()
	var (
		sent [][]ledger.Sighting
		sum  ledger.UpsertCounts
	)
	for round := range 12 {
		group := make([][]ledger.Sighting, 1+g.R.IntN(3))
		for i := range group {
			group[i] = g.Next(sent, sizes...)
			sent = append(sent, group[i])
		}
		got := make([]ledger.UpsertCounts, len(group))
		var err error
		if len(group) == 1 && g.R.IntN(3) == 0 {
			got[0], err = s.UpsertProviderTxns(ctx, group[0])
		} else {
			err = s.InTx(ctx, func(tx ledger.Tx) error {
				for i, batch := range group {
					var err error
					if got[i], err = tx.UpsertProviderTxns(ctx, batch); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err != nil {
			t.Fatalf("seed %d round %d: %v", seed, round, err)
		}
		for i, batch := range group {
			if g, w := fmt.Sprintf("%+v", got[i]), fmt.Sprintf("%+v", m.Record(batch)); g != w {
				t.Fatalf("seed %d round %d batch %d of %d sightings: counts\n%s\nwant\n%s", seed, round, i, len(batch), g, w)
			}
			sum.Add(got[i])
		}
		for _, p := range GenProviders {
			if g, w := DumpProviderBooks(t, s, p), m.Dump(p); g != w {
				t.Fatalf("seed %d round %d: books of %s:\n%s\nwant\n%s", seed, round, p, g, w)
			}
		}
	}
	if sum.NewTxns == 0 || sum.NewSources == sum.NewTxns || sum.Duplicates == 0 || len(sum.Conflicts) == 0 {
		t.Fatalf("seed %d: the batches miss a case: %d new transactions, %d new sources, %d duplicates, %d conflicts",
			seed, sum.NewTxns, sum.NewSources, sum.Duplicates, len(sum.Conflicts))
	}
}
