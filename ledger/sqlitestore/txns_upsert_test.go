package sqlitestore_test

import (
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
	"github.com/reconcilehq/reconcile/ledger/sqlitestore"
)

// TestUpsertPaths holds every way a batch of sightings is written to the
// rules (ledgertest.TxnModel): probed, written as new when the last batch
// of its transaction found no key stored, and written as new first
// always (every batch of stored keys then fails and is probed), on random
// batches small and larger than a multi-row statement.
func TestUpsertPaths(t *testing.T) {
	t.Parallel()
	seed := ledgertest.Seed(t)
	for _, c := range []struct {
		name string
		mode sqlitestore.UpsertOptions
	}{
		{"UnlessNew", sqlitestore.UpsertOptions{Probe: sqlitestore.ProbeUnlessNew}},
		{"Always", sqlitestore.UpsertOptions{Probe: sqlitestore.ProbeAlways}},
		{"Never", sqlitestore.UpsertOptions{Probe: sqlitestore.ProbeNever}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var retries int64
			sizes := [][]int{{8, 40}, {1100}}
			if dbtest.Race {
				// Under the race detector the conformance suite's large
				// batches (ProviderTxnBatches/AsModel/Large) stand for
				// these: the chunks of more than one multi-row statement
				// are the same whichever way a batch is probed.
				sizes = sizes[:1]
			}
			for i, size := range sizes {
				s := sqlitestore.WithUpsertOptions(dbtest.SQLite(t).(*sqlitestore.Store), c.mode)
				ledgertest.RecordAsModel(t, s, seed+uint64(i), 2*size[len(size)-1], size...)
				if n, err := sqlitestore.OrphanSources(s); err != nil || n != 0 {
					t.Fatalf("%d sightings without their transaction (%v)", n, err)
				}
				retries += sqlitestore.UpsertRetries(s)
			}
			// Probed batches never meet a stored key unread; batches always
			// written as new first do, as the model repeats keys. Whether a
			// batch guessed new meets one depends on the draw.
			switch {
			case c.mode.Probe == sqlitestore.ProbeAlways && retries != 0:
				t.Fatalf("%d probed batches written again", retries)
			case c.mode.Probe == sqlitestore.ProbeNever && retries == 0:
				t.Fatalf("no batch written as new first met a stored key: the retry path was not exercised")
			}
		})
	}
}
