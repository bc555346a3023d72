package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The staging table holds one batch of sightings inside the importing
// transaction. It is created once per session and emptied by every commit
// (ON COMMIT DELETE ROWS) and after every batch: creating a table per
// transaction (ON COMMIT DROP) costs a file and catalog rows each time,
// twenty times the cost of recording one callback. Its columns, stageCols,
// stageRow and stageArraysSQL are the one place to extend when
// provider_txns gains a column (then add it to insertNewSQL too).
const stageTable = "provider_txn_stage"

const stageDDL = `
	CREATE TEMP TABLE IF NOT EXISTS ` + stageTable + ` (
	    seq           integer NOT NULL,
	    provider      text NOT NULL,
	    txn_id        text NOT NULL,
	    type          text NOT NULL,
	    status        text NOT NULL,
	    amount        numeric NOT NULL,
	    currency      text NOT NULL,
	    occurred_at   timestamptz NOT NULL,
	    reference     text NOT NULL,
	    provider_ref  text NOT NULL,
	    counterparty  text NOT NULL,
	    linked_txn_id text NOT NULL,
	    channel       text NOT NULL,
	    ref           text NOT NULL,
	    raw           bytea,
	    received_at   timestamptz NOT NULL,
	    settlement_amount   numeric,
	    settlement_currency text NOT NULL,
	    exchange_rate       text NOT NULL,
	    ref_norm      text NOT NULL,
	    conflict      boolean NOT NULL DEFAULT false
	)`

// stageArraysSQL stages a small batch from one array per column, in the
// same round trip as the set statements.
const stageArraysSQL = `
	INSERT INTO ` + stageTable + ` (seq, provider, txn_id, type, status, amount, currency, occurred_at, reference,
	    provider_ref, counterparty, linked_txn_id, channel, ref, raw, received_at, settlement_amount,
	    settlement_currency, exchange_rate, ref_norm)
	SELECT seq, provider, txn_id, type, status, amount::numeric, currency, occurred_at, reference, provider_ref,
	    counterparty, linked_txn_id, channel, ref, raw, received_at, settlement_amount::numeric,
	    settlement_currency, exchange_rate, ref_norm
	FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
	    $8::timestamptz[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
	    $15::bytea[], $16::timestamptz[], $17::text[], $18::text[], $19::text[], $20::text[])
	    AS s(seq, provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	         counterparty, linked_txn_id, channel, ref, raw, received_at, settlement_amount, settlement_currency,
	         exchange_rate, ref_norm)`

// stageArrays returns the arguments of stageArraysSQL.
func stageArrays(batch []ledger.Sighting) []any {
	n := len(batch)
	var (
		seq                                                        = make([]int32, n)
		provider, id, typ, status, amount, currency                = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		reference, providerRef, counterparty, linked, channel, ref = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		occurred, received                                         = make([]time.Time, n), make([]time.Time, n)
		raw                                                        = make([][]byte, n)
		settle                                                     = make([]*string, n)
		settleCur, rate, norm                                      = make([]string, n), make([]string, n), make([]string, n)
	)
	for i, s := range batch {
		t, src := s.Txn, s.Source
		seq[i], provider[i], id[i], typ[i], status[i] = int32(i), t.Provider, t.ID, string(t.Type), string(t.Status)
		amount[i], currency[i], occurred[i] = t.Amount.Value.String(), t.Amount.Currency, utc(t.OccurredAt)
		reference[i], providerRef[i], counterparty[i], linked[i] = t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID
		channel[i], ref[i], raw[i], received[i] = src.Channel, src.Ref, src.Raw, utc(src.ReceivedAt)
		if !t.Settlement.IsZero() {
			v := t.Settlement.Value.String()
			settle[i] = &v
		}
		settleCur[i], rate[i], norm[i] = t.Settlement.Currency, t.ExchangeRate, ledger.NormalReference(t.Reference)
	}
	return []any{seq, provider, id, typ, status, amount, currency, occurred, reference, providerRef, counterparty,
		linked, channel, ref, raw, received, settle, settleCur, rate, norm}
}

// copyAt is the batch size from which a batch is staged with COPY (one
// round trip more) rather than from arrays.
const copyAt = 256

var stageCols = []string{"seq", "provider", "txn_id", "type", "status", "amount", "currency", "occurred_at",
	"reference", "provider_ref", "counterparty", "linked_txn_id", "channel", "ref", "raw", "received_at",
	"settlement_amount", "settlement_currency", "exchange_rate", "ref_norm"}

func stageRow(i int, s ledger.Sighting) []any {
	t, src := s.Txn, s.Source
	return []any{int32(i), t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Value, t.Amount.Currency,
		utc(t.OccurredAt), t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, src.Channel, src.Ref, src.Raw,
		utc(src.ReceivedAt), settlementValue(t.Settlement), t.Settlement.Currency, t.ExchangeRate,
		ledger.NormalReference(t.Reference)}
}

// The set statements, run in order in one round trip after the batch is
// copied into the staging table. Each sees what the previous ones wrote.
// The statements join each staged row to its stored transaction through a
// LATERAL primary-key probe, so that the plan is the same at any size of the
// table and of the batch: a hash join would read the whole table for every
// batch (quadratic in the file's size), and the planner cannot know better
// inside the transaction that grows the table. The staging table is not
// analysed (ANALYZE cost more than it saved): its size is estimated from
// its pages, and the only joins that depend on it are within the batch.
const (
	// insertNewSQL inserts each unknown transaction from its first sighting,
	// in key order so that concurrent imports lock in the same order: the
	// bytewise order (COLLATE "C") in which the COPY of a large batch's new
	// rows writes them too (compareKeys).
	insertNewSQL = `
	INSERT INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at, reference,
	    provider_ref, counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount,
	    settlement_currency, exchange_rate, amount_minor, ref_norm)
	SELECT DISTINCT ON (provider COLLATE "C", txn_id COLLATE "C") provider, txn_id, type, status, amount,
	    currency, occurred_at, reference, provider_ref, counterparty, linked_txn_id, received_at, received_at,
	    settlement_amount, settlement_currency, exchange_rate, minor_units(amount, currency), ref_norm
	FROM ` + stagedRows + `
	ORDER BY provider COLLATE "C", txn_id COLLATE "C", seq
	ON CONFLICT (provider, txn_id) DO NOTHING
	RETURNING provider, txn_id`

	// classifySQL returns the staged rows that have something to do: a
	// transaction not stored yet (new), a field that contradicts the stored
	// one or fills one of its empty fields, or a sighting not recorded. The
	// other rows are re-sightings that agree with what is stored and are
	// recorded already: no statement below would change anything for them
	// (they neither conflict nor fill, and their source exists), so a
	// re-import of a known file is this one probe join and no write. Each
	// row is probed by primary key, in provider_txns and, only when the
	// transaction agrees, in provider_txn_sources.
	classifySQL = `
	SELECT s.seq, p.status IS NULL
	FROM ` + stagedRows + `
	LEFT JOIN LATERAL (
	    SELECT p.type, p.status, p.amount, p.currency, p.occurred_at, p.reference, p.provider_ref, p.counterparty,
	           p.linked_txn_id, p.settlement_amount, p.settlement_currency
	    FROM provider_txns p WHERE p.provider = s.provider AND p.txn_id = s.txn_id LIMIT 1) p ON true
	WHERE p.status IS NULL
	   OR s.amount <> p.amount OR s.currency <> p.currency OR s.type <> p.type
	   OR s.occurred_at > p.occurred_at + interval '24 hours' OR s.occurred_at < p.occurred_at - interval '24 hours'
	   OR (s.status <> 'pending' AND s.status <> p.status)
	   OR (s.settlement_currency <> '' AND (s.settlement_currency <> p.settlement_currency
	       OR s.settlement_amount IS DISTINCT FROM p.settlement_amount))
	   OR (p.reference = '' AND s.reference <> '') OR (p.provider_ref = '' AND s.provider_ref <> '')
	   OR (p.counterparty = '' AND s.counterparty <> '') OR (p.linked_txn_id = '' AND s.linked_txn_id <> '')
	   OR NOT EXISTS (SELECT 1 FROM provider_txn_sources x WHERE x.provider = s.provider AND x.txn_id = s.txn_id
	                  AND x.channel = s.channel AND x.ref = s.ref)`

	// markConflictsSQL flags the sightings that contradict the stored
	// transaction and returns them with the stored values. Amount, currency,
	// type and time never change once stored; the status may go from
	// pending to final once, to the first final status of an agreeing
	// sighting in batch order (final, at fseq), so a final status conflicts
	// when it differs from the stored final one or from that first one. The
	// stored status returned is the one a sighting met at its place in the
	// batch.
	markConflictsSQL = `
	WITH j AS (
	    SELECT s.seq, s.provider, s.txn_id, s.status AS seen, p.status AS stored, p.type, p.amount, p.currency,
	           p.occurred_at, p.settlement_amount, p.settlement_currency,
	           (s.amount <> p.amount OR s.currency <> p.currency OR s.type <> p.type
	            OR s.occurred_at > p.occurred_at + interval '24 hours'
	            OR s.occurred_at < p.occurred_at - interval '24 hours'
	            OR (s.settlement_currency <> '' AND p.settlement_currency <> ''
	                AND (s.settlement_currency <> p.settlement_currency
	                     OR s.settlement_amount IS DISTINCT FROM p.settlement_amount))) AS hard
	    FROM ` + stagedRows + `
	    CROSS JOIN LATERAL (
	        SELECT p.status, p.type, p.amount, p.currency, p.occurred_at, p.settlement_amount,
	               p.settlement_currency FROM provider_txns p
	        WHERE p.provider = s.provider AND p.txn_id = s.txn_id LIMIT 1) p
	), fin AS (
	    SELECT DISTINCT ON (provider, txn_id) provider, txn_id, seen AS final, seq AS fseq
	    FROM j WHERE NOT hard AND seen <> 'pending' AND stored = 'pending'
	    ORDER BY provider, txn_id, seq
	), c AS (
	    SELECT j.seq, j.type,
	           CASE WHEN j.stored <> 'pending' THEN j.stored WHEN fin.fseq < j.seq THEN fin.final ELSE j.stored END AS status,
	           j.amount, j.currency, j.occurred_at, j.settlement_amount, j.settlement_currency
	    FROM j LEFT JOIN fin ON fin.provider = j.provider AND fin.txn_id = j.txn_id
	    WHERE j.hard OR (j.seen <> 'pending'
	          AND j.seen <> CASE WHEN j.stored <> 'pending' THEN j.stored ELSE fin.final END)
	)
	UPDATE ` + stageTable + ` s SET conflict = true FROM c WHERE s.seq = c.seq
	RETURNING c.seq, c.type, c.status, c.amount, c.currency, c.occurred_at, c.settlement_amount,
	    c.settlement_currency`

	// fillSQL fills empty fields (and a pending status) from the first
	// agreeing sighting that has them, in batch order; updated_at becomes
	// the latest receipt among the sightings that changed something. It
	// runs with hash and merge joins off (see nestedLoopsSQL): the
	// transactions to fill are found by primary key, however many.
	fillSQL = `
	WITH c AS (
	    SELECT s.* FROM ` + stagedRows + `
	    CROSS JOIN LATERAL (
	        SELECT p.reference, p.provider_ref, p.counterparty, p.linked_txn_id, p.status, p.settlement_currency
	        FROM provider_txns p
	        WHERE p.provider = s.provider AND p.txn_id = s.txn_id LIMIT 1) p
	    WHERE NOT s.conflict
	      AND ((p.reference = '' AND s.reference <> '') OR (p.provider_ref = '' AND s.provider_ref <> '')
	           OR (p.counterparty = '' AND s.counterparty <> '') OR (p.linked_txn_id = '' AND s.linked_txn_id <> '')
	           OR (p.status = 'pending' AND s.status <> 'pending')
	           OR (p.settlement_currency = '' AND s.settlement_currency <> ''))
	), f AS (
	    SELECT provider, txn_id,
	        (array_agg(reference ORDER BY seq) FILTER (WHERE reference <> ''))[1] AS reference,
	        (array_agg(ref_norm ORDER BY seq) FILTER (WHERE reference <> ''))[1] AS ref_norm,
	        (array_agg(received_at ORDER BY seq) FILTER (WHERE reference <> ''))[1] AS reference_at,
	        (array_agg(provider_ref ORDER BY seq) FILTER (WHERE provider_ref <> ''))[1] AS provider_ref,
	        (array_agg(received_at ORDER BY seq) FILTER (WHERE provider_ref <> ''))[1] AS provider_ref_at,
	        (array_agg(counterparty ORDER BY seq) FILTER (WHERE counterparty <> ''))[1] AS counterparty,
	        (array_agg(received_at ORDER BY seq) FILTER (WHERE counterparty <> ''))[1] AS counterparty_at,
	        (array_agg(linked_txn_id ORDER BY seq) FILTER (WHERE linked_txn_id <> ''))[1] AS linked_txn_id,
	        (array_agg(received_at ORDER BY seq) FILTER (WHERE linked_txn_id <> ''))[1] AS linked_txn_id_at,
	        (array_agg(status ORDER BY seq) FILTER (WHERE status <> 'pending'))[1] AS status,
	        (array_agg(received_at ORDER BY seq) FILTER (WHERE status <> 'pending'))[1] AS status_at,
	        (array_agg(settlement_amount ORDER BY seq) FILTER (WHERE settlement_currency <> ''))[1] AS settlement_amount,
	        (array_agg(settlement_currency ORDER BY seq) FILTER (WHERE settlement_currency <> ''))[1] AS settlement_currency,
	        (array_agg(exchange_rate ORDER BY seq) FILTER (WHERE settlement_currency <> ''))[1] AS exchange_rate,
	        (array_agg(received_at ORDER BY seq) FILTER (WHERE settlement_currency <> ''))[1] AS settlement_at
	    FROM c GROUP BY provider, txn_id
	)
	UPDATE provider_txns p
	SET reference = CASE WHEN p.reference = '' THEN coalesce(f.reference, '') ELSE p.reference END,
	    ref_norm = CASE WHEN p.reference = '' THEN coalesce(f.ref_norm, '') ELSE p.ref_norm END,
	    provider_ref = CASE WHEN p.provider_ref = '' THEN coalesce(f.provider_ref, '') ELSE p.provider_ref END,
	    counterparty = CASE WHEN p.counterparty = '' THEN coalesce(f.counterparty, '') ELSE p.counterparty END,
	    linked_txn_id = CASE WHEN p.linked_txn_id = '' THEN coalesce(f.linked_txn_id, '') ELSE p.linked_txn_id END,
	    status = CASE WHEN p.status = 'pending' THEN coalesce(f.status, 'pending') ELSE p.status END,
	    settlement_amount = CASE WHEN p.settlement_currency = '' AND f.settlement_currency IS NOT NULL
	                             THEN f.settlement_amount ELSE p.settlement_amount END,
	    exchange_rate = CASE WHEN p.settlement_currency = '' AND f.settlement_currency IS NOT NULL
	                         THEN f.exchange_rate ELSE p.exchange_rate END,
	    settlement_currency = CASE WHEN p.settlement_currency = '' THEN coalesce(f.settlement_currency, '')
	                               ELSE p.settlement_currency END,
	    updated_at = greatest(CASE WHEN p.reference = '' THEN f.reference_at END,
	                          CASE WHEN p.provider_ref = '' THEN f.provider_ref_at END,
	                          CASE WHEN p.counterparty = '' THEN f.counterparty_at END,
	                          CASE WHEN p.linked_txn_id = '' THEN f.linked_txn_id_at END,
	                          CASE WHEN p.status = 'pending' THEN f.status_at END,
	                          CASE WHEN p.settlement_currency = '' THEN f.settlement_at END)
	FROM f
	WHERE p.provider = f.provider AND p.txn_id = f.txn_id
	  AND ((p.reference = '' AND f.reference IS NOT NULL) OR (p.provider_ref = '' AND f.provider_ref IS NOT NULL)
	       OR (p.counterparty = '' AND f.counterparty IS NOT NULL) OR (p.linked_txn_id = '' AND f.linked_txn_id IS NOT NULL)
	       OR (p.status = 'pending' AND f.status IS NOT NULL)
	       OR (p.settlement_currency = '' AND f.settlement_currency IS NOT NULL))`

	// stagedRows stands for the staged rows a statement reads: all of them
	// (allRows), those at the positions in $1 (onlyRows) or the others
	// (otherRows).
	stagedRows = "{{rows}}"
	allRows    = stageTable + " s"
	onlyRows   = "(SELECT s.* FROM " + stageTable + " s JOIN unnest($1::int[]) AS k(seq) ON k.seq = s.seq) s"
	// otherRows are the staged rows not at the positions in $1.
	otherRows = "(SELECT s.* FROM " + stageTable + " s WHERE NOT EXISTS (SELECT FROM unnest($1::int[]) AS k(seq) WHERE k.seq = s.seq)) s"

	// nestedLoopsSQL turns hash and merge joins off for the statement that
	// follows, keeping the caller's settings to restore (restoreJoinsSQL).
	nestedLoopsSQL = `
	SELECT set_config('reconcile.hashjoin', current_setting('enable_hashjoin'), true),
	       set_config('reconcile.mergejoin', current_setting('enable_mergejoin'), true),
	       set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`
	restoreJoinsSQL = `
	SELECT set_config('enable_hashjoin', current_setting('reconcile.hashjoin'), true),
	       set_config('enable_mergejoin', current_setting('reconcile.mergejoin'), true)`

	// insertSourcesSQL adds the new sightings of agreeing rows, the first
	// of each channel and ref in batch order.
	insertSourcesSQL = `
	INSERT INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
	SELECT DISTINCT ON (provider, txn_id, channel, ref) provider, txn_id, channel, ref, raw, received_at
	FROM ` + stagedRows + `
	WHERE NOT conflict
	ORDER BY provider, txn_id, channel, ref, seq
	ON CONFLICT DO NOTHING`

	// insertCreatedSourcesSQL adds the sightings of the transactions this
	// batch created from their only sighting in it: nothing can be stored
	// for them yet (no source is written without its transaction, and a
	// concurrent import of the same key waits on this one's insert), so
	// neither the check for an existing source nor the sort for repeats is
	// needed. They go in index order.
	insertCreatedSourcesSQL = `
	INSERT INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
	SELECT provider, txn_id, channel, ref, raw, received_at
	FROM ` + stagedRows + `
	ORDER BY provider, txn_id, channel, ref`

	// quarantineConflictsSQL quarantines conflicting sightings not
	// quarantined before.
	quarantineConflictsSQL = `
	INSERT INTO quarantine (source, origin, line, field, reason, raw, received_at)
	SELECT c.source, c.origin, 0, c.field, c.reason, c.raw, c.at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::timestamptz[])
	     AS c(source, origin, field, reason, raw, at)
	WHERE NOT EXISTS (
	    SELECT 1 FROM quarantine q
	    WHERE q.source = c.source AND q.origin = c.origin AND q.field = c.field AND q.reason = c.reason
	      AND q.raw IS NOT DISTINCT FROM c.raw)`
)

// UpsertProviderTxns copies the batch into a temporary staging table and
// applies it with the set statements above, in the caller's transaction or
// one of its own. A large batch stages only its rows with work (upsertLarge).
func (e executor) UpsertProviderTxns(ctx context.Context, batch []ledger.Sighting) (ledger.UpsertCounts, error) {
	return e.upsertProviderTxns(ctx, batch, nil, nil, nil)
}

// UpsertProviderTxns is the executor's, with the order of its statements
// chosen from the transaction's previous batch (see upsertSightings).
func (t *tx) UpsertProviderTxns(ctx context.Context, batch []ledger.Sighting) (ledger.UpsertCounts, error) {
	return t.upsertProviderTxns(ctx, batch, nil, &t.known, &t.allNew)
}

// upsertProviderTxns is UpsertProviderTxns that, when readBack is set, also
// reads the first sighting's stored transaction into it in the same round
// trip.
func (e executor) upsertProviderTxns(ctx context.Context, batch []ledger.Sighting, readBack *ledger.ProviderTxn, known, allNew *bool) (ledger.UpsertCounts, error) {
	if len(batch) == 0 {
		return ledger.UpsertCounts{}, nil
	}
	if err := ledger.ValidateSightings(batch); err != nil {
		return ledger.UpsertCounts{}, err
	}
	upsert := func(ctx context.Context, ptx pgx.Tx, known, allNew *bool) (ledger.UpsertCounts, error) {
		if len(batch) >= copyAt && readBack == nil && !stagedOnly.Load() && binaryResults(ptx) {
			return upsertLarge(ctx, ptx, batch, known, allNew)
		}
		return upsertSightings(ctx, ptx, batch, readBack, known)
	}
	if ptx, ok := e.db.(pgx.Tx); ok {
		c, err := upsert(ctx, ptx, known, allNew)
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
		c, err = upsert(ctx, ptx, nil, nil)
		return err
	})
	return c, ledger.Wrap("upsert provider txns", batch[0].Txn.Provider, translate(err))
}

// withRows is a statement over the staged rows at positions (all of them
// when positions is nil), with its arguments.
func withRows(sql string, positions []int32, all int) (string, []any) {
	if positions == nil || len(positions) == all {
		return strings.Replace(sql, stagedRows, allRows, 1), nil
	}
	return strings.Replace(sql, stagedRows, onlyRows, 1), []any{positions}
}

// upsertSightings applies a staged batch. Two orders give the same result:
// insert first (the new transactions, then the work left on the others) is
// cheapest when most of the batch is new; classify first (find the rows
// with work, then do only that) when most of it is known, as in a
// re-import. known says which the previous batch of the transaction was,
// and is set for the next one; nil (a lone batch) inserts first.
func upsertSightings(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, readBack *ledger.ProviderTxn, known *bool) (ledger.UpsertCounts, error) {
	var c ledger.UpsertCounts
	b := &pgx.Batch{}
	// The batch's statements are prepared before any runs: the table must
	// exist first.
	if _, err := tx.Exec(ctx, stageDDL); err != nil {
		return c, fmt.Errorf("create staging table: %w", err)
	}
	if len(batch) >= copyAt {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{stageTable}, stageCols, pgx.CopyFromSlice(len(batch),
			func(i int) ([]any, error) { return stageRow(i, batch[i]), nil })); err != nil {
			return c, fmt.Errorf("copy into staging table: %w", err)
		}
	} else {
		b.Queue(stageArraysSQL, stageArrays(batch)...)
	}
	// work lists the positions of the rows that may have something to do
	// beyond a new transaction; nil is all of them.
	var work, fresh []int32
	classifyFirst := known != nil && *known
	if classifyFirst {
		work = []int32{}
		b.Queue(strings.Replace(classifySQL, stagedRows, allRows, 1)).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var (
					seq   int32
					isNew bool
				)
				if err := rows.Scan(&seq, &isNew); err != nil {
					return err
				}
				work = append(work, seq)
				if isNew {
					fresh = append(fresh, seq)
				}
			}
			return rows.Err()
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return ledger.UpsertCounts{}, err
		}
		slices.Sort(work)
		slices.Sort(fresh)
		b = &pgx.Batch{}
	}
	created := map[string]bool{}
	if !classifyFirst || len(fresh) > 0 {
		q, args := withRows(insertNewSQL, fresh, len(batch))
		b.Queue(q, args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var provider, id string
				if err := rows.Scan(&provider, &id); err != nil {
					return err
				}
				created[ledger.TxnKey(provider, id)] = true
			}
			return rows.Err()
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return ledger.UpsertCounts{}, err
		}
		b = &pgx.Batch{}
	}
	c.NewTxns = len(created)
	// meet are the rows to compare with a stored transaction: those that
	// did not create theirs, and every sighting of a key seen twice.
	var allMeet []int32
	for _, i := range ledger.SightingsToMeet(batch, created) {
		allMeet = append(allMeet, int32(i))
	}
	meet := allMeet
	if classifyFirst {
		meet = intersect(meet, work)
	} else if len(meet) > 0 {
		// Of those, only the rows the classification returns have work.
		q, args := withRows(classifySQL, meet, len(batch))
		b.Queue(q, args...).Query(func(rows pgx.Rows) error {
			var w []int32
			for rows.Next() {
				var (
					seq   int32
					isNew bool
				)
				if err := rows.Scan(&seq, &isNew); err != nil {
					return err
				}
				w = append(w, seq)
			}
			slices.Sort(w)
			meet = w
			return rows.Err()
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return ledger.UpsertCounts{}, err
		}
		b = &pgx.Batch{}
	}
	addSources := func(tag pgconn.CommandTag) error {
		c.NewSources += int(tag.RowsAffected())
		return nil
	}
	if len(meet) > 0 {
		rows, args := onlyRows, []any{meet}
		if len(meet) == len(batch) {
			rows, args = allRows, nil
		}
		b.Queue(strings.Replace(markConflictsSQL, stagedRows, rows, 1), args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var (
					seq    int32
					stored ledger.ProviderTxn
					amount decimal.Decimal
					cur    string
					settle decimal.NullDecimal
					setCur string
				)
				if err := rows.Scan(&seq, &stored.Type, &stored.Status, &amount, &cur, &stored.OccurredAt,
					&settle, &setCur); err != nil {
					return err
				}
				stored.Amount = money.Amount{Value: amount, Currency: cur}
				if setCur != "" {
					stored.Settlement = money.Amount{Value: settle.Decimal, Currency: setCur}
				}
				stored.OccurredAt = stored.OccurredAt.UTC()
				c.Conflicts = append(c.Conflicts, ledger.SightingConflict{Index: int(seq),
					Reason: ledger.Conflict(stored, batch[seq].Txn)})
			}
			return rows.Err()
		})
		b.Queue(nestedLoopsSQL)
		b.Queue(strings.Replace(fillSQL, stagedRows, rows, 1), args...)
		b.Queue(restoreJoinsSQL)
		b.Queue(strings.Replace(insertSourcesSQL, stagedRows, rows, 1), args...).Exec(addSources)
	}
	// The rows that created their transaction from their only sighting:
	// every row but meet, or (classifying first) the new rows but meet.
	switch {
	case classifyFirst && len(fresh) > 0:
		only := difference(fresh, meet)
		if len(only) > 0 {
			q, args := withRows(insertCreatedSourcesSQL, only, len(batch))
			b.Queue(q, args...).Exec(addSources)
		}
	case !classifyFirst && len(allMeet) < len(batch):
		q, args := strings.Replace(insertCreatedSourcesSQL, stagedRows, allRows, 1), []any(nil)
		if len(allMeet) > 0 {
			q, args = strings.Replace(insertCreatedSourcesSQL, stagedRows, otherRows, 1), []any{allMeet}
		}
		b.Queue(q, args...).Exec(addSources)
	}
	if readBack != nil {
		t := batch[0].Txn
		b.Queue(`SELECT `+txnCols+` FROM provider_txns WHERE provider = $1 AND txn_id = $2`, t.Provider, t.ID).
			QueryRow(func(row pgx.Row) error {
				var err error
				*readBack, err = scanTxn(row)
				return err
			})
	}
	if len(batch) >= copyAt {
		b.Queue(`TRUNCATE ` + stageTable)
	} else {
		b.Queue(`DELETE FROM ` + stageTable)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return ledger.UpsertCounts{}, err
	}
	if known != nil {
		*known = 2*c.NewTxns < len(batch)
	}
	slices.SortFunc(c.Conflicts, func(a, b ledger.SightingConflict) int { return a.Index - b.Index })
	c.Duplicates = len(batch) - c.NewSources - len(c.Conflicts)
	if len(c.Conflicts) > 0 {
		if err := quarantineConflicts(ctx, tx, batch, c.Conflicts); err != nil {
			return ledger.UpsertCounts{}, err
		}
	}
	return c, nil
}

// intersect returns the positions in both sorted lists.
func intersect(a, b []int32) []int32 {
	var out []int32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// difference returns the positions of sorted a not in sorted b.
func difference(a, b []int32) []int32 {
	var out []int32
	j := 0
	for _, v := range a {
		for j < len(b) && b[j] < v {
			j++
		}
		if j < len(b) && b[j] == v {
			continue
		}
		out = append(out, v)
	}
	return out
}

// quarantineConflicts puts each distinct conflicting sighting in the
// quarantine unless it is there already.
func quarantineConflicts(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, cs []ledger.SightingConflict) error {
	var (
		sources, origins, fields, reasons []string
		raws                              [][]byte
		ats                               []time.Time
	)
	seen := map[string]bool{}
	for _, cf := range cs {
		s := batch[cf.Index]
		q := ledger.ConflictItem(s.Txn, s.Source, cf.Reason)
		if k := ledger.ConflictKey(q); !seen[k] {
			seen[k] = true
			sources, origins, fields, reasons = append(sources, q.Source), append(origins, q.Origin),
				append(fields, q.Field), append(reasons, q.Reason)
			raws, ats = append(raws, q.Raw), append(ats, utc(q.At))
		}
	}
	_, err := tx.Exec(ctx, quarantineConflictsSQL, sources, origins, fields, reasons, raws, ats)
	if err != nil {
		return fmt.Errorf("quarantine conflicting sightings: %w", err)
	}
	return nil
}
