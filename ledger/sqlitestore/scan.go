package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// ScanIntents streams the window's intents, text read into borrowed bytes.
func (e executor) ScanIntents(ctx context.Context, f ledger.IntentFilter, fn func(*ledger.IntentRow) error) error {
	rows, err := e.query(ctx, `
		SELECT key, reference, customer, amount, currency, state, created_at, updated_at, lease_expires_at, refund_of,
		       kind = 'expected', due_at, tolerance
		FROM intents
		WHERE provider = ?1 AND created_at >= ?2 AND created_at < ?3 AND account = ?4`, f.Provider, ts(f.From), ts(f.To), f.Account)
	if err != nil {
		return ledger.Wrap("scan intents", f.Provider, translate(err))
	}
	defer rows.Close()
	var (
		row                                              ledger.IntentRow
		curs                                             ledger.Currencies
		amount, currency, state, created, updated, lease sql.RawBytes
		due, tol                                         sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan((*sql.RawBytes)(&row.Key), (*sql.RawBytes)(&row.Reference), (*sql.RawBytes)(&row.Customer),
			&amount, &currency, &state, &created, &updated, &lease, (*sql.RawBytes)(&row.RefundOf),
			&row.Expected, &due, &tol); err != nil {
			return ledger.Wrap("scan intents", f.Provider, err)
		}
		err := intentRow(&row, &curs, amount, currency, state, created, updated, lease)
		if err == nil {
			err = expectedRow(&row, due, tol)
		}
		if err != nil {
			return ledger.Wrap("scan intents", f.Provider, fmt.Errorf("intent %q: %w", row.Key, err))
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
	return ledger.Wrap("scan intents", f.Provider, translate(rows.Err()))
}

func intentRow(row *ledger.IntentRow, curs *ledger.Currencies, amount, currency, state, created, updated, lease []byte) error {
	cur, exp, err := curs.Lookup(currency)
	if err != nil {
		return err
	}
	row.Currency = cur
	row.Bad = nil
	if row.Minor, err = ledger.ParseMinor(amount, exp); err != nil {
		row.Minor, row.Bad = 0, fmt.Errorf("amount: %w", err) // handed on: one bad row must not stop a run
	}
	if row.State, err = ledger.StateOf(state); err != nil {
		return err
	}
	if row.CreatedAt, err = parseTSBytes(created); err != nil {
		return err
	}
	if row.UpdatedAt, err = parseTSBytes(updated); err != nil {
		return err
	}
	row.LeaseExpiresAt = time.Time{}
	if len(lease) > 0 {
		row.LeaseExpiresAt, err = parseTSBytes(lease)
	}
	return err
}

// expectedRow reads an expected payment's due date and tolerance into row,
// whose currency is known.
func expectedRow(row *ledger.IntentRow, due, tol []byte) error {
	row.DueAt, row.Tolerance = time.Time{}, 0
	if len(due) > 0 {
		var err error
		if row.DueAt, err = parseTSBytes(due); err != nil {
			return err
		}
	}
	if len(tol) > 0 {
		exp, err := money.Exponent(row.Currency)
		if err != nil {
			return err
		}
		if row.Tolerance, err = ledger.ParseMinor(tol, exp); err != nil && row.Bad == nil {
			row.Tolerance, row.Bad = 0, fmt.Errorf("tolerance: %w", err)
		}
	}
	return nil
}

// ScanProviderRefs streams the provider references of the window's intents.
func (e executor) ScanProviderRefs(ctx context.Context, f ledger.IntentFilter, fn func(key, ref []byte) error) error {
	rows, err := e.query(ctx, `
		SELECT a.intent_key, a.provider_ref
		FROM intents i JOIN attempts a ON a.intent_key = i.key
		WHERE i.provider = ?1 AND i.created_at >= ?2 AND i.created_at < ?3 AND i.account = ?4 AND a.provider_ref <> ''
		  AND a.started_at >= ?2`,
		f.Provider, ts(f.From), ts(f.To), f.Account)
	if err != nil {
		return ledger.Wrap("scan provider refs", f.Provider, translate(err))
	}
	defer rows.Close()
	var key, ref sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&key, &ref); err != nil {
			return ledger.Wrap("scan provider refs", f.Provider, err)
		}
		if err := fn(key, ref); err != nil {
			return err
		}
	}
	return ledger.Wrap("scan provider refs", f.Provider, translate(rows.Err()))
}

// ScanProviderTxns streams the window's provider transactions.
func (e executor) ScanProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(*ledger.TxnRow) error) error {
	rows, err := e.query(ctx, `
		SELECT txn_id, reference, provider_ref, counterparty, linked_txn_id, type, status, amount, currency, occurred_at,
		       coalesce(settlement_amount, ''), settlement_currency, exchange_rate
		FROM provider_txns
		WHERE provider = ?1 AND occurred_at >= ?2 AND occurred_at < ?3 AND account = ?4`, f.Provider, ts(f.From), ts(f.To), f.Account)
	if err != nil {
		return ledger.Wrap("scan provider txns", f.Provider, translate(err))
	}
	defer rows.Close()
	var (
		row                                     ledger.TxnRow
		curs                                    ledger.Currencies
		typ, status, amount, currency, occurred sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan((*sql.RawBytes)(&row.ID), (*sql.RawBytes)(&row.Reference), (*sql.RawBytes)(&row.ProviderRef),
			(*sql.RawBytes)(&row.Counterparty), (*sql.RawBytes)(&row.LinkedID), &typ, &status, &amount, &currency, &occurred,
			(*sql.RawBytes)(&row.Settlement), (*sql.RawBytes)(&row.SettlementCurrency), (*sql.RawBytes)(&row.ExchangeRate)); err != nil {
			return ledger.Wrap("scan provider txns", f.Provider, err)
		}
		if err := txnRow(&row, &curs, typ, status, amount, currency, occurred); err != nil {
			return ledger.Wrap("scan provider txns", f.Provider, fmt.Errorf("provider txn %q: %w", row.ID, err))
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
	return ledger.Wrap("scan provider txns", f.Provider, translate(rows.Err()))
}

func txnRow(row *ledger.TxnRow, curs *ledger.Currencies, typ, status, amount, currency, occurred []byte) error {
	var err error
	if row.Type, err = ledger.TxnTypeOf(typ); err != nil {
		return err
	}
	if row.Status, err = ledger.TxnStatusOf(status); err != nil {
		return err
	}
	cur, exp, err := curs.Lookup(currency)
	if err != nil {
		return err
	}
	row.Currency = cur
	row.Bad = nil
	if row.Minor, err = ledger.ParseMinor(amount, exp); err != nil {
		row.Minor, row.Bad = 0, fmt.Errorf("amount: %w", err) // handed on: one bad row must not stop a run
	}
	row.OccurredAt, err = parseTSBytes(occurred)
	return err
}

// parseTSBytes parses a stored time without converting it to a string.
func parseTSBytes(b []byte) (time.Time, error) {
	t, err := time.Parse(timeLayout, string(b))
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", b, err)
	}
	return t, nil
}
