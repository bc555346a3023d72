package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
)

// Translate exposes translate to the external tests.
var Translate = translate

// OrphanSources counts the sightings whose provider transaction is missing:
// none may be, since the foreign key was dropped for the one write path
// that guarantees it (UpsertProviderTxns).
func OrphanSources(s *Store) (int, error) {
	var n int
	err := s.pool.QueryRow(context.Background(), `
		SELECT count(*) FROM provider_txn_sources x
		WHERE NOT EXISTS (SELECT FROM provider_txns p WHERE p.provider = x.provider AND p.txn_id = x.txn_id)`).Scan(&n)
	return n, err
}

// OrphanAttempts counts the attempts whose intent is missing: none may be,
// since the foreign key was dropped for the write paths that guarantee it.
func OrphanAttempts(s *Store) (int, error) {
	var n int
	err := s.pool.QueryRow(context.Background(), `
		SELECT count(*) FROM attempts a WHERE NOT EXISTS (SELECT FROM intents i WHERE i.key = a.intent_key)`).Scan(&n)
	return n, err
}

// ImportOptions are the knobs of ImportIntentsWith.
type ImportOptions struct {
	// Batch is how many rows are written at a time.
	Batch int
	// Staged sends every row through the staged set statements.
	Staged bool
	// Probe looks every batch's keys up before writing it.
	Probe bool
	// BeforeCreate is called with the keys of a batch's new intents
	// before they are written.
	BeforeCreate func(ctx context.Context, keys []string) error
}

// ImportStats counts the batches that took another way than the first.
type ImportStats struct {
	// Fallbacks are batches whose new intents were staged after their
	// COPY met a key written by another transaction.
	Fallbacks int
	// GuessFailed are batches written without a look-up that met a
	// stored key.
	GuessFailed int
}

// ImportIntentsWith is ImportIntents in a transaction of its own, with the
// knobs of opt.
func ImportIntentsWith(ctx context.Context, s *Store, p ledger.ImportIntentsParams, opt ImportOptions) (res ledger.ImportIntentsResult, stats ImportStats, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		res, err = importIntentsTx(ctx, tx, p, importOptions{batch: opt.Batch, staged: opt.Staged, probe: opt.Probe,
			beforeCreate: opt.BeforeCreate, fallbacks: &stats.Fallbacks, guessFailed: &stats.GuessFailed})
		return err
	})
	return res, stats, err
}

// StaleMinor counts the intents and provider transactions whose
// amount_minor is not minor_units(amount, currency): none may be, since
// the writers fill the column (migration 0012).
func StaleMinor(s *Store) (int, error) {
	var n int
	err := s.pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM intents WHERE amount_minor IS DISTINCT FROM minor_units(amount, currency))
		     + (SELECT count(*) FROM provider_txns WHERE amount_minor IS DISTINCT FROM minor_units(amount, currency))`).Scan(&n)
	return n, err
}

// StaleRefNorm counts the intents and transactions whose ref_norm is not
// the normal form of their reference (ledger.NormalReference): the writers
// fill it, none may miss it.
func StaleRefNorm(s *Store) (int, error) {
	return ledgertest.StaleRefNorms(func(q string, fn func(string, *string)) error {
		rows, err := s.pool.Query(context.Background(), q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ref string
			var norm *string
			if err := rows.Scan(&ref, &norm); err != nil {
				return err
			}
			fn(ref, norm)
		}
		return rows.Err()
	})
}
