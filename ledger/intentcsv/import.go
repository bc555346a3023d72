package intentcsv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// Result counts what an import did.
type Result struct {
	Rows     int
	Created  int
	Existing int
}

type rejected struct {
	perr *ledger.ParseError
	raw  []byte
}

var errRollback = errors.New("rollback")

// CreateFunc creates one intent inside the import's transaction; the charge
// service's CreateIntentTx also enqueues the charge of a pending intent.
type CreateFunc func(ctx context.Context, tx ledger.Tx, n ledger.NewIntent) (ledger.Intent, bool, error)

// Import reads the intents CSV r (named file in messages) into store in one
// transaction, creating each intent with create (tx.CreateIntent when nil).
// If any row is bad, nothing is imported, the bad rows are quarantined, and a
// *ledger.RejectedFileError lists them.
func Import(ctx context.Context, store ledger.Store, file string, r io.Reader, now time.Time, create CreateFunc) (Result, error) {
	if create == nil {
		create = func(ctx context.Context, tx ledger.Tx, n ledger.NewIntent) (ledger.Intent, bool, error) {
			return tx.CreateIntent(ctx, n)
		}
	}
	var (
		res  Result
		bad  []rejected
		fail error
	)
	err := store.InTx(ctx, func(tx ledger.Tx) error {
		reject := func(perr *ledger.ParseError, raw []byte) error {
			bad = append(bad, rejected{perr, raw})
			return nil
		}
		fail = Read(r, file, func(row Row) error {
			res.Rows++
			in, created, err := create(ctx, tx, row.Intent)
			var (
				kr *ledger.KeyReuseError
				fe *ledger.FieldError
			)
			switch {
			case errors.As(err, &kr):
				return reject(&ledger.ParseError{File: file, Line: row.Line, Field: "key", Err: kr}, row.Raw)
			case errors.As(err, &fe):
				return reject(&ledger.ParseError{File: file, Line: row.Line, Field: fe.Field, Err: fe.Err}, row.Raw)
			case err != nil:
				return err
			case !created:
				res.Existing++
				return nil
			}
			res.Created++
			for _, ref := range row.ProviderRefs {
				if _, err := tx.StartAttempt(ctx, ledger.AttemptParams{IntentKey: in.Key, ProviderRef: ref,
					Outcome: ledger.OutcomeImported, Now: row.Intent.CreatedAt}); err != nil {
					return err
				}
			}
			return nil
		}, reject)
		if fail != nil || len(bad) > 0 {
			return errRollback
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRollback) {
		return Result{}, fmt.Errorf("import intents %s: %w", file, err)
	}
	var perr *ledger.ParseError
	if fail != nil && !errors.As(fail, &perr) {
		return Result{}, fmt.Errorf("import intents %s: %w", file, fail)
	}
	if perr != nil && len(bad) == 0 {
		bad = append(bad, rejected{perr: perr})
	}
	if len(bad) == 0 {
		return res, nil
	}
	qerr := store.InTx(ctx, func(tx ledger.Tx) error {
		for _, b := range bad {
			if _, err := tx.AddQuarantine(ctx, ledger.QuarantineItem{Source: "intents_csv", Origin: file, Line: b.perr.Line,
				Field: b.perr.Field, Reason: b.perr.Err.Error(), Raw: b.raw, At: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if qerr != nil {
		return Result{}, fmt.Errorf("import intents %s: quarantine rejected rows: %w", file, qerr)
	}
	rej := &ledger.RejectedFileError{File: file}
	for _, b := range bad {
		rej.Problems = append(rej.Problems, b.perr)
	}
	return Result{}, rej
}
