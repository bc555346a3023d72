package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// dayLayout is the TEXT form of a day.
const dayLayout = "2006-01-02"

func dayText(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Format(dayLayout)
}

func dayOf(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(dayLayout, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored day %q: %w", s.String, err)
	}
	return t, nil
}

// rowsJSON encodes rows, each a list of values, as one JSON array for
// json_each: a batch is one statement whatever its size.
func rowsJSON(rows [][]any) string {
	b, _ := json.Marshal(rows) // strings, numbers, booleans and nulls only
	return string(b)
}

// rowsBankEntries is the multiRow kind of insertBankEntriesSQL.
const rowsBankEntries = 30

// insertBankEntriesSQL inserts n entries of 13 values, leaving those stored.
func insertBankEntriesSQL(n int) string {
	return multiRow(rowsBankEntries, n, `INSERT INTO bank_entries (provider, txn_id, statement, entry_index, booking_date,
	    value_date, reversal, bank_ref, end_to_end_id, counterparty, text, info, code) VALUES `,
		`(?,?,?,?,?,?,?,?,?,?,?,?,?)`, ` ON CONFLICT (provider, txn_id) DO NOTHING`)
}

// RecordBankEntries inserts the entries in multi-row statements of up to
// fastChunk entries (a statement's entries bound as values: JSON read by
// json_each cost five times the write at a million entries), leaving
// those stored.
func (e executor) RecordBankEntries(ctx context.Context, es []ledger.BankEntry) (int, error) {
	for _, b := range es {
		if err := ledger.ValidateBankEntry(b); err != nil {
			return 0, ledger.Wrap("record bank entries", b.Provider+"/"+b.TxnID, err)
		}
	}
	var (
		n    int
		args []any
	)
	err := chunks(es, func(part []ledger.BankEntry) error {
		args = args[:0]
		for _, b := range part {
			rev := 0
			if b.Reversal {
				rev = 1
			}
			args = append(args, b.Provider, b.TxnID, b.Statement, b.Index, dayText(b.BookingDate), dayText(b.ValueDate), rev,
				b.BankRef, b.EndToEndID, b.Counterparty, b.Text, b.Info, b.Code)
		}
		res, err := e.exec(ctx, insertBankEntriesSQL(len(part)), args...)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		n += int(k)
		return err
	})
	if err != nil {
		return 0, ledger.Wrap("record bank entries", es[0].Provider, translate(err))
	}
	return n, nil
}

const bankEntryCols = `provider, txn_id, statement, entry_index, booking_date, value_date, reversal, bank_ref,
	end_to_end_id, counterparty, text, info, code`

// GetBankEntries reads the entries by primary key.
func (e executor) GetBankEntries(ctx context.Context, provider string, ids []string) ([]ledger.BankEntry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := e.query(ctx, `SELECT `+bankEntryCols+` FROM bank_entries
		WHERE provider = ?1 AND txn_id IN (SELECT value FROM json_each(?2))`, provider, jsonList(ids))
	if err != nil {
		return nil, ledger.Wrap("get bank entries", provider, translate(err))
	}
	out, err := collect(rows, func(s scanner) (ledger.BankEntry, error) {
		var (
			b         ledger.BankEntry
			book, val sql.NullString
			rev       int
		)
		if err := s.Scan(&b.Provider, &b.TxnID, &b.Statement, &b.Index, &book, &val, &rev, &b.BankRef, &b.EndToEndID,
			&b.Counterparty, &b.Text, &b.Info, &b.Code); err != nil {
			return b, err
		}
		b.Reversal = rev == 1
		var err error
		if b.BookingDate, err = dayOf(book); err != nil {
			return b, err
		}
		b.ValueDate, err = dayOf(val)
		return b, err
	})
	return out, ledger.Wrap("get bank entries", provider, translate(err))
}

func amountOrNil(a money.Amount) any {
	if a.IsZero() {
		return nil
	}
	return a.Value.String()
}

// RecordPayouts inserts new payouts and fills the empty fields of stored
// ones, in one statement.
func (e executor) RecordPayouts(ctx context.Context, ps []ledger.Payout) (int, error) {
	if len(ps) == 0 {
		return 0, nil
	}
	ps = ledger.MergePayouts(ps)
	rows := make([][]any, len(ps))
	now := time.Now()
	for i, p := range ps {
		if err := ledger.ValidatePayout(p); err != nil {
			return 0, ledger.Wrap("record payouts", p.Provider+"/"+p.ID, err)
		}
		cur := p.Carried.Currency
		if cur == "" {
			cur = p.Left.Currency
		}
		rows[i] = []any{p.Provider, p.ID, nullTS(p.InitiatedAt), nullTS(p.ArrivalAt), ts(p.ExpectedAt()), p.TraceID,
			p.Descriptor, p.Destination, amountOrNil(p.Carried), amountOrNil(p.Left), cur, p.Account}
		if !p.FirstSeenAt.IsZero() {
			now = p.FirstSeenAt
		}
	}
	res, err := e.exec(ctx, `
		INSERT INTO payouts AS p (provider, payout_id, initiated_at, arrival_at, expected_at, trace_id, descriptor, destination,
		    carried_amount, left_amount, balance_currency, first_seen_at, updated_at, account)
		SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8,
		    value->>9, value->>10, ?2, ?2, value->>11
		FROM json_each(?1) WHERE true
		ON CONFLICT (provider, payout_id) DO UPDATE SET
		    initiated_at = COALESCE(p.initiated_at, excluded.initiated_at),
		    arrival_at = COALESCE(p.arrival_at, excluded.arrival_at),
		    expected_at = COALESCE(p.arrival_at, excluded.arrival_at, p.initiated_at, excluded.initiated_at),
		    trace_id = CASE WHEN p.trace_id = '' THEN excluded.trace_id ELSE p.trace_id END,
		    descriptor = CASE WHEN p.descriptor = '' THEN excluded.descriptor ELSE p.descriptor END,
		    destination = CASE WHEN p.destination = '' THEN excluded.destination ELSE p.destination END,
		    carried_amount = COALESCE(p.carried_amount, excluded.carried_amount),
		    left_amount = COALESCE(p.left_amount, excluded.left_amount),
		    balance_currency = CASE WHEN p.balance_currency = '' THEN excluded.balance_currency ELSE p.balance_currency END,
		    updated_at = excluded.updated_at
		WHERE (p.initiated_at IS NULL AND excluded.initiated_at IS NOT NULL)
		   OR (p.arrival_at IS NULL AND excluded.arrival_at IS NOT NULL)
		   OR (p.trace_id = '' AND excluded.trace_id <> '')
		   OR (p.descriptor = '' AND excluded.descriptor <> '')
		   OR (p.destination = '' AND excluded.destination <> '')
		   OR (p.carried_amount IS NULL AND excluded.carried_amount IS NOT NULL)
		   OR (p.left_amount IS NULL AND excluded.left_amount IS NOT NULL)`, rowsJSON(rows), ts(now))
	if err != nil {
		return 0, ledger.Wrap("record payouts", ps[0].Provider, translate(err))
	}
	n, err := res.RowsAffected()
	return int(n), ledger.Wrap("record payouts", ps[0].Provider, translate(err))
}

// RecordPayoutItems inserts the items in one statement, leaving those
// stored.
func (e executor) RecordPayoutItems(ctx context.Context, items []ledger.PayoutItem) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	rows := make([][]any, len(items))
	now := time.Now()
	for i, it := range items {
		if err := ledger.ValidatePayoutItem(it); err != nil {
			return 0, ledger.Wrap("record payout items", it.Provider+"/"+it.PayoutID, err)
		}
		rows[i] = []any{it.Provider, it.PayoutID, it.TxnID}
		if !it.FirstSeenAt.IsZero() {
			now = it.FirstSeenAt
		}
	}
	res, err := e.exec(ctx, `
		INSERT INTO payout_items (provider, payout_id, txn_id, first_seen_at)
		SELECT value->>0, value->>1, value->>2, ?2 FROM json_each(?1) WHERE true
		ON CONFLICT DO NOTHING`, rowsJSON(rows), ts(now))
	if err != nil {
		return 0, ledger.Wrap("record payout items", items[0].Provider, translate(err))
	}
	n, err := res.RowsAffected()
	return int(n), ledger.Wrap("record payout items", items[0].Provider, translate(err))
}

const payoutCols = `provider, payout_id, initiated_at, arrival_at, trace_id, descriptor, destination, carried_amount,
	left_amount, balance_currency, first_seen_at, updated_at, account`

func scanPayout(s scanner) (ledger.Payout, error) {
	var (
		p               ledger.Payout
		init, arr       sql.NullString
		carried, left   sql.NullString
		cur, first, upd string
	)
	if err := s.Scan(&p.Provider, &p.ID, &init, &arr, &p.TraceID, &p.Descriptor, &p.Destination, &carried, &left, &cur,
		&first, &upd, &p.Account); err != nil {
		return p, err
	}
	var err error
	if p.InitiatedAt, err = parseNullTS(init); err != nil {
		return p, err
	}
	if p.ArrivalAt, err = parseNullTS(arr); err != nil {
		return p, err
	}
	if p.FirstSeenAt, err = parseTS(first); err != nil {
		return p, err
	}
	if p.UpdatedAt, err = parseTS(upd); err != nil {
		return p, err
	}
	for _, a := range []struct {
		dst *money.Amount
		s   sql.NullString
	}{{&p.Carried, carried}, {&p.Left, left}} {
		if a.s.Valid {
			if *a.dst, err = money.Parse(a.s.String, cur); err != nil {
				return p, fmt.Errorf("stored payout %s: %w", p.ID, err)
			}
		}
	}
	return p, nil
}

// accountsJSON is accounts as a JSON list, or nil (no filter) when unset.
func accountsJSON(accounts []string) any {
	if accounts == nil {
		return nil
	}
	return jsonList(accounts)
}

// FindPayouts unites the look-ups by expected time, id and trace.
func (e executor) FindPayouts(ctx context.Context, l ledger.PayoutLookup) ([]ledger.Payout, error) {
	byTime := !l.From.IsZero() && !l.To.IsZero()
	if !byTime && len(l.IDs)+len(l.TraceIDs) == 0 {
		return nil, nil
	}
	rows, err := e.query(ctx, `
		WITH k(payout_id) AS (
		    SELECT payout_id FROM payouts WHERE provider = ?1 AND ?2 AND expected_at >= ?3 AND expected_at < ?4
		    UNION
		    SELECT payout_id FROM payouts WHERE provider = ?1 AND payout_id IN (SELECT value FROM json_each(?5))
		    UNION
		    SELECT payout_id FROM payouts WHERE provider = ?1 AND trace_id IN (SELECT value FROM json_each(?6)) AND trace_id <> '')
		SELECT `+payoutCols+` FROM payouts WHERE provider = ?1 AND payout_id IN (SELECT payout_id FROM k)
		    AND (?7 IS NULL OR account IN (SELECT value FROM json_each(?7)))`,
		l.Provider, byTime, ts(l.From), ts(l.To), jsonList(l.IDs), jsonList(l.TraceIDs), accountsJSON(l.Accounts))
	if err != nil {
		return nil, ledger.Wrap("find payouts", l.Provider, translate(err))
	}
	out, err := collect(rows, scanPayout)
	return out, ledger.Wrap("find payouts", l.Provider, translate(err))
}

func scanItem(s scanner) (ledger.PayoutItem, error) {
	var (
		it    ledger.PayoutItem
		first string
	)
	if err := s.Scan(&it.Provider, &it.PayoutID, &it.TxnID, &first); err != nil {
		return it, err
	}
	var err error
	it.FirstSeenAt, err = parseTS(first)
	return it, err
}

// PayoutItems reads the items of payouts by primary key prefix.
func (e executor) PayoutItems(ctx context.Context, provider string, payoutIDs []string) ([]ledger.PayoutItem, error) {
	if len(payoutIDs) == 0 {
		return nil, nil
	}
	rows, err := e.query(ctx, `SELECT provider, payout_id, txn_id, first_seen_at FROM payout_items
		WHERE provider = ?1 AND payout_id IN (SELECT value FROM json_each(?2)) ORDER BY payout_id, txn_id`,
		provider, jsonList(payoutIDs))
	if err != nil {
		return nil, ledger.Wrap("payout items", provider, translate(err))
	}
	out, err := collect(rows, scanItem)
	return out, ledger.Wrap("payout items", provider, translate(err))
}

// ItemsOfTxns reads the items by transaction (payout_items_txn_idx).
func (e executor) ItemsOfTxns(ctx context.Context, provider string, txnIDs []string) ([]ledger.PayoutItem, error) {
	if len(txnIDs) == 0 {
		return nil, nil
	}
	rows, err := e.query(ctx, `SELECT provider, payout_id, txn_id, first_seen_at FROM payout_items
		WHERE provider = ?1 AND txn_id IN (SELECT value FROM json_each(?2)) ORDER BY txn_id, payout_id`,
		provider, jsonList(txnIDs))
	if err != nil {
		return nil, ledger.Wrap("payout items of txns", provider, translate(err))
	}
	out, err := collect(rows, scanItem)
	return out, ledger.Wrap("payout items of txns", provider, translate(err))
}
