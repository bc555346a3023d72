package sqlitestore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// A write transaction on SQLite excludes every other writer, so what a probe
// inside it reads stays true until the transaction writes. upsertSightings
// uses that to split a batch before writing anything:
//   - a sighting of a transaction not stored and named once in the batch
//     creates it alone: it cannot conflict or fill, and its source is new.
//     These are inserted straight into provider_txns and provider_txn_sources
//     in key order, by reused multi-row inserts;
//   - a re-sighting that agrees with the stored transaction, fills none of
//     its empty fields and is recorded already changes nothing (the
//     decision of classifySQL in the PostgreSQL store): it is counted as a
//     duplicate and not written;
//   - the rest (a stored transaction met with something to do, or a new one
//     named more than once) goes through the set statements (upsertSet), in
//     batch order.
// The parts share no transaction key with each other's writes, except the
// agreeing re-sightings left out, which no write of the others could make
// conflict, fill or record (a fill only fills what such a sighting lacks).
//
// After a batch whose probe found no key stored (the next part of a new
// file), the batch is not probed: every transaction is taken for new, and
// those named once are inserted in a savepoint. One stored after all makes
// the insert fail on its primary key; the savepoint is rolled back and the
// batch probed and written as above.

// fastChunk is the most rows one multi-row statement of the fast path
// carries: with 16 values a row, half SQLite's limit on bound parameters.
// Shorter runs take the power-of-two sizes below it, so that a transaction
// prepares at most a dozen statements of each kind, each once.
const fastChunk = 1024

// The fast path's multi-row statements, by multiRow kind (the intents
// import uses the first few).
const (
	rowsProbeKeys = 10 + iota
	rowsClassify
	rowsTxns
	rowsSources
	rowsSharedTxns
	rowsSharedSources
)

// What the probe says of a row.
const (
	rowNew   uint8 = iota // no stored transaction has the key
	rowWork               // stored, and the sighting has something to do
	rowClean              // stored, agreeing, filling nothing, recorded
)

// probeKeysSQL returns the positions, among n (position, provider, id)
// rows, of the keys that are stored.
func probeKeysSQL(n int) string {
	return multiRow(rowsProbeKeys, n, `WITH k(i, provider, txn_id) AS (VALUES `, `(?,?,?)`,
		`) SELECT k.i FROM k CROSS JOIN provider_txns p ON p.provider = k.provider AND p.txn_id = k.txn_id`)
}

const numClassifyCols = 16

// classifySQL returns, of n sightings, those whose transaction is not
// stored (with true) and those that have something to do with the stored
// one (with false): all but the agreeing, recorded re-sightings that fill
// nothing, which a re-import is made of and which cost no result row. The
// test is the PostgreSQL store's classifySQL; times compare as in
// findConflictsSQL.
func classifySQL(n int) string {
	return multiRow(rowsClassify, n, `WITH s(i, provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	    counterparty, linked_txn_id, settlement_amount, settlement_currency, channel, ref) AS (VALUES `,
		`(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, `)
	SELECT s.i, p.status IS NULL
	FROM s LEFT JOIN provider_txns p ON p.provider = s.provider AND p.txn_id = s.txn_id
	WHERE p.status IS NULL
	   OR s.amount <> p.amount OR s.currency <> p.currency OR s.type <> p.type
	   OR (s.occurred_at <> p.occurred_at
	       AND abs((unixepoch(s.occurred_at) - unixepoch(p.occurred_at)) * 1000000
	               + CAST(substr(s.occurred_at, 21, 6) AS INTEGER)
	               - CAST(substr(p.occurred_at, 21, 6) AS INTEGER)) > 86400000000)
	   OR (s.status <> 'pending' AND s.status <> p.status)
	   OR (s.settlement_currency <> '' AND (s.settlement_currency <> p.settlement_currency
	       OR s.settlement_amount IS NOT p.settlement_amount))
	   OR (p.reference = '' AND s.reference <> '') OR (p.provider_ref = '' AND s.provider_ref <> '')
	   OR (p.counterparty = '' AND s.counterparty <> '') OR (p.linked_txn_id = '' AND s.linked_txn_id <> '')
	   OR NOT EXISTS (SELECT 1 FROM provider_txn_sources x WHERE x.provider = s.provider AND x.txn_id = s.txn_id
	                  AND x.channel = s.channel AND x.ref = s.ref)`)
}

func classifyRow(args []any, i int32, s *ledger.Sighting) []any {
	t, src := &s.Txn, &s.Source
	return append(args, i, t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Text(), t.Amount.Currency,
		ts(t.OccurredAt), t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, nullAmount(t.Settlement),
		t.Settlement.Currency, src.Channel, src.Ref)
}

func insertTxnsSQL(n int) string {
	return multiRow(rowsTxns, n, `INSERT INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at,
	    reference, provider_ref, counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount,
	    settlement_currency, exchange_rate, ref_norm) VALUES `, `(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, ``)
}

func newTxnRow(args []any, s *ledger.Sighting, received *tsMemo) []any {
	t := &s.Txn
	at := received.ts(s.Source.ReceivedAt)
	return append(args, t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Text(), t.Amount.Currency,
		ts(t.OccurredAt), t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, at, at, nullAmount(t.Settlement),
		t.Settlement.Currency, t.ExchangeRate, ledger.NormalReference(t.Reference))
}

// insertSharedTxnsSQL inserts n new transactions whose provider,
// currency, time of receipt (first seen and updated), settlement currency
// and exchange rate are the first five parameters; each row binds the
// rest (sharedTxnRow) as anonymous parameters, numbered after the five,
// which the driver binds without looking their names up.
func insertSharedTxnsSQL(n int) string {
	return multiRow(rowsSharedTxns, n, `INSERT INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at,
	    reference, provider_ref, counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount,
	    settlement_currency, exchange_rate, ref_norm)
	SELECT ?1, column1, column2, column3, column4, ?2, column5, column6, column7, column8, column9, ?3, ?3, column10, ?4, ?5, column11
	FROM (VALUES `, `(?,?,?,?,?,?,?,?,?,?,?)`, `)`)
}

func sharedTxnRow(args []any, s *ledger.Sighting) []any {
	t := &s.Txn
	return append(args, t.ID, string(t.Type), string(t.Status), t.Amount.Text(), ts(t.OccurredAt), t.Reference, t.ProviderRef,
		t.Counterparty, t.LinkedID, nullAmount(t.Settlement), ledger.NormalReference(t.Reference))
}

// insertSharedSourcesSQL inserts the sources of n new transactions whose
// provider, channel and time of receipt are the first three parameters.
func insertSharedSourcesSQL(n int) string {
	return multiRow(rowsSharedSources, n, `INSERT INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
	SELECT ?1, column1, ?2, column2, column3, ?3 FROM (VALUES `, `(?,?,?)`, `)`)
}

func insertSourcesRowsSQL(n int) string {
	return multiRow(rowsSources, n, `INSERT INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at) VALUES `,
		`(?,?,?,?,?,?)`, ``)
}

func sourceRow(args []any, s *ledger.Sighting, received *tsMemo) []any {
	src := &s.Source
	return append(args, s.Txn.Provider, s.Txn.ID, src.Channel, src.Ref, src.Raw, received.ts(src.ReceivedAt))
}

// tsMemo is ts remembering its last answer: the sightings of a file share
// their time of receipt.
type tsMemo struct {
	t time.Time
	s string
}

func (m *tsMemo) ts(t time.Time) string {
	if m.s == "" || !t.Equal(m.t) {
		m.t, m.s = t, ts(t)
	}
	return m.s
}

// chunks calls fn with consecutive runs of rows: fastChunk at a time, then
// the rest in power-of-two sizes. A transaction keeps each statement it
// prepares until it ends (a megabyte or two for a thousand rows), so the
// sizes of multi-row statements must not follow the data.
func chunks[T any](rows []T, fn func([]T) error) error {
	for len(rows) > 0 {
		n := fastChunk
		for n > len(rows) {
			n /= 2
		}
		if err := fn(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// upsertSightings splits the batch (see above), writes the new
// transactions named once, and sends what has work to upsertSet.
func (e executor) upsertSightings(ctx context.Context, batch []ledger.Sighting) (ledger.UpsertCounts, error) {
	var c ledger.UpsertCounts
	// order lists the positions sorted by key, then by position.
	order := make([]int32, len(batch))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &batch[a].Txn, &batch[b].Txn
		if c := cmp.Compare(x.Provider, y.Provider); c != 0 {
			return c
		}
		if c := cmp.Compare(x.ID, y.ID); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	same := func(a, b int32) bool {
		return batch[a].Txn.ID == batch[b].Txn.ID && batch[a].Txn.Provider == batch[b].Txn.Provider
	}
	state := make([]uint8, len(batch))
	args := make([]any, 0, numClassifyCols*min(fastChunk, len(batch)))
	// classify marks each of rows new, work or clean.
	classify := func(rows []int32) error {
		for _, i := range rows {
			state[i] = rowClean
		}
		return chunks(rows, func(part []int32) error {
			args = args[:0]
			for _, i := range part {
				args = classifyRow(args, i, &batch[i])
			}
			res, err := e.query(ctx, classifySQL(len(part)), args...)
			if err != nil {
				return err
			}
			defer res.Close()
			for res.Next() {
				var (
					i     int32
					isNew bool
				)
				if err := res.Scan(&i, &isNew); err != nil {
					return err
				}
				state[i] = rowWork
				if isNew {
					state[i] = rowNew
				}
			}
			return res.Err()
		})
	}
	guess := e.txStmts.fresh.Load()
	switch {
	case guess:
		// The previous batch named no stored transaction: neither does
		// this one, it is guessed, and every row is new (see below).
	case e.txStmts.known.Load():
		// The previous batch was mostly stored (a re-import): classify
		// every row at once.
		if err := classify(order); err != nil {
			return c, err
		}
	default:
		// Mostly new: probe each key once, and classify only the rows of
		// stored ones.
		var keys []int32
		for j, i := range order {
			if j == 0 || !same(order[j-1], i) {
				keys = append(keys, i)
			}
		}
		stored := map[int32]bool{}
		err := chunks(keys, func(part []int32) error {
			args = args[:0]
			for _, i := range part {
				args = append(args, i, batch[i].Txn.Provider, batch[i].Txn.ID)
			}
			res, err := e.query(ctx, probeKeysSQL(len(part)), args...)
			if err != nil {
				return err
			}
			defer res.Close()
			for res.Next() {
				var i int32
				if err := res.Scan(&i); err != nil {
					return err
				}
				stored[i] = true
			}
			return res.Err()
		})
		if err != nil {
			return c, err
		}
		e.txStmts.fresh.Store(len(stored) == 0)
		if len(stored) > 0 {
			var rows []int32
			for j := 0; j < len(order); {
				k := j + 1
				for k < len(order) && same(order[j], order[k]) {
					k++
				}
				if stored[order[j]] {
					rows = append(rows, order[j:k]...)
				}
				j = k
			}
			if err := classify(rows); err != nil {
				return c, err
			}
		}
	}
	var (
		alone []int32 // new transactions named once, in key order
		rest  []int32 // rows with work, in batch order after the sort below
		known int
	)
	for j := 0; j < len(order); {
		k := j + 1
		for k < len(order) && same(order[j], order[k]) {
			k++
		}
		switch {
		case state[order[j]] != rowNew:
			known += k - j
			for _, i := range order[j:k] {
				if state[i] == rowWork {
					rest = append(rest, i)
				}
			}
		case k-j == 1:
			alone = append(alone, order[j])
		default:
			rest = append(rest, order[j:k]...)
		}
		j = k
	}
	e.txStmts.known.Store(2*known > len(batch))
	if guess {
		// The new transactions named once are inserted in a savepoint:
		// one stored after all makes the insert fail, and the batch is
		// probed and written as any other.
		ok, err := e.unlessStored(ctx, func() error { return e.insertAlone(ctx, batch, alone, args) })
		if err != nil {
			return c, err
		}
		if !ok {
			e.stmts.guessFailed.Add(1)
			e.txStmts.fresh.Store(false)
			return e.upsertSightings(ctx, batch)
		}
	} else if err := e.insertAlone(ctx, batch, alone, args); err != nil {
		return c, err
	}
	c.NewTxns, c.NewSources = len(alone), len(alone)
	if len(rest) > 0 {
		slices.Sort(rest)
		sub := make([]ledger.Sighting, len(rest))
		for j, i := range rest {
			sub[j] = batch[i]
		}
		sc, err := upsertSet(ctx, e.tx, sub)
		if err != nil {
			return c, err
		}
		c.NewTxns += sc.NewTxns
		c.NewSources += sc.NewSources
		for _, cf := range sc.Conflicts {
			cf.Index = int(rest[cf.Index])
			c.Conflicts = append(c.Conflicts, cf)
		}
	}
	c.Duplicates = len(batch) - c.NewSources - len(c.Conflicts)
	return c, nil
}

// insertAlone inserts the transactions of rows and their one source each.
// Binding a value costs about as much as the engine's work on it, so the
// rows that share the first row's provider, currency, settlement currency,
// exchange rate and time of receipt (a file's rows mostly do) bind those
// once per statement, and so do their sources (provider, channel and time
// of receipt); the others bind all their values.
func (e executor) insertAlone(ctx context.Context, batch []ledger.Sighting, rows []int32, args []any) error {
	if len(rows) == 0 {
		return nil
	}
	var (
		received tsMemo
		first    = &batch[rows[0]]
		shared   = make([]int32, 0, len(rows))
		other    []int32
	)
	for _, i := range rows {
		if s := &batch[i]; s.Txn.Provider == first.Txn.Provider && s.Txn.Amount.Currency == first.Txn.Amount.Currency &&
			s.Txn.Settlement.Currency == first.Txn.Settlement.Currency && s.Txn.ExchangeRate == first.Txn.ExchangeRate &&
			s.Source.Channel == first.Source.Channel && s.Source.ReceivedAt.Equal(first.Source.ReceivedAt) {
			shared = append(shared, i)
		} else {
			other = append(other, i)
		}
	}
	at := received.ts(first.Source.ReceivedAt)
	err := chunks(shared, func(part []int32) error {
		t := &first.Txn
		args = append(args[:0], t.Provider, t.Amount.Currency, at, t.Settlement.Currency, t.ExchangeRate)
		for _, i := range part {
			args = sharedTxnRow(args, &batch[i])
		}
		_, err := e.exec(ctx, insertSharedTxnsSQL(len(part)), args...)
		return err
	})
	if err != nil {
		return err
	}
	err = chunks(other, func(part []int32) error {
		args = args[:0]
		for _, i := range part {
			args = newTxnRow(args, &batch[i], &received)
		}
		_, err := e.exec(ctx, insertTxnsSQL(len(part)), args...)
		return err
	})
	if err != nil {
		return err
	}
	err = chunks(shared, func(part []int32) error {
		args = append(args[:0], first.Txn.Provider, first.Source.Channel, at)
		for _, i := range part {
			args = append(args, batch[i].Txn.ID, batch[i].Source.Ref, batch[i].Source.Raw)
		}
		_, err := e.exec(ctx, insertSharedSourcesSQL(len(part)), args...)
		return err
	})
	if err != nil {
		return err
	}
	return chunks(other, func(part []int32) error {
		args = args[:0]
		for _, i := range part {
			args = sourceRow(args, &batch[i], &received)
		}
		_, err := e.exec(ctx, insertSourcesRowsSQL(len(part)), args...)
		return err
	})
}
