package sqlitestore

import (
	"context"
	"sync/atomic"

	"github.com/reconcilehq/reconcile/ledger"
)

// Recording a batch of sightings (UpsertProviderTxns) is three steps: read
// what is stored of the batch's keys (probeSightings), let the ledger
// decide what each sighting does (ledger.ClassifySightings), and write
// that (writePlan). A write transaction on SQLite excludes every other
// writer, so what the probe read stays true until the batch is written.
//
// After a batch whose keys were all new (the next part of a new file), the
// next batch of the transaction is not probed: it is classified as if
// nothing were stored and written in a savepoint. One stored key after all
// makes an insert fail on its primary key; the savepoint is rolled back and
// the batch probed and written again.

// upsertMemo is what a transaction's batches of sightings tell the next
// one.
type upsertMemo struct {
	// allNew says none of the keys of the transaction's last batch was
	// stored.
	allNew atomic.Bool
}

// upsertTest are knobs of UpsertProviderTxns for the package's tests
// (export_test.go); nil otherwise.
type upsertTest struct {
	probe ledger.ProbeMode
	// retries counts the batches written as new that met a stored key.
	retries atomic.Int64
}

// UpsertProviderTxns records the batch in the caller's transaction or one
// of its own (see above).
func (e executor) UpsertProviderTxns(ctx context.Context, batch []ledger.Sighting) (c ledger.UpsertCounts, err error) {
	if len(batch) == 0 {
		return c, nil
	}
	if err := ledger.ValidateSightings(batch); err != nil {
		return c, err
	}
	if e.tx == nil {
		err = e.atomically(ctx, func(x executor) error {
			c, err = x.UpsertProviderTxns(ctx, batch)
			return err
		})
		return c, err
	}
	c, err = e.upsertSightings(ctx, batch)
	return c, ledger.Wrap("upsert provider txns", batch[0].Txn.Provider, translate(err))
}

// upsertSightings probes (or guesses), classifies and writes the batch, in
// the executor's transaction.
func (e executor) upsertSightings(ctx context.Context, batch []ledger.Sighting) (ledger.UpsertCounts, error) {
	guess := e.guessNew()
	for {
		var probes []ledger.Probe
		if !guess {
			var err error
			if probes, err = e.probeSightings(ctx, batch); err != nil {
				return ledger.UpsertCounts{}, err
			}
		}
		plan := ledger.ClassifySightings(batch, probes)
		if !guess {
			if err := e.writePlan(ctx, batch, &plan); err != nil {
				return ledger.UpsertCounts{}, err
			}
		} else if ok, err := e.unlessStored(ctx, func() error { return e.writePlan(ctx, batch, &plan) }); err != nil {
			return ledger.UpsertCounts{}, err
		} else if !ok {
			if e.test != nil {
				e.test.retries.Add(1)
			}
			guess = false
			continue
		}
		e.txStmts.upsert.allNew.Store(plan.Found == 0)
		return plan.Counts(), nil
	}
}

// guessNew says whether the next batch is written without its probe.
func (e executor) guessNew() bool {
	mode := ledger.ProbeUnlessNew
	if e.test != nil {
		mode = e.test.probe
	}
	return mode.SkipProbe(e.txStmts.upsert.allNew.Load())
}
