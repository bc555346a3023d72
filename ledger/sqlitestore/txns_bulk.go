package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The staging table holds one batch of sightings inside the importing
// transaction; it lives in the connection's temp schema and is emptied
// before and after every batch. Its columns, stageCols and stageRow are the
// one place to extend when provider_txns gains a column (then add it to
// insertNewSQL too).
const stageTable = "temp.provider_txn_stage"

const stageDDL = `
	CREATE TEMP TABLE IF NOT EXISTS provider_txn_stage (
	    seq           INTEGER PRIMARY KEY,
	    provider      TEXT NOT NULL,
	    txn_id        TEXT NOT NULL,
	    type          TEXT NOT NULL,
	    status        TEXT NOT NULL,
	    amount        TEXT NOT NULL,
	    currency      TEXT NOT NULL,
	    occurred_at   TEXT NOT NULL,
	    reference     TEXT NOT NULL,
	    provider_ref  TEXT NOT NULL,
	    counterparty  TEXT NOT NULL,
	    linked_txn_id TEXT NOT NULL,
	    channel       TEXT NOT NULL,
	    ref           TEXT NOT NULL,
	    raw           BLOB,
	    received_at   TEXT NOT NULL,
	    settlement_amount   TEXT,
	    settlement_currency TEXT NOT NULL,
	    exchange_rate       TEXT NOT NULL,
	    ref_norm      TEXT NOT NULL,
	    conflict      INTEGER NOT NULL DEFAULT 0
	)`

const stageCols = `seq, provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	counterparty, linked_txn_id, channel, ref, raw, received_at, settlement_amount, settlement_currency, exchange_rate,
	ref_norm`

const numStageCols = 20

func stageRow(args []any, i int, s ledger.Sighting) []any {
	t, src := s.Txn, s.Source
	return append(args, i, t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Text(), t.Amount.Currency,
		ts(t.OccurredAt), t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, src.Channel, src.Ref, src.Raw,
		ts(src.ReceivedAt), nullAmount(t.Settlement), t.Settlement.Currency, t.ExchangeRate, ledger.NormalReference(t.Reference))
}

// stageChunk is how many rows one multi-row insert into the staging table
// carries (SQLite binds at most 32766 parameters).
const stageChunk = 1000

func stageInsertSQL(rows int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", numStageCols), ",") + ")"
	return `INSERT INTO ` + stageTable + ` (` + stageCols + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
}

// The set statements, run in order after the batch is staged. Each sees
// what the previous ones wrote. Staged rows are read in seq (rowid) order,
// so an insert that skips conflicting keys keeps the first of each.
const (
	insertNewSQL = `
	INSERT INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at, reference,
	    provider_ref, counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount, settlement_currency,
	    exchange_rate, ref_norm)
	SELECT provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	    counterparty, linked_txn_id, received_at, received_at, settlement_amount, settlement_currency, exchange_rate,
	    ref_norm
	FROM ` + stageTable + ` WHERE true ORDER BY seq
	ON CONFLICT (provider, txn_id) DO NOTHING
	RETURNING provider, txn_id`

	// findConflictsSQL finds the sightings that contradict the stored
	// transaction, with the stored values (see the PostgreSQL store for the
	// rule). Amounts are stored at the currency's exponent, so equal
	// amounts of one currency are equal text; times compare to the
	// microsecond.
	findConflictsSQL = `
	WITH j AS (
	    SELECT s.seq, s.provider, s.txn_id, s.status AS seen, p.status AS stored, p.type AS ptype,
	           p.amount AS pamount, p.currency AS pcurrency, p.occurred_at AS poccurred,
	           p.settlement_amount AS psettle, p.settlement_currency AS psettlecur,
	           (s.amount <> p.amount OR s.currency <> p.currency OR s.type <> p.type
	            OR (s.settlement_currency <> '' AND p.settlement_currency <> ''
	                AND (s.settlement_currency <> p.settlement_currency
	                     OR s.settlement_amount IS NOT p.settlement_amount))
	            OR (s.occurred_at <> p.occurred_at
	                AND abs((unixepoch(s.occurred_at) - unixepoch(p.occurred_at)) * 1000000
	                        + CAST(substr(s.occurred_at, 21, 6) AS INTEGER)
	                        - CAST(substr(p.occurred_at, 21, 6) AS INTEGER)) > 86400000000)) AS hard
	    FROM ` + stagedRows + ` JOIN provider_txns p ON p.provider = s.provider AND p.txn_id = s.txn_id
	), fin AS (
	    SELECT provider, txn_id, seen AS final, min(seq) AS fseq
	    FROM j WHERE NOT hard AND seen <> 'pending' AND stored = 'pending'
	    GROUP BY provider, txn_id
	)
	SELECT j.seq, j.ptype,
	           CASE WHEN j.stored <> 'pending' THEN j.stored WHEN fin.fseq < j.seq THEN fin.final ELSE j.stored END,
	       j.pamount, j.pcurrency, j.poccurred, j.psettle, j.psettlecur
	FROM j LEFT JOIN fin ON fin.provider = j.provider AND fin.txn_id = j.txn_id
	WHERE j.hard OR (j.seen <> 'pending'
	      AND j.seen <> CASE WHEN j.stored <> 'pending' THEN j.stored ELSE fin.final END)`

	// stagedRows stands for the staged rows the conflict and fill
	// statements read: all of them, or (onlyRows) those at the positions
	// listed in the JSON array ?1.
	stagedRows = "{{rows}}"
	allRows    = stageTable + " s"
	onlyRows   = "(SELECT * FROM " + stageTable + " WHERE seq IN (SELECT value FROM json_each(?1))) s"

	markConflictSQL = `UPDATE ` + stageTable + ` SET conflict = 1 WHERE seq = ?`

	// fillSQL fills empty fields (and a pending status) from the first
	// agreeing sighting that has them, in batch order; updated_at becomes
	// the latest receipt among the sightings that changed something.
	fillSQL = `
	WITH c AS (
	    SELECT s.* FROM ` + stagedRows + `
	    JOIN provider_txns p ON p.provider = s.provider AND p.txn_id = s.txn_id
	    WHERE NOT s.conflict
	      AND ((p.reference = '' AND s.reference <> '') OR (p.provider_ref = '' AND s.provider_ref <> '')
	           OR (p.counterparty = '' AND s.counterparty <> '') OR (p.linked_txn_id = '' AND s.linked_txn_id <> '')
	           OR (p.status = 'pending' AND s.status <> 'pending')
	           OR (p.settlement_currency = '' AND s.settlement_currency <> ''))
	), f AS (
	    SELECT provider, txn_id,
	        min(seq) FILTER (WHERE reference <> '') AS r,
	        min(seq) FILTER (WHERE provider_ref <> '') AS pr,
	        min(seq) FILTER (WHERE counterparty <> '') AS cp,
	        min(seq) FILTER (WHERE linked_txn_id <> '') AS l,
	        min(seq) FILTER (WHERE status <> 'pending') AS st,
	        min(seq) FILTER (WHERE settlement_currency <> '') AS se
	    FROM c GROUP BY provider, txn_id
	)
	UPDATE provider_txns AS p
	SET reference = CASE WHEN p.reference = '' AND f.r IS NOT NULL
	        THEN (SELECT reference FROM ` + stageTable + ` WHERE seq = f.r) ELSE p.reference END,
	    ref_norm = CASE WHEN p.reference = '' AND f.r IS NOT NULL
	        THEN (SELECT ref_norm FROM ` + stageTable + ` WHERE seq = f.r) ELSE p.ref_norm END,
	    provider_ref = CASE WHEN p.provider_ref = '' AND f.pr IS NOT NULL
	        THEN (SELECT provider_ref FROM ` + stageTable + ` WHERE seq = f.pr) ELSE p.provider_ref END,
	    counterparty = CASE WHEN p.counterparty = '' AND f.cp IS NOT NULL
	        THEN (SELECT counterparty FROM ` + stageTable + ` WHERE seq = f.cp) ELSE p.counterparty END,
	    linked_txn_id = CASE WHEN p.linked_txn_id = '' AND f.l IS NOT NULL
	        THEN (SELECT linked_txn_id FROM ` + stageTable + ` WHERE seq = f.l) ELSE p.linked_txn_id END,
	    status = CASE WHEN p.status = 'pending' AND f.st IS NOT NULL
	        THEN (SELECT status FROM ` + stageTable + ` WHERE seq = f.st) ELSE p.status END,
	    settlement_amount = CASE WHEN p.settlement_currency = '' AND f.se IS NOT NULL
	        THEN (SELECT settlement_amount FROM ` + stageTable + ` WHERE seq = f.se) ELSE p.settlement_amount END,
	    exchange_rate = CASE WHEN p.settlement_currency = '' AND f.se IS NOT NULL
	        THEN (SELECT exchange_rate FROM ` + stageTable + ` WHERE seq = f.se) ELSE p.exchange_rate END,
	    settlement_currency = CASE WHEN p.settlement_currency = '' AND f.se IS NOT NULL
	        THEN (SELECT settlement_currency FROM ` + stageTable + ` WHERE seq = f.se) ELSE p.settlement_currency END,
	    updated_at = (SELECT max(received_at) FROM ` + stageTable + ` WHERE seq IN (
	        CASE WHEN p.reference = '' THEN f.r END, CASE WHEN p.provider_ref = '' THEN f.pr END,
	        CASE WHEN p.counterparty = '' THEN f.cp END, CASE WHEN p.linked_txn_id = '' THEN f.l END,
	        CASE WHEN p.status = 'pending' THEN f.st END, CASE WHEN p.settlement_currency = '' THEN f.se END))
	FROM f
	WHERE p.provider = f.provider AND p.txn_id = f.txn_id
	  AND ((p.reference = '' AND f.r IS NOT NULL) OR (p.provider_ref = '' AND f.pr IS NOT NULL)
	       OR (p.counterparty = '' AND f.cp IS NOT NULL) OR (p.linked_txn_id = '' AND f.l IS NOT NULL)
	       OR (p.status = 'pending' AND f.st IS NOT NULL)
	       OR (p.settlement_currency = '' AND f.se IS NOT NULL))`

	insertSourcesSQL = `
	INSERT INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
	SELECT provider, txn_id, channel, ref, raw, received_at
	FROM ` + stageTable + ` WHERE NOT conflict ORDER BY seq
	ON CONFLICT DO NOTHING`

	quarantineConflictSQL = `
	INSERT INTO quarantine (source, origin, line, field, reason, raw, received_at)
	SELECT ?1, ?2, 0, ?3, ?4, ?5, ?6
	WHERE NOT EXISTS (SELECT 1 FROM quarantine
	    WHERE source = ?1 AND origin = ?2 AND field = ?3 AND reason = ?4 AND raw IS ?5)`

	clearStageSQL = `DELETE FROM ` + stageTable
)

// UpsertProviderTxns records the batch in the caller's transaction or one of
// its own: a probe sorts the sightings (see upsertSightings), the new
// transactions named once are inserted directly, and what has work is
// staged in chunks of multi-row inserts and applied with the set statements
// above.
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

// upsertSet applies the batch with the set statements alone: it stages every
// sighting and lets the statements sort out what is new, what conflicts and
// what fills. upsertSightings sends it only the sightings that may need it.
func upsertSet(ctx context.Context, tx *sql.Tx, batch []ledger.Sighting) (ledger.UpsertCounts, error) {
	var c ledger.UpsertCounts
	// The staging table lives in memory: a batch is a few megabytes, and a
	// temporary file would cost a system call per page. Changing the
	// setting drops temporary tables, so it is changed once per connection,
	// before the table exists.
	var store int
	if err := tx.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&store); err != nil {
		return c, err
	}
	if store != 2 {
		// Best effort: SQLite refuses the change inside a transaction once
		// temporary storage is open, and the table works on disk too.
		_, _ = tx.ExecContext(ctx, `PRAGMA temp_store = MEMORY`)
	}
	if _, err := tx.ExecContext(ctx, stageDDL); err != nil {
		return c, fmt.Errorf("create staging table: %w", err)
	}
	if _, err := tx.ExecContext(ctx, clearStageSQL); err != nil {
		return c, err
	}
	if err := stage(ctx, tx, batch); err != nil {
		return c, fmt.Errorf("stage sightings: %w", err)
	}
	created, err := insertNew(ctx, tx)
	if err != nil {
		return c, fmt.Errorf("insert new transactions: %w", err)
	}
	c.NewTxns = len(created)
	if meet := ledger.SightingsToMeet(batch, created); len(meet) > 0 {
		rows, args := allRows, []any(nil)
		if len(meet) < len(batch) {
			b, _ := json.Marshal(meet) // a slice of ints always marshals
			rows, args = onlyRows, []any{string(b)}
		}
		if c.Conflicts, err = findConflicts(ctx, tx, strings.Replace(findConflictsSQL, stagedRows, rows, 1), args, batch); err != nil {
			return c, fmt.Errorf("find conflicting sightings: %w", err)
		}
		if len(c.Conflicts) > 0 {
			if err := markConflicts(ctx, tx, batch, c.Conflicts); err != nil {
				return c, err
			}
		}
		if _, err := tx.ExecContext(ctx, strings.Replace(fillSQL, stagedRows, rows, 1), args...); err != nil {
			return c, fmt.Errorf("fill in transactions: %w", err)
		}
	}
	var r sql.Result
	if r, err = tx.ExecContext(ctx, insertSourcesSQL); err != nil {
		return c, fmt.Errorf("insert sources: %w", err)
	}
	n, _ := r.RowsAffected()
	c.NewSources = int(n)
	c.Duplicates = len(batch) - c.NewSources - len(c.Conflicts)
	if _, err := tx.ExecContext(ctx, clearStageSQL); err != nil {
		return c, err
	}
	return c, nil
}

// stage inserts the batch into the staging table, stageChunk rows per
// statement.
func stage(ctx context.Context, tx *sql.Tx, batch []ledger.Sighting) error {
	var full *sql.Stmt
	defer func() {
		if full != nil {
			_ = full.Close()
		}
	}()
	args := make([]any, 0, numStageCols*min(stageChunk, len(batch)))
	for lo := 0; lo < len(batch); lo += stageChunk {
		hi := min(lo+stageChunk, len(batch))
		args = args[:0]
		for i := lo; i < hi; i++ {
			args = stageRow(args, i, batch[i])
		}
		if hi-lo < stageChunk {
			if _, err := tx.ExecContext(ctx, stageInsertSQL(hi-lo), args...); err != nil {
				return err
			}
			continue
		}
		if full == nil {
			var err error
			if full, err = tx.PrepareContext(ctx, stageInsertSQL(stageChunk)); err != nil {
				return err
			}
		}
		if _, err := full.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// insertNew inserts the new transactions and returns their keys.
func insertNew(ctx context.Context, tx *sql.Tx) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, insertNewSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	created := map[string]bool{}
	for rows.Next() {
		var provider, id string
		if err := rows.Scan(&provider, &id); err != nil {
			return nil, err
		}
		created[ledger.TxnKey(provider, id)] = true
	}
	return created, rows.Err()
}

func findConflicts(ctx context.Context, tx *sql.Tx, query string, args []any, batch []ledger.Sighting) ([]ledger.SightingConflict, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ledger.SightingConflict
	for rows.Next() {
		var (
			seq                        int
			stored                     ledger.ProviderTxn
			amount, currency, occurred string
			settle                     sql.NullString
			settleCur                  string
		)
		if err := rows.Scan(&seq, &stored.Type, &stored.Status, &amount, &currency, &occurred, &settle, &settleCur); err != nil {
			return nil, err
		}
		if stored.Settlement, err = amountOf(settle, settleCur); err != nil {
			return nil, err
		}
		d, err := decimal.NewFromString(amount)
		if err != nil {
			return nil, fmt.Errorf("stored amount %q: %w", amount, err)
		}
		stored.Amount = money.Amount{Value: d, Currency: currency}
		if stored.OccurredAt, err = parseTS(occurred); err != nil {
			return nil, err
		}
		out = append(out, ledger.SightingConflict{Index: seq, Reason: ledger.Conflict(stored, batch[seq].Txn)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b ledger.SightingConflict) int { return a.Index - b.Index })
	return out, nil
}

// markConflicts flags the conflicting sightings in the staging table and
// quarantines each one not quarantined before.
func markConflicts(ctx context.Context, tx *sql.Tx, batch []ledger.Sighting, cs []ledger.SightingConflict) error {
	mark, err := tx.PrepareContext(ctx, markConflictSQL)
	if err != nil {
		return err
	}
	defer mark.Close()
	quarantine, err := tx.PrepareContext(ctx, quarantineConflictSQL)
	if err != nil {
		return err
	}
	defer quarantine.Close()
	for _, cf := range cs {
		if _, err := mark.ExecContext(ctx, cf.Index); err != nil {
			return fmt.Errorf("mark conflicting sighting: %w", err)
		}
		s := batch[cf.Index]
		q := ledger.ConflictItem(s.Txn, s.Source, cf.Reason)
		if _, err := quarantine.ExecContext(ctx, q.Source, q.Origin, q.Field, q.Reason, q.Raw, ts(q.At)); err != nil {
			return fmt.Errorf("quarantine conflicting sighting: %w", err)
		}
	}
	return nil
}
