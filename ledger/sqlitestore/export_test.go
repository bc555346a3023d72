package sqlitestore

import (
	"context"
	"fmt"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
)

// OrphanSources counts the sightings whose provider transaction is missing:
// none may be, since the foreign key was dropped for the one write path
// that guarantees it (UpsertProviderTxns).
func OrphanSources(s *Store) (int, error) {
	var n int
	err := s.sqldb.QueryRowContext(context.Background(), `
		SELECT count(*) FROM provider_txn_sources x
		WHERE NOT EXISTS (SELECT 1 FROM provider_txns p WHERE p.provider = x.provider AND p.txn_id = x.txn_id)`).Scan(&n)
	return n, err
}

// IntegrityCheck runs PRAGMA integrity_check over the whole database and
// returns what it reports: "ok" alone when nothing is wrong. Besides the
// structure of the file, the SQLite the driver embeds checks every row
// against its table's CHECK and NOT NULL constraints and, in a STRICT
// table, its column types: a net under every write path the conformance
// suite runs.
func IntegrityCheck(ctx context.Context, s *Store) ([]string, error) {
	rows, err := s.sqldb.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	return out, rows.Err()
}

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
}

// WithUpsertOptions returns a store on the database of s whose
// UpsertProviderTxns follows opt.
func WithUpsertOptions(s *Store, opt UpsertOptions) *Store {
	c := &Store{executor: s.executor, sqldb: s.sqldb}
	c.test = &upsertTest{probe: opt.Probe}
	return c
}

// UpsertRetries counts the batches a store of WithUpsertOptions wrote as if
// their keys were new that met a stored key.
func UpsertRetries(s *Store) int64 { return s.test.retries.Load() }

// ImportOptions are the knobs of ImportIntentsWith.
type ImportOptions struct {
	// Chunk is how many rows are read and written at a time.
	Chunk int
	// Probe reads the stored intents of every chunk's keys before writing
	// it, never guessing that none is stored.
	Probe bool
}

// ImportIntentsWith is ImportIntents in a transaction of its own with the
// given knobs. It also returns how many chunks written without reading
// their keys first met a stored key.
func ImportIntentsWith(ctx context.Context, s *Store, p ledger.ImportIntentsParams, opt ImportOptions) (ledger.ImportIntentsResult, int, error) {
	var failed int
	res, err := s.importIntentsWith(ctx, p, importOptions{chunk: opt.Chunk, probe: opt.Probe, guessFailed: &failed})
	return res, failed, err
}

// DumpIntents returns every stored intent and attempt as text, in key
// order, for comparing two stores.
func DumpIntents(ctx context.Context, s *Store) ([]string, error) {
	return dumpQueries(ctx, s, `SELECT * FROM intents ORDER BY key`,
		`SELECT intent_key, number, claim_token, provider_ref, outcome, error, started_at, finished_at FROM attempts ORDER BY intent_key, number`)
}

// Dump returns every stored provider transaction, sighting and quarantine
// item as text, in key order, for comparing two stores.
func Dump(ctx context.Context, s *Store) ([]string, error) {
	return dumpQueries(ctx, s,
		`SELECT `+txnCols+` FROM provider_txns ORDER BY provider, txn_id`,
		`SELECT provider, txn_id, channel, ref, raw, received_at FROM provider_txn_sources ORDER BY provider, txn_id, channel, ref`,
		`SELECT id, source, origin, line, field, reason, raw, received_at FROM quarantine ORDER BY id`)
}

func dumpQueries(ctx context.Context, s *Store, queries ...string) ([]string, error) {
	var out []string
	for _, q := range queries {
		rows, err := s.sqldb.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, fmt.Sprintf("%q", vals))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// StaleRefNorm counts the intents and transactions whose ref_norm is not
// the normal form of their reference (ledger.NormalReference): the writers
// fill it, none may miss it.
func StaleRefNorm(s *Store) (int, error) {
	return ledgertest.StaleRefNorms(func(q string, fn func(string, *string)) error {
		rows, err := s.sqldb.QueryContext(context.Background(), q)
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
