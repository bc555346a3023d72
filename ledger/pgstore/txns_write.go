package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reconcilehq/reconcile/ledger"
)

// copyAt is the number of rows from which new transactions, or new
// sources, are written with binary COPY (a round trip of its own) rather
// than inserted from arrays with the batch's other statements.
const copyAt = 256

// The statements that write a plan.
const (
	savepointSQL = `SAVEPOINT upsert_sightings`
	releaseSQL   = `RELEASE SAVEPOINT upsert_sightings`
	rollbackSQL  = `ROLLBACK TO SAVEPOINT upsert_sightings`

	// Columns written by copyTxnsSQL and insertTxnsSQL.
	txnWriteCols = `provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	    counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount, settlement_currency, exchange_rate,
	    amount_minor, ref_norm, account`
	copyTxnsSQL    = `COPY provider_txns (` + txnWriteCols + `) FROM STDIN (FORMAT binary)`
	copySourcesSQL = `COPY provider_txn_sources (provider, txn_id, channel, ref, raw, received_at) FROM STDIN (FORMAT binary)`

	// insertTxnsSQL inserts new transactions from one array per column, in
	// the arrays' order (key order): no ON CONFLICT, a key stored since the
	// probe fails the insert.
	insertTxnsSQL = `
	INSERT INTO provider_txns (` + txnWriteCols + `)
	SELECT provider, txn_id, type, status, amount::numeric, currency, occurred_at, reference, provider_ref,
	       counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount::numeric, settlement_currency,
	       exchange_rate, amount_minor, ref_norm, account
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
	    $8::text[], $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::timestamptz[], $14::text[],
	    $15::text[], $16::text[], $17::int8[], $18::text[], $19::text[])
	    AS t(provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref, counterparty,
	         linked_txn_id, first_seen_at, updated_at, settlement_amount, settlement_currency, exchange_rate,
	         amount_minor, ref_norm, account)`

	// insertSourcesSQL inserts new sources from arrays, in key order; a
	// source stored since the probe fails it.
	insertSourcesSQL = `
	INSERT INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::timestamptz[])`

	// fillSQL fills, in each stored transaction of the arrays, the fields
	// in its bitmask (the ledger.Fill values), provided every one of them
	// is still empty (a pending status): a row that changed since the probe
	// is left out, and the caller counts them.
	fillSQL = `
	UPDATE provider_txns p
	SET reference = CASE WHEN f.fills & 1 <> 0 THEN f.reference ELSE p.reference END,
	    ref_norm = CASE WHEN f.fills & 1 <> 0 THEN f.ref_norm ELSE p.ref_norm END,
	    provider_ref = CASE WHEN f.fills & 2 <> 0 THEN f.provider_ref ELSE p.provider_ref END,
	    counterparty = CASE WHEN f.fills & 4 <> 0 THEN f.counterparty ELSE p.counterparty END,
	    linked_txn_id = CASE WHEN f.fills & 8 <> 0 THEN f.linked_txn_id ELSE p.linked_txn_id END,
	    status = CASE WHEN f.fills & 16 <> 0 THEN f.status ELSE p.status END,
	    settlement_amount = CASE WHEN f.fills & 32 <> 0 THEN f.settlement_amount::numeric ELSE p.settlement_amount END,
	    settlement_currency = CASE WHEN f.fills & 32 <> 0 THEN f.settlement_currency ELSE p.settlement_currency END,
	    exchange_rate = CASE WHEN f.fills & 32 <> 0 THEN f.exchange_rate ELSE p.exchange_rate END,
	    updated_at = f.updated_at
	FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	    $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[])
	    AS f(provider, txn_id, fills, reference, ref_norm, provider_ref, counterparty, linked_txn_id, status,
	         settlement_amount, settlement_currency, exchange_rate, updated_at)
	WHERE p.provider = f.provider AND p.txn_id = f.txn_id
	  AND (f.fills & 1 = 0 OR p.reference = '') AND (f.fills & 2 = 0 OR p.provider_ref = '')
	  AND (f.fills & 4 = 0 OR p.counterparty = '') AND (f.fills & 8 = 0 OR p.linked_txn_id = '')
	  AND (f.fills & 16 = 0 OR p.status = 'pending') AND (f.fills & 32 = 0 OR p.settlement_currency = '')`

	// recheckSQL counts the transactions of the arrays whose status and
	// settlement currency are still those given.
	recheckSQL = `
	SELECT count(*) FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
	    AS k(provider, txn_id, status, settlement_currency)
	CROSS JOIN LATERAL (
	    SELECT p.status, p.settlement_currency FROM provider_txns p
	    WHERE p.provider = k.provider AND p.txn_id = k.txn_id LIMIT 1) p
	WHERE p.status = k.status AND p.settlement_currency = k.settlement_currency`

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

// errChanged says a transaction the batch fills, or that a sighting
// contradicts, changed since it was read.
var errChanged = errors.New("a transaction changed since it was read")

// writePlan writes what ClassifySightings decided for the batch in a
// savepoint, and reads back the first sighting's transaction into readBack
// when set. written is false, and nothing written, when a row changed
// since the probe (see above).
func writePlan(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, probes []ledger.Probe, plan *ledger.UpsertPlan,
	readBack *ledger.ProviderTxn) (written bool, err error) {
	if !plan.Writes() {
		if readBack != nil {
			err = readTxn(ctx, tx, &batch[0].Txn, readBack)
		}
		return true, err
	}
	w := sortWrites(batch, probes, plan)
	err = w.write(ctx, tx, batch, probes, plan, readBack)
	if errors.Is(err, errChanged) || uniqueViolation(err) {
		// Without arguments, Exec takes the simple protocol, which an
		// aborted transaction accepts (it would refuse to prepare).
		_, err := tx.Exec(ctx, rollbackSQL+"; "+releaseSQL)
		return false, err
	}
	if err != nil {
		return false, err
	}
	_, err = tx.Exec(ctx, releaseSQL)
	return err == nil, err
}

// planWrites are the writes of a plan, sorted out.
type planWrites struct {
	// created and filled are the transactions to create and to fill, in
	// key order.
	created, filled []*ledger.TxnWrite
	// conflicts are the positions of the conflicting sightings.
	conflicts []int
	// recheck are the positions of one conflicting sighting per stored
	// transaction whose pending status or empty settlement, filled by
	// another transaction since the probe, would change its reason.
	recheck []int
}

func sortWrites(batch []ledger.Sighting, probes []ledger.Probe, plan *ledger.UpsertPlan) *planWrites {
	w := &planWrites{}
	for i := range plan.Txns {
		if t := &plan.Txns[i]; t.Create {
			w.created = append(w.created, t)
		} else {
			w.filled = append(w.filled, t)
		}
	}
	seen := map[[2]string]bool{}
	for i, v := range plan.Verdicts {
		if v.Conflict == "" {
			continue
		}
		w.conflicts = append(w.conflicts, i)
		if probes == nil || !probes[i].Found {
			continue
		}
		st := &probes[i].Txn
		k := [2]string{batch[i].Txn.Provider, batch[i].Txn.ID}
		if (st.Status == ledger.TxnPending || st.Settlement.Currency == "") && !seen[k] {
			seen[k] = true
			w.recheck = append(w.recheck, i)
		}
	}
	return w
}

// write opens the savepoint and writes: new transactions, then new sources
// (each by COPY when either is many), fills and conflicts, in that order
// whichever way, so that concurrent writers take keys in the same order.
func (w *planWrites) write(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, probes []ledger.Probe, plan *ledger.UpsertPlan,
	readBack *ledger.ProviderTxn) error {
	// What the contradictions met is checked first, before the fills
	// change it.
	b := &pgx.Batch{}
	var unchanged int64
	if len(w.recheck) > 0 {
		b.Queue(recheckSQL, recheckArrays(batch, probes, w.recheck)...).QueryRow(func(row pgx.Row) error {
			return row.Scan(&unchanged)
		})
	}
	if len(w.created) >= copyAt || len(plan.Sources) >= copyAt {
		if _, err := tx.Exec(ctx, savepointSQL); err != nil {
			return err
		}
		if err := copyNew(ctx, tx, batch, w.created, plan.Sources); err != nil {
			return err
		}
	} else {
		b.Queue(savepointSQL)
		if len(w.created) > 0 {
			b.Queue(insertTxnsSQL, txnArrays(batch, w.created)...)
		}
		if len(plan.Sources) > 0 {
			b.Queue(insertSourcesSQL, sourceArrays(batch, plan.Sources)...)
		}
	}
	var changed int64
	if len(w.filled) > 0 {
		b.Queue(fillSQL, fillArrays(batch, w.filled)...).Exec(func(tag pgconn.CommandTag) error {
			changed = tag.RowsAffected()
			return nil
		})
	}
	if len(w.conflicts) > 0 {
		b.Queue(quarantineConflictsSQL, conflictArrays(batch, plan, w.conflicts)...)
	}
	if readBack != nil {
		t := &batch[0].Txn
		b.Queue(`SELECT `+txnCols+` FROM provider_txns WHERE provider = $1 AND txn_id = $2`, t.Provider, t.ID).
			QueryRow(func(row pgx.Row) error {
				var err error
				*readBack, err = scanTxn(row)
				return err
			})
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if changed != int64(len(w.filled)) || unchanged != int64(len(w.recheck)) {
		return errChanged
	}
	return nil
}

// readTxn reads the stored transaction of t into into.
func readTxn(ctx context.Context, tx pgx.Tx, t *ledger.ProviderTxn, into *ledger.ProviderTxn) error {
	var err error
	*into, err = scanTxn(tx.QueryRow(ctx, `SELECT `+txnCols+` FROM provider_txns WHERE provider = $1 AND txn_id = $2`,
		t.Provider, t.ID))
	return err
}

// copyNew writes the new transactions and then the new sources with binary
// COPY.
func copyNew(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, created []*ledger.TxnWrite, sources []int) error {
	enc, err := newCopyEncoder(tx)
	if err != nil {
		return err
	}
	pc := tx.Conn().PgConn()
	if len(created) > 0 {
		txns := &copyRows{enc: enc, n: len(created), row: func(i int) error {
			t := created[i].Txn(batch)
			return enc.txn(&t)
		}}
		if _, err := pc.CopyFrom(ctx, txns, copyTxnsSQL); err != nil {
			return fmt.Errorf("copy new transactions: %w", err)
		}
	}
	if len(sources) > 0 {
		rows := &copyRows{enc: enc, n: len(sources), row: func(i int) error { enc.source(&batch[sources[i]]); return nil }}
		if _, err := pc.CopyFrom(ctx, rows, copySourcesSQL); err != nil {
			return fmt.Errorf("copy new sightings: %w", err)
		}
	}
	return nil
}

// txnArrays returns the arguments of insertTxnsSQL.
func txnArrays(batch []ledger.Sighting, created []*ledger.TxnWrite) []any {
	n := len(created)
	var (
		provider, id, typ, status, amount, currency                   = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		reference, providerRef, counterparty, linked, settleCur, rate = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		norm, account                                                 = make([]string, n), make([]string, n)
		occurred, first, updated                                      = make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
		settle                                                        = make([]*string, n)
		minor                                                         = make([]*int64, n)
	)
	for i, w := range created {
		t := w.Txn(batch)
		provider[i], id[i], typ[i], status[i] = t.Provider, t.ID, string(t.Type), string(t.Status)
		amount[i], currency[i], occurred[i] = t.Amount.Value.String(), t.Amount.Currency, utc(t.OccurredAt)
		reference[i], providerRef[i], counterparty[i], linked[i] = t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID
		first[i], updated[i] = utc(t.FirstSeenAt), utc(t.UpdatedAt)
		if !t.Settlement.IsZero() {
			v := t.Settlement.Value.String()
			settle[i] = &v
		}
		settleCur[i], rate[i], norm[i] = t.Settlement.Currency, t.ExchangeRate, ledger.NormalReference(t.Reference)
		account[i] = t.Account
		if m, ok := AmountMinor(t.Amount); ok {
			minor[i] = &m
		}
	}
	return []any{provider, id, typ, status, amount, currency, occurred, reference, providerRef, counterparty, linked,
		first, updated, settle, settleCur, rate, minor, norm, account}
}

// sourceArrays returns the arguments of insertSourcesSQL.
func sourceArrays(batch []ledger.Sighting, positions []int) []any {
	n := len(positions)
	provider, id, channel, ref := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	raw, received := make([][]byte, n), make([]time.Time, n)
	for i, p := range positions {
		s := &batch[p]
		provider[i], id[i], channel[i], ref[i] = s.Txn.Provider, s.Txn.ID, s.Source.Channel, s.Source.Ref
		raw[i], received[i] = s.Source.Raw, utc(s.Source.ReceivedAt)
	}
	return []any{provider, id, channel, ref, raw, received}
}

// fillArrays returns the arguments of fillSQL.
func fillArrays(batch []ledger.Sighting, filled []*ledger.TxnWrite) []any {
	n := len(filled)
	var (
		provider, id, reference, norm, providerRef, counterparty = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		linked, status, settleCur, rate                          = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		fills                                                    = make([]int32, n)
		settle                                                   = make([]*string, n)
		updated                                                  = make([]time.Time, n)
	)
	for i, w := range filled {
		t := w.Txn(batch)
		provider[i], id[i], fills[i] = t.Provider, t.ID, int32(w.Fills)
		reference[i], norm[i], providerRef[i] = t.Reference, ledger.NormalReference(t.Reference), t.ProviderRef
		counterparty[i], linked[i], status[i] = t.Counterparty, t.LinkedID, string(t.Status)
		if !t.Settlement.IsZero() {
			v := t.Settlement.Value.String()
			settle[i] = &v
		}
		settleCur[i], rate[i], updated[i] = t.Settlement.Currency, t.ExchangeRate, utc(t.UpdatedAt)
	}
	return []any{provider, id, fills, reference, norm, providerRef, counterparty, linked, status, settle, settleCur, rate, updated}
}

// recheckArrays returns the arguments of recheckSQL: the keys of the
// sightings at positions, with the status and settlement currency the probe
// read.
func recheckArrays(batch []ledger.Sighting, probes []ledger.Probe, positions []int) []any {
	n := len(positions)
	provider, id, status, settleCur := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for j, i := range positions {
		st := &probes[i].Txn
		provider[j], id[j], status[j], settleCur[j] = batch[i].Txn.Provider, batch[i].Txn.ID, string(st.Status), st.Settlement.Currency
	}
	return []any{provider, id, status, settleCur}
}

// conflictArrays returns the arguments of quarantineConflictsSQL: each
// distinct conflicting sighting once, in batch order.
func conflictArrays(batch []ledger.Sighting, plan *ledger.UpsertPlan, conflicts []int) []any {
	var (
		sources, origins, fields, reasons []string
		raws                              [][]byte
		ats                               []time.Time
	)
	seen := map[string]bool{}
	for _, i := range conflicts {
		q := ledger.ConflictItem(batch[i].Txn, batch[i].Source, plan.Verdicts[i].Conflict)
		if k := ledger.ConflictKey(q); !seen[k] {
			seen[k] = true
			sources, origins, fields, reasons = append(sources, q.Source), append(origins, q.Origin),
				append(fields, q.Field), append(reasons, q.Reason)
			raws, ats = append(raws, q.Raw), append(ats, utc(q.At))
		}
	}
	return []any{sources, origins, fields, reasons, raws, ats}
}

// txn appends a row of provider_txns (txnWriteCols) from t, as
// ledger.TxnWrite.Txn returns it.
func (e *copyEncoder) txn(t *ledger.ProviderTxn) error {
	e.row(19)
	e.text(t.Provider)
	e.text(t.ID)
	e.text(string(t.Type))
	e.text(string(t.Status))
	if err := e.decimal(t.Amount.Value); err != nil {
		return err
	}
	e.text(t.Amount.Currency)
	e.timestamp(utc(t.OccurredAt))
	e.text(t.Reference)
	e.text(t.ProviderRef)
	e.text(t.Counterparty)
	e.text(t.LinkedID)
	e.timestamp(utc(t.FirstSeenAt))
	e.timestamp(utc(t.UpdatedAt))
	if t.Settlement.IsZero() {
		e.null()
	} else if err := e.decimal(t.Settlement.Value); err != nil {
		return err
	}
	e.text(t.Settlement.Currency)
	e.text(t.ExchangeRate)
	e.amountMinor(t.Amount)
	e.normalReference(t.Reference)
	e.text(t.Account)
	return nil
}

// source appends a row of provider_txn_sources (copySourcesSQL's columns).
func (e *copyEncoder) source(s *ledger.Sighting) {
	t, src := &s.Txn, &s.Source
	e.row(6)
	e.text(t.Provider)
	e.text(t.ID)
	e.text(src.Channel)
	e.text(src.Ref)
	e.bytea(src.Raw)
	e.timestamp(utc(src.ReceivedAt))
}
