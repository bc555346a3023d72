package pgstore

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

// Recording a batch of sightings (UpsertProviderTxns) is three steps: read
// what is stored of the batch's keys (probeSightings: one round trip, each
// key a primary-key look-up), let the ledger decide what each sighting does
// (ledger.ClassifySightings), and write that (writePlan) in a savepoint:
// the new transactions and sources by binary COPY when there are many, else
// by inserts from arrays, the fills of stored transactions by one update,
// the conflicts into the quarantine. A re-import of a known file is the
// probe and no write.
//
// Other transactions write meanwhile. Two things tell that what the probe
// read is no longer true, and both undo the batch's writes (rollback to the
// savepoint) for it to be probed and written again:
//   - an insert meets a key stored since (a unique violation: the other
//     transaction committed it, or waited for this one's); a new key or
//     source is inserted without ON CONFLICT for that;
//   - a fill finds one of the fields it fills no longer empty, or a
//     transaction that a sighting contradicts has had its pending status
//     or empty settlement filled (its reason would say otherwise). The
//     update holds the rows it fills until the transaction ends, so the
//     contradictions and fills decided from what the probe read stay true
//     of them. Any other change to a transaction since the probe is one
//     that none of the batch's sightings meets: the batch's effect is the
//     same before or after it.
//
// After a batch in a transaction whose keys were all new (the next part of
// a new file), the next one is written without its probe, as if none of its
// keys were stored: a stored key makes its insert fail, and it is probed
// after all.

// maxAttempts bounds how many times a batch is written again after other
// transactions changed what it read.
const maxAttempts = 16

// upsertMemo is what a transaction's batches of sightings tell the next
// one.
type upsertMemo struct {
	// allNew says none of the keys of the transaction's last batch was
	// stored.
	allNew bool
	// bankStored says a COPY of the transaction's bank entries met stored
	// ones.
	bankStored bool
}

// upsertTest are knobs of UpsertProviderTxns for the package's tests
// (export_test.go); nil otherwise.
type upsertTest struct {
	probe ledger.ProbeMode
	// beforeWrite, when set, runs after a batch is classified and before
	// it is written.
	beforeWrite func(ctx context.Context, batch []ledger.Sighting)
	// retries counts the batches written again.
	retries atomic.Int64
}

// UpsertProviderTxns records the batch (see above) in the caller's
// transaction or one of its own.
func (e executor) UpsertProviderTxns(ctx context.Context, batch []ledger.Sighting) (ledger.UpsertCounts, error) {
	return e.upsertProviderTxns(ctx, batch, nil, nil)
}

// UpsertProviderTxns is the executor's, told what the transaction's last
// batch found (upsertMemo).
func (t *tx) UpsertProviderTxns(ctx context.Context, batch []ledger.Sighting) (ledger.UpsertCounts, error) {
	return t.upsertProviderTxns(ctx, batch, nil, &t.memo)
}

// upsertProviderTxns is UpsertProviderTxns that, when readBack is set, also
// reads the first sighting's stored transaction into it in the same round
// trip as the writes.
func (e executor) upsertProviderTxns(ctx context.Context, batch []ledger.Sighting, readBack *ledger.ProviderTxn, memo *upsertMemo) (ledger.UpsertCounts, error) {
	if len(batch) == 0 {
		return ledger.UpsertCounts{}, nil
	}
	if err := ledger.ValidateSightings(batch); err != nil {
		return ledger.UpsertCounts{}, err
	}
	if ptx, ok := e.db.(pgx.Tx); ok {
		c, err := e.upsertSightings(ctx, ptx, batch, readBack, memo)
		return c, ledger.Wrap("upsert provider txns", batch[0].Txn.Provider, translate(err))
	}
	db, ok := e.db.(interface {
		Begin(ctx context.Context) (pgx.Tx, error)
	})
	if !ok {
		return ledger.UpsertCounts{}, fmt.Errorf("pgstore: cannot begin a transaction on %T", e.db)
	}
	var c ledger.UpsertCounts
	err := pgx.BeginFunc(ctx, db, func(ptx pgx.Tx) error {
		var err error
		c, err = e.upsertSightings(ctx, ptx, batch, readBack, nil)
		return err
	})
	return c, ledger.Wrap("upsert provider txns", batch[0].Txn.Provider, translate(err))
}

// upsertSightings probes (or guesses), classifies and writes the batch in
// tx, again while what it read changes under it.
func (e executor) upsertSightings(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, readBack *ledger.ProviderTxn, memo *upsertMemo) (ledger.UpsertCounts, error) {
	guess := e.guessNew(memo)
	for attempt := 1; ; attempt++ {
		var probes []ledger.Probe
		if !guess {
			var err error
			if probes, err = probeSightings(ctx, tx, batch); err != nil {
				return ledger.UpsertCounts{}, err
			}
		}
		plan := ledger.ClassifySightings(batch, probes)
		if e.test != nil && e.test.beforeWrite != nil {
			e.test.beforeWrite(ctx, batch)
		}
		written, err := writePlan(ctx, tx, batch, probes, &plan, readBack)
		if err != nil {
			return ledger.UpsertCounts{}, err
		}
		if !written {
			if attempt == maxAttempts {
				return ledger.UpsertCounts{}, fmt.Errorf("other transactions kept changing the batch's %d transactions: gave up after %d attempts",
					len(batch), attempt)
			}
			if e.test != nil {
				e.test.retries.Add(1)
			}
			guess = false
			continue
		}
		if memo != nil {
			memo.allNew = plan.Found == 0
		}
		return plan.Counts(), nil
	}
}

// guessNew says whether the batch is first written without its probe.
func (e executor) guessNew(memo *upsertMemo) bool {
	mode := ledger.ProbeUnlessNew
	if e.test != nil {
		mode = e.test.probe
	}
	return mode.SkipProbe(memo != nil && memo.allNew)
}
