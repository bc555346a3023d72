package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

// CopyAt exposes copyAt, the number of new rows from which they are
// written with COPY.
const CopyAt = copyAt

// Probe modes of UpsertOptions.
const (
	ProbeUnlessNew = ledger.ProbeUnlessNew
	ProbeAlways    = ledger.ProbeAlways
	ProbeNever     = ledger.ProbeNever
)

// UpsertOptions are the knobs of UpsertProviderTxns.
type UpsertOptions struct {
	// Probe says when a batch is probed: unless the last batch of its
	// transaction found none of its keys stored (the default), always, or
	// never before it is written as if its keys were new.
	Probe ledger.ProbeMode
	// BeforeWrite, when set, runs after a batch is classified and before
	// it is written, every time it is.
	BeforeWrite func(ctx context.Context, batch []ledger.Sighting)
}

// WithUpsertOptions returns a store on the pool of s whose
// UpsertProviderTxns follows opt. Close s, not it.
func WithUpsertOptions(s *Store, opt UpsertOptions) *Store {
	return &Store{executor: executor{db: s.pool, test: &upsertTest{probe: opt.Probe, beforeWrite: opt.BeforeWrite}}, pool: s.pool}
}

// UpsertRetries counts the batches a store of WithUpsertOptions wrote
// again because what they read had changed.
func UpsertRetries(s *Store) int64 { return s.test.retries.Load() }

// errRollback ends the transactions of the helpers below.
var errRollback = errors.New("rolled back")

// ProbeSightings runs the probe of batch in a transaction rolled back.
func ProbeSightings(ctx context.Context, s *Store, batch []ledger.Sighting) (probes []ledger.Probe, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if probes, err = probeSightings(ctx, tx, batch); err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	return probes, err
}
