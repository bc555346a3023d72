package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// dayLayout is how days travel to and from date columns: as text, cast in
// SQL, so that no zone is ever applied to them.
const dayLayout = "2006-01-02"

func dayText(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.Format(dayLayout)
	return &s
}

func dayOf(s *string) (time.Time, error) {
	if s == nil || *s == "" {
		return time.Time{}, nil
	}
	return time.Parse(dayLayout, *s)
}

// RecordBankEntries stores the entries, leaving those stored: many at once
// by binary COPY in a savepoint (a statement's new entries, the common
// case), else, or once the COPY meets a stored key, in one statement of
// arrays unnested with ON CONFLICT DO NOTHING.
func (e executor) RecordBankEntries(ctx context.Context, es []ledger.BankEntry) (int, error) {
	return e.recordBankEntries(ctx, es, nil)
}

// RecordBankEntries is the executor's, told whether an earlier COPY of the
// transaction met stored entries (a statement imported again), in which
// case the next batches go straight to the insert.
func (t *tx) RecordBankEntries(ctx context.Context, es []ledger.BankEntry) (int, error) {
	return t.recordBankEntries(ctx, es, &t.memo.bankStored)
}

func (e executor) recordBankEntries(ctx context.Context, es []ledger.BankEntry, stored *bool) (int, error) {
	if len(es) == 0 {
		return 0, nil
	}
	for _, b := range es {
		if err := ledger.ValidateBankEntry(b); err != nil {
			return 0, ledger.Wrap("record bank entries", b.Provider+"/"+b.TxnID, err)
		}
	}
	ptx, inTx := e.db.(pgx.Tx)
	if len(es) < copyAt || !inTx || (stored != nil && *stored) {
		return e.insertBankEntries(ctx, es)
	}
	copied, err := copyBankEntries(ctx, ptx, es)
	if err != nil || copied {
		return len(es), ledger.Wrap("record bank entries", es[0].Provider, translate(err))
	}
	if stored != nil {
		*stored = true
	}
	return e.insertBankEntries(ctx, es)
}

// copyBankEntries writes the entries by binary COPY in a savepoint. It
// returns false, having written nothing, when one of them is stored.
func copyBankEntries(ctx context.Context, tx pgx.Tx, es []ledger.BankEntry) (bool, error) {
	enc, err := newCopyEncoder(tx)
	if err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, savepointSQL); err != nil {
		return false, err
	}
	rows := &copyRows{enc: enc, n: len(es), row: func(i int) error { enc.bankEntry(&es[i]); return nil }}
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, rows, copyBankEntriesSQL); err != nil {
		if !uniqueViolation(err) {
			return false, err
		}
		_, err = tx.Exec(ctx, rollbackSQL)
		return false, err
	}
	_, err = tx.Exec(ctx, releaseSQL)
	return err == nil, err
}

const copyBankEntriesSQL = `COPY bank_entries (provider, txn_id, statement, entry_index, booking_date, value_date, reversal,
	bank_ref, end_to_end_id, counterparty, text, info, code) FROM STDIN (FORMAT binary)`

// bankEntry appends b as a row of copyBankEntriesSQL.
func (e *copyEncoder) bankEntry(b *ledger.BankEntry) {
	e.row(13)
	e.text(b.Provider)
	e.text(b.TxnID)
	e.text(b.Statement)
	e.int4(int32(b.Index))
	e.date(b.BookingDate)
	e.date(b.ValueDate)
	e.bool(b.Reversal)
	e.text(b.BankRef)
	e.text(b.EndToEndID)
	e.text(b.Counterparty)
	e.text(b.Text)
	e.text(b.Info)
	e.text(b.Code)
}

// insertBankEntries inserts the entries in one statement (arrays unnested),
// leaving those stored.
func (e executor) insertBankEntries(ctx context.Context, es []ledger.BankEntry) (int, error) {
	n := len(es)
	var (
		prov, id, stmt, ref, e2e, party, text, info, code = make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		idx       = make([]int32, n)
		book, val = make([]*string, n), make([]*string, n)
		rev       = make([]bool, n)
	)
	for i, b := range es {
		prov[i], id[i], stmt[i], idx[i] = b.Provider, b.TxnID, b.Statement, int32(b.Index)
		book[i], val[i], rev[i] = dayText(b.BookingDate), dayText(b.ValueDate), b.Reversal
		ref[i], e2e[i], party[i], text[i], info[i], code[i] = b.BankRef, b.EndToEndID, b.Counterparty, b.Text, b.Info, b.Code
	}
	tag, err := e.db.Exec(ctx, `
		INSERT INTO bank_entries (provider, txn_id, statement, entry_index, booking_date, value_date, reversal, bank_ref,
		    end_to_end_id, counterparty, text, info, code)
		SELECT p, i, s, x, b::date, v::date, r, br, ee, cp, tx, inf, cd
		FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::bool[], $8::text[], $9::text[],
		    $10::text[], $11::text[], $12::text[], $13::text[]) AS u(p, i, s, x, b, v, r, br, ee, cp, tx, inf, cd)
		ON CONFLICT (provider, txn_id) DO NOTHING`,
		prov, id, stmt, idx, book, val, rev, ref, e2e, party, text, info, code)
	if err != nil {
		return 0, ledger.Wrap("record bank entries", es[0].Provider, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

const bankEntryCols = `provider, txn_id, statement, entry_index, booking_date::text, value_date::text, reversal, bank_ref,
	end_to_end_id, counterparty, text, info, code`

// GetBankEntries reads the entries by primary key.
func (e executor) GetBankEntries(ctx context.Context, provider string, ids []string) ([]ledger.BankEntry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `SELECT `+bankEntryCols+` FROM bank_entries WHERE provider = $1 AND txn_id = ANY($2)`,
		provider, nonNil(ids))
	if err != nil {
		return nil, ledger.Wrap("get bank entries", provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.BankEntry, error) {
		var (
			b         ledger.BankEntry
			idx       int32
			book, val *string
		)
		if err := r.Scan(&b.Provider, &b.TxnID, &b.Statement, &idx, &book, &val, &b.Reversal, &b.BankRef, &b.EndToEndID,
			&b.Counterparty, &b.Text, &b.Info, &b.Code); err != nil {
			return b, err
		}
		b.Index = int(idx)
		var err error
		if b.BookingDate, err = dayOf(book); err != nil {
			return b, err
		}
		b.ValueDate, err = dayOf(val)
		return b, err
	})
	return out, ledger.Wrap("get bank entries", provider, translate(err))
}

func amountText(a money.Amount) *string {
	if a.IsZero() {
		return nil
	}
	s := a.Value.String()
	return &s
}

// RecordPayouts inserts new payouts and fills the empty fields of stored
// ones, in one statement.
func (e executor) RecordPayouts(ctx context.Context, ps []ledger.Payout) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	ps = ledger.MergePayouts(ps)
	n := len(ps)
	var (
		prov, id, trace, desc, dest, cur, acct = make([]string, n), make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n)
		init, arr, exp = make([]*time.Time, n), make([]*time.Time, n), make([]time.Time, n)
		carried, left  = make([]*string, n), make([]*string, n)
		now            = time.Now().UTC()
	)
	for i, p := range ps {
		if err := ledger.ValidatePayout(p); err != nil {
			return 0, ledger.Wrap("record payouts", p.Provider+"/"+p.ID, err)
		}
		prov[i], id[i], trace[i], desc[i], dest[i], acct[i] = p.Provider, p.ID, p.TraceID, p.Descriptor, p.Destination, p.Account
		init[i], arr[i], exp[i] = nullTime(p.InitiatedAt), nullTime(p.ArrivalAt), utc(p.ExpectedAt())
		carried[i], left[i] = amountText(p.Carried), amountText(p.Left)
		if !p.Carried.IsZero() {
			cur[i] = p.Carried.Currency
		} else if !p.Left.IsZero() {
			cur[i] = p.Left.Currency
		}
		if !p.FirstSeenAt.IsZero() {
			now = utc(p.FirstSeenAt)
		}
	}
	tag, err := e.db.Exec(ctx, `
		INSERT INTO payouts AS p (provider, payout_id, initiated_at, arrival_at, expected_at, trace_id, descriptor, destination,
		    carried_amount, left_amount, balance_currency, first_seen_at, updated_at, account)
		SELECT pr, pi, ia, aa, ea, tr, de, ds, ca::numeric, la::numeric, bc, $12, $12, ac
		FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[], $6::text[], $7::text[],
		    $8::text[], $9::text[], $10::text[], $11::text[], $13::text[]) AS u(pr, pi, ia, aa, ea, tr, de, ds, ca, la, bc, ac)
		ON CONFLICT (provider, payout_id) DO UPDATE SET
		    initiated_at = COALESCE(p.initiated_at, EXCLUDED.initiated_at),
		    arrival_at = COALESCE(p.arrival_at, EXCLUDED.arrival_at),
		    expected_at = COALESCE(p.arrival_at, EXCLUDED.arrival_at, p.initiated_at, EXCLUDED.initiated_at),
		    trace_id = CASE WHEN p.trace_id = '' THEN EXCLUDED.trace_id ELSE p.trace_id END,
		    descriptor = CASE WHEN p.descriptor = '' THEN EXCLUDED.descriptor ELSE p.descriptor END,
		    destination = CASE WHEN p.destination = '' THEN EXCLUDED.destination ELSE p.destination END,
		    carried_amount = COALESCE(p.carried_amount, EXCLUDED.carried_amount),
		    left_amount = COALESCE(p.left_amount, EXCLUDED.left_amount),
		    balance_currency = CASE WHEN p.balance_currency = '' THEN EXCLUDED.balance_currency ELSE p.balance_currency END,
		    updated_at = EXCLUDED.updated_at
		WHERE (p.initiated_at IS NULL AND EXCLUDED.initiated_at IS NOT NULL)
		   OR (p.arrival_at IS NULL AND EXCLUDED.arrival_at IS NOT NULL)
		   OR (p.trace_id = '' AND EXCLUDED.trace_id <> '')
		   OR (p.descriptor = '' AND EXCLUDED.descriptor <> '')
		   OR (p.destination = '' AND EXCLUDED.destination <> '')
		   OR (p.carried_amount IS NULL AND EXCLUDED.carried_amount IS NOT NULL)
		   OR (p.left_amount IS NULL AND EXCLUDED.left_amount IS NOT NULL)`,
		prov, id, init, arr, exp, trace, desc, dest, carried, left, cur, now, acct)
	if err != nil {
		return 0, ledger.Wrap("record payouts", ps[0].Provider, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// RecordPayoutItems inserts the items in one statement, leaving those
// stored.
func (e executor) RecordPayoutItems(ctx context.Context, items []ledger.PayoutItem) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	n := len(items)
	prov, payout, txn := make([]string, n), make([]string, n), make([]string, n)
	now := time.Now().UTC()
	for i, it := range items {
		if err := ledger.ValidatePayoutItem(it); err != nil {
			return 0, ledger.Wrap("record payout items", it.Provider+"/"+it.PayoutID, err)
		}
		prov[i], payout[i], txn[i] = it.Provider, it.PayoutID, it.TxnID
		if !it.FirstSeenAt.IsZero() {
			now = utc(it.FirstSeenAt)
		}
	}
	tag, err := e.db.Exec(ctx, `
		INSERT INTO payout_items (provider, payout_id, txn_id, first_seen_at)
		SELECT p, po, t, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS u(p, po, t)
		ON CONFLICT DO NOTHING`, prov, payout, txn, now)
	if err != nil {
		return 0, ledger.Wrap("record payout items", items[0].Provider, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

const payoutCols = `provider, payout_id, initiated_at, arrival_at, trace_id, descriptor, destination, carried_amount,
	left_amount, balance_currency, first_seen_at, updated_at, account`

func scanPayout(r pgx.Row) (ledger.Payout, error) {
	var (
		p             ledger.Payout
		init, arr     *time.Time
		carried, left decimal.NullDecimal
		cur           string
	)
	if err := r.Scan(&p.Provider, &p.ID, &init, &arr, &p.TraceID, &p.Descriptor, &p.Destination, &carried, &left, &cur,
		&p.FirstSeenAt, &p.UpdatedAt, &p.Account); err != nil {
		return p, err
	}
	p.InitiatedAt, p.ArrivalAt = fromNull(init), fromNull(arr)
	if carried.Valid {
		p.Carried = money.Amount{Value: carried.Decimal, Currency: cur}
	}
	if left.Valid {
		p.Left = money.Amount{Value: left.Decimal, Currency: cur}
	}
	p.FirstSeenAt, p.UpdatedAt = p.FirstSeenAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

// FindPayouts unites the look-ups by expected time, id and trace.
func (e executor) FindPayouts(ctx context.Context, l ledger.PayoutLookup) ([]ledger.Payout, error) {
	byTime := !l.From.IsZero() && !l.To.IsZero()
	if !byTime && len(l.IDs)+len(l.TraceIDs) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `
		WITH k AS (
		    SELECT payout_id FROM payouts WHERE provider = $1 AND $2 AND expected_at >= $3 AND expected_at < $4
		    UNION
		    SELECT payout_id FROM payouts WHERE provider = $1 AND payout_id = ANY($5)
		    UNION
		    SELECT payout_id FROM payouts WHERE provider = $1 AND trace_id = ANY($6) AND trace_id <> '')
		SELECT `+payoutCols+` FROM payouts WHERE provider = $1 AND payout_id IN (SELECT payout_id FROM k)
		    AND ($7::text[] IS NULL OR account = ANY($7))`,
		l.Provider, byTime, utc(l.From), utc(l.To), nonNil(l.IDs), nonNil(l.TraceIDs), l.Accounts)
	if err != nil {
		return nil, ledger.Wrap("find payouts", l.Provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Payout, error) { return scanPayout(r) })
	return out, ledger.Wrap("find payouts", l.Provider, translate(err))
}

func scanItems(rows pgx.Rows) ([]ledger.PayoutItem, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.PayoutItem, error) {
		var it ledger.PayoutItem
		err := r.Scan(&it.Provider, &it.PayoutID, &it.TxnID, &it.FirstSeenAt)
		it.FirstSeenAt = it.FirstSeenAt.UTC()
		return it, err
	})
}

// PayoutItems reads the items of payouts by primary key prefix.
func (e executor) PayoutItems(ctx context.Context, provider string, payoutIDs []string) ([]ledger.PayoutItem, error) {
	if len(payoutIDs) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `SELECT provider, payout_id, txn_id, first_seen_at FROM payout_items
		WHERE provider = $1 AND payout_id = ANY($2) ORDER BY payout_id, txn_id`, provider, nonNil(payoutIDs))
	if err != nil {
		return nil, ledger.Wrap("payout items", provider, translate(err))
	}
	out, err := scanItems(rows)
	return out, ledger.Wrap("payout items", provider, translate(err))
}

// ItemsOfTxns reads the items by transaction (payout_items_txn_idx).
func (e executor) ItemsOfTxns(ctx context.Context, provider string, txnIDs []string) ([]ledger.PayoutItem, error) {
	if len(txnIDs) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `SELECT provider, payout_id, txn_id, first_seen_at FROM payout_items
		WHERE provider = $1 AND txn_id = ANY($2) ORDER BY txn_id, payout_id`, provider, nonNil(txnIDs))
	if err != nil {
		return nil, ledger.Wrap("payout items of txns", provider, translate(err))
	}
	out, err := scanItems(rows)
	return out, ledger.Wrap("payout items of txns", provider, translate(err))
}
