package pgstore

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

// CopyAt exposes copyAt, the size from which a batch takes the fast path.
const CopyAt = copyAt

// errRollback ends the transactions of the helpers below.
var errRollback = errors.New("rolled back")

// ProbeClassify runs the probe and the classification in Go of a large
// batch, in a transaction rolled back, and returns the positions of the new
// rows and of the rows left to the set statements; the others are recorded.
func ProbeClassify(ctx context.Context, s *Store, batch []ledger.Sighting) (fresh, rest []int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		fresh, rest, _, _, err = classifyBatch(ctx, tx, batch)
		if err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	slices.Sort(fresh)
	return fresh, rest, err
}

// ClassifySQL stages the batch and returns the positions that classifySQL
// returns (the rows with something to do), in a transaction rolled back.
func ClassifySQL(ctx context.Context, s *Store, batch []ledger.Sighting) (work []int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, stageDDL); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{stageTable}, stageCols, pgx.CopyFromSlice(len(batch),
			func(i int) ([]any, error) { return stageRow(i, batch[i]), nil })); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, strings.Replace(classifySQL, stagedRows, allRows, 1))
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				seq   int32
				isNew bool
			)
			if err := rows.Scan(&seq, &isNew); err != nil {
				return err
			}
			work = append(work, int(seq))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	slices.Sort(work)
	return work, err
}

// NumericEqual exposes numericEqual.
var NumericEqual = numericEqual

// SetBeforeNewCopy sets the hook run between the probe of a large batch and
// the COPY of its new rows, until the returned function is called.
func SetBeforeNewCopy(f func(ctx context.Context, batch []ledger.Sighting)) (restore func()) {
	beforeNewCopy.Store(&f)
	return func() { beforeNewCopy.Store(nil) }
}

// SetStagedOnly sends large batches through the set statements alone (on)
// or takes the fast path (off, the default).
func SetStagedOnly(on bool) { stagedOnly.Store(on) }
