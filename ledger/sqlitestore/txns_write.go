package sqlitestore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// writePlan writes what ClassifySightings decided for the batch: the new
// transactions, the fills of stored ones, the new sources and the
// conflicts, in that order.
func (e executor) writePlan(ctx context.Context, batch []ledger.Sighting, plan *ledger.UpsertPlan) error {
	if err := e.insertTxns(ctx, batch, plan.Txns); err != nil {
		return fmt.Errorf("insert new transactions: %w", err)
	}
	if err := e.fillTxns(ctx, batch, plan.Txns); err != nil {
		return fmt.Errorf("fill in transactions: %w", err)
	}
	if err := e.insertSources(ctx, batch, plan.Sources); err != nil {
		return fmt.Errorf("insert sources: %w", err)
	}
	if err := e.quarantineConflicts(ctx, batch, plan.Verdicts); err != nil {
		return fmt.Errorf("quarantine conflicting sightings: %w", err)
	}
	return nil
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

// The bulk inserts (of transactions, sources, imported intents and their
// attempts) are INSERT OR FAIL. A multi-row INSERT that may abort keeps a
// statement journal, a copy of every page it changes that an earlier
// statement of the transaction changed, to undo its own rows: at a
// statement per thousand rows that copying cost an import a tenth of its
// time. With OR FAIL a failing statement keeps the rows it inserted before
// the failure; each of these runs in a savepoint that is rolled back on
// failure (unlessStored), or fails its caller's transaction, which is then
// rolled back as PostgreSQL would.
func insertTxnsSQL(n int) string {
	return multiRow(rowsTxns, n, `INSERT OR FAIL INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at,
	    reference, provider_ref, counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount,
	    settlement_currency, exchange_rate, ref_norm, account) VALUES `, `(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, ``)
}

func newTxnRow(args []any, t *ledger.ProviderTxn, at *tsMemo) []any {
	first := at.ts(t.FirstSeenAt)
	updated := first
	if !t.UpdatedAt.Equal(t.FirstSeenAt) {
		updated = ts(t.UpdatedAt)
	}
	return append(args, t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Text(), t.Amount.Currency,
		ts(t.OccurredAt), t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, first, updated, nullAmount(t.Settlement),
		t.Settlement.Currency, t.ExchangeRate, ledger.NormalReference(t.Reference), t.Account)
}

// The values of a row of a shared insert that the rows of a statement may
// all hold alike (a statement's payments: one type, one status, no
// provider reference, no link, no settlement amount). Those a batch's
// shared rows hold alike are bound once per statement, after the six
// shared parameters, in this order.
const (
	sameType = 1 << iota
	sameStatus
	sameProviderRef
	sameLinked
	sameSettlement
	sameAll = 1<<iota - 1
)

// sharedShapes bounds the sets of values held alike that one transaction
// binds once (beyond none): each is a statement of its own per row count,
// kept until the transaction ends.
const sharedShapes = 2

// insertSharedTxnsSQL inserts n new transactions whose provider,
// currency, time of receipt (first seen and updated), settlement currency,
// exchange rate and account are the first six parameters, followed by the
// values in same (sameType...), each bound once; each row binds the rest
// (sharedTxnRow) as anonymous parameters, numbered after those, which the
// driver binds without looking their names up.
func insertSharedTxnsSQL(n int, same int) string {
	col, param := 0, 6
	next := func(bit int) string {
		if same&bit != 0 {
			param++
			return fmt.Sprintf("?%d", param)
		}
		col++
		return fmt.Sprintf("column%d", col)
	}
	id := next(0)
	typ, status := next(sameType), next(sameStatus)
	amount, occurred, ref := next(0), next(0), next(0)
	providerRef, counterparty, linked := next(sameProviderRef), next(0), next(sameLinked)
	settlement, refNorm := next(sameSettlement), next(0)
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", col), ",") + ")"
	return multiRow(rowsSharedTxnsShape+same, n, `INSERT OR FAIL INTO provider_txns (provider, txn_id, type, status, amount, currency, occurred_at,
	    reference, provider_ref, counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount,
	    settlement_currency, exchange_rate, ref_norm, account)
	SELECT ?1, `+id+`, `+typ+`, `+status+`, `+amount+`, ?2, `+occurred+`, `+ref+`, `+providerRef+`, `+counterparty+`, `+linked+`, ?3, ?3, `+
		settlement+`, ?4, ?5, `+refNorm+`, ?6
	FROM (VALUES `, row, `)`)
}

// sharedValues appends to args the values in same of t, bound once per
// statement.
func sharedValues(args []any, t *ledger.ProviderTxn, same int) []any {
	if same&sameType != 0 {
		args = append(args, string(t.Type))
	}
	if same&sameStatus != 0 {
		args = append(args, string(t.Status))
	}
	if same&sameProviderRef != 0 {
		args = append(args, t.ProviderRef)
	}
	if same&sameLinked != 0 {
		args = append(args, t.LinkedID)
	}
	if same&sameSettlement != 0 {
		args = append(args, nullAmount(t.Settlement))
	}
	return args
}

// sharedTxnRow appends to args the values of t's row that are not in
// same.
func sharedTxnRow(args []any, t *ledger.ProviderTxn, same int) []any {
	args = append(args, t.ID)
	if same&sameType == 0 {
		args = append(args, string(t.Type))
	}
	if same&sameStatus == 0 {
		args = append(args, string(t.Status))
	}
	args = append(args, t.Amount.Text(), ts(t.OccurredAt), t.Reference)
	if same&sameProviderRef == 0 {
		args = append(args, t.ProviderRef)
	}
	args = append(args, t.Counterparty)
	if same&sameLinked == 0 {
		args = append(args, t.LinkedID)
	}
	if same&sameSettlement == 0 {
		args = append(args, nullAmount(t.Settlement))
	}
	return append(args, ledger.NormalReference(t.Reference))
}

// storedAlike reports whether a and b are stored as the same value
// (nullAmount).
func storedAlike(a, b money.Amount) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Text() == b.Text()
}

// alike returns which values of sameAll every one of txns holds as the
// first does.
func alike(txns []*ledger.ProviderTxn) int {
	same := sameAll
	f := txns[0]
	for _, t := range txns[1:] {
		if t.Type != f.Type {
			same &^= sameType
		}
		if t.Status != f.Status {
			same &^= sameStatus
		}
		if t.ProviderRef != f.ProviderRef {
			same &^= sameProviderRef
		}
		if t.LinkedID != f.LinkedID {
			same &^= sameLinked
		}
		if !storedAlike(t.Settlement, f.Settlement) {
			same &^= sameSettlement
		}
		if same == 0 {
			break
		}
	}
	return same
}

// insertTxns inserts the transactions the batch creates, in key order.
// Binding a value costs about as much as the engine's work on it, so the
// rows that share the first row's provider, account, currency, settlement currency,
// exchange rate and time of receipt (a file's rows mostly do) bind those
// once per statement; the others bind all their values.
func (e executor) insertTxns(ctx context.Context, batch []ledger.Sighting, writes []ledger.TxnWrite) error {
	var created []*ledger.TxnWrite
	for i := range writes {
		if writes[i].Create {
			created = append(created, &writes[i])
		}
	}
	if len(created) == 0 {
		return nil
	}
	first := created[0].Txn(batch)
	shares := func(t *ledger.ProviderTxn) bool {
		return t.Provider == first.Provider && t.Account == first.Account && t.Amount.Currency == first.Amount.Currency &&
			t.Settlement.Currency == first.Settlement.Currency && t.ExchangeRate == first.ExchangeRate &&
			t.FirstSeenAt.Equal(first.FirstSeenAt) && t.UpdatedAt.Equal(first.FirstSeenAt)
	}
	var (
		shared []*ledger.ProviderTxn
		other  []*ledger.TxnWrite
	)
	for _, w := range created {
		if t := w.Txn(batch); shares(&t) {
			shared = append(shared, &t)
		} else {
			other = append(other, w)
		}
	}
	var (
		at   tsMemo
		args = make([]any, 0, 18*min(fastChunk, len(created)))
	)
	same := 0
	if len(shared) > 1 {
		same = e.txStmts.shape(alike(shared))
	}
	err := chunks(shared, func(part []*ledger.ProviderTxn) error {
		args = append(args[:0], first.Provider, first.Amount.Currency, at.ts(first.FirstSeenAt), first.Settlement.Currency,
			first.ExchangeRate, first.Account)
		args = sharedValues(args, part[0], same)
		for _, t := range part {
			args = sharedTxnRow(args, t, same)
		}
		_, err := e.exec(ctx, insertSharedTxnsSQL(len(part), same), args...)
		return err
	})
	if err != nil {
		return err
	}
	return chunks(other, func(part []*ledger.TxnWrite) error {
		args = args[:0]
		for _, w := range part {
			t := w.Txn(batch)
			args = newTxnRow(args, &t, &at)
		}
		_, err := e.exec(ctx, insertTxnsSQL(len(part)), args...)
		return err
	})
}

// fillSQL fills the fields in the bitmask ?3 (the ledger.Fill values) of
// a stored transaction, each only while it is empty (a pending status).
const fillSQL = `
	UPDATE provider_txns
	SET reference = CASE WHEN ?3 & 1 THEN ?4 ELSE reference END,
	    ref_norm = CASE WHEN ?3 & 1 THEN ?5 ELSE ref_norm END,
	    provider_ref = CASE WHEN ?3 & 2 THEN ?6 ELSE provider_ref END,
	    counterparty = CASE WHEN ?3 & 4 THEN ?7 ELSE counterparty END,
	    linked_txn_id = CASE WHEN ?3 & 8 THEN ?8 ELSE linked_txn_id END,
	    status = CASE WHEN ?3 & 16 THEN ?9 ELSE status END,
	    settlement_amount = CASE WHEN ?3 & 32 THEN ?10 ELSE settlement_amount END,
	    settlement_currency = CASE WHEN ?3 & 32 THEN ?11 ELSE settlement_currency END,
	    exchange_rate = CASE WHEN ?3 & 32 THEN ?12 ELSE exchange_rate END,
	    updated_at = ?13
	WHERE provider = ?1 AND txn_id = ?2
	  AND (?3 & 1 = 0 OR reference = '') AND (?3 & 2 = 0 OR provider_ref = '') AND (?3 & 4 = 0 OR counterparty = '')
	  AND (?3 & 8 = 0 OR linked_txn_id = '') AND (?3 & 16 = 0 OR status = 'pending')
	  AND (?3 & 32 = 0 OR settlement_currency = '')`

// fillTxns fills the stored transactions the batch fills, one statement
// each: a batch seldom fills many.
func (e executor) fillTxns(ctx context.Context, batch []ledger.Sighting, writes []ledger.TxnWrite) error {
	for i := range writes {
		w := &writes[i]
		if w.Create {
			continue
		}
		t := w.Txn(batch)
		res, err := e.exec(ctx, fillSQL, t.Provider, t.ID, int64(w.Fills), t.Reference, ledger.NormalReference(t.Reference),
			t.ProviderRef, t.Counterparty, t.LinkedID, string(t.Status), nullAmount(t.Settlement), t.Settlement.Currency,
			t.ExchangeRate, ts(t.UpdatedAt))
		if err != nil {
			return err
		}
		// The transaction excludes other writers: what the probe found
		// empty is empty still.
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("fill %s/%s: %d rows changed (%v)", t.Provider, t.ID, n, err)
		}
	}
	return nil
}

// insertSharedSourcesSQL inserts n sources whose provider, channel and
// time of receipt are the first three parameters.
func insertSharedSourcesSQL(n int) string {
	return multiRow(rowsSharedSources, n, `INSERT OR FAIL INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
	SELECT ?1, column1, ?2, column2, column3, ?3 FROM (VALUES `, `(?,?,?)`, `)`)
}

func insertSourcesSQL(n int) string {
	return multiRow(rowsSources, n, `INSERT OR FAIL INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at) VALUES `,
		`(?,?,?,?,?,?)`, ``)
}

// insertSources inserts the sources of the sightings at positions, in key
// order: those that share the first one's provider, channel and time of
// receipt bind them once per statement.
func (e executor) insertSources(ctx context.Context, batch []ledger.Sighting, positions []int) error {
	if len(positions) == 0 {
		return nil
	}
	first := &batch[positions[0]]
	var shared, other []int
	for _, i := range positions {
		if s := &batch[i]; s.Txn.Provider == first.Txn.Provider && s.Source.Channel == first.Source.Channel &&
			s.Source.ReceivedAt.Equal(first.Source.ReceivedAt) {
			shared = append(shared, i)
		} else {
			other = append(other, i)
		}
	}
	var (
		at   tsMemo
		args = make([]any, 0, 6*min(fastChunk, len(positions)))
	)
	err := chunks(shared, func(part []int) error {
		args = append(args[:0], first.Txn.Provider, first.Source.Channel, at.ts(first.Source.ReceivedAt))
		for _, i := range part {
			args = append(args, batch[i].Txn.ID, batch[i].Source.Ref, batch[i].Source.Raw)
		}
		_, err := e.exec(ctx, insertSharedSourcesSQL(len(part)), args...)
		return err
	})
	if err != nil {
		return err
	}
	return chunks(other, func(part []int) error {
		args = args[:0]
		for _, i := range part {
			s := &batch[i]
			args = append(args, s.Txn.Provider, s.Txn.ID, s.Source.Channel, s.Source.Ref, s.Source.Raw, at.ts(s.Source.ReceivedAt))
		}
		_, err := e.exec(ctx, insertSourcesSQL(len(part)), args...)
		return err
	})
}

const quarantineConflictSQL = `
	INSERT INTO quarantine (source, origin, line, field, reason, raw, received_at)
	SELECT ?1, ?2, 0, ?3, ?4, ?5, ?6
	WHERE NOT EXISTS (SELECT 1 FROM quarantine
	    WHERE source = ?1 AND origin = ?2 AND field = ?3 AND reason = ?4 AND raw IS ?5)`

// quarantineConflicts quarantines each conflicting sighting, in batch
// order, unless it is there already.
func (e executor) quarantineConflicts(ctx context.Context, batch []ledger.Sighting, verdicts []ledger.SightingVerdict) error {
	for i, v := range verdicts {
		if v.Conflict == "" {
			continue
		}
		q := ledger.ConflictItem(batch[i].Txn, batch[i].Source, v.Conflict)
		if _, err := e.exec(ctx, quarantineConflictSQL, q.Source, q.Origin, q.Field, q.Reason, q.Raw, ts(q.At)); err != nil {
			return err
		}
	}
	return nil
}
