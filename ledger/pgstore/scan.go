package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/reconcilehq/reconcile/ledger"
)

// The scans read with pgx's binary codecs into destinations made once per
// scan: text borrowed from the read buffer (pgtype.DriverBytes), amounts as
// the bigint minor units the books store beside them (amount_minor, see
// migration 0009), times as timestamptz. Nothing is allocated per row.

const scanIntentsSQL = `
	SELECT key, reference, customer, amount_minor, CASE WHEN amount_minor IS NULL THEN amount::text END, currency, state,
	       created_at, updated_at, lease_expires_at, refund_of, kind = 'expected', due_at,
	       CASE WHEN tolerance IS NOT NULL THEN minor_units(tolerance, currency) END,
	       CASE WHEN tolerance IS NOT NULL THEN tolerance::text END
	FROM intents
	WHERE provider = $1 AND created_at >= $2 AND created_at < $3 AND account = $4`

// ScanIntents streams the window's intents in the order PostgreSQL finds
// them.
func (e executor) ScanIntents(ctx context.Context, f ledger.IntentFilter, fn func(*ledger.IntentRow) error) error {
	var (
		row                     ledger.IntentRow
		curs                    ledger.Currencies
		minor, tolMinor         pgtype.Int8
		amount, currency, state pgtype.DriverBytes
		tolText                 pgtype.DriverBytes
		created, updated, lease pgtype.Timestamptz
		due                     pgtype.Timestamptz
	)
	dest := []any{(*pgtype.DriverBytes)(&row.Key), (*pgtype.DriverBytes)(&row.Reference), (*pgtype.DriverBytes)(&row.Customer),
		&minor, &amount, &currency, &state, &created, &updated, &lease, (*pgtype.DriverBytes)(&row.RefundOf),
		&row.Expected, &due, &tolMinor, &tolText}
	err := e.scan(ctx, scanIntentsSQL, windowArgs(f.Provider, f.Account, f.From, f.To), dest, func() error {
		cur, exp, err := curs.Lookup(currency)
		if err != nil {
			return fmt.Errorf("intent %q: %w", row.Key, err)
		}
		row.Currency = cur
		row.Minor, row.Bad = amountMinor(minor, amount, exp)
		row.Tolerance = 0
		if tolText != nil {
			var bad error
			if row.Tolerance, bad = amountMinor(tolMinor, tolText, exp); bad != nil && row.Bad == nil {
				row.Bad = fmt.Errorf("tolerance: %w", bad)
			}
		}
		if row.State, err = ledger.StateOf(state); err != nil {
			return fmt.Errorf("intent %q: %w", row.Key, err)
		}
		if row.CreatedAt, err = utcTime(created, "created_at"); err == nil {
			if row.UpdatedAt, err = utcTime(updated, "updated_at"); err == nil {
				if row.LeaseExpiresAt, err = utcTime(lease, "lease_expires_at"); err == nil {
					row.DueAt, err = utcTime(due, "due_at")
				}
			}
		}
		if err != nil {
			return fmt.Errorf("intent %q: %w", row.Key, err)
		}
		return fn(&row)
	})
	return ledger.Wrap("scan intents", f.Provider, err)
}

// scanRefsSQL joins the window's intents with their attempts. An attempt
// never starts before its intent was created (the writers see to it), so
// the attempts are read among those started since the window opened,
// through the BRIN index on started_at: a day's run reads that day's
// attempts, not every attempt of the books' history.
const scanRefsSQL = `
	SELECT a.intent_key, a.provider_ref
	FROM intents i JOIN attempts a ON a.intent_key = i.key
	WHERE i.provider = $1 AND i.created_at >= $2 AND i.created_at < $3 AND i.account = $4 AND a.provider_ref <> ''
	  AND a.started_at >= $2`

// ScanProviderRefs streams the provider references of the window's intents.
func (e executor) ScanProviderRefs(ctx context.Context, f ledger.IntentFilter, fn func(key, ref []byte) error) error {
	var key, ref pgtype.DriverBytes
	err := e.scan(ctx, scanRefsSQL, windowArgs(f.Provider, f.Account, f.From, f.To), []any{&key, &ref}, func() error {
		return fn(key, ref)
	})
	return ledger.Wrap("scan provider refs", f.Provider, err)
}

const scanTxnsSQL = `
	SELECT txn_id, reference, provider_ref, counterparty, linked_txn_id, type, status,
	       amount_minor, CASE WHEN amount_minor IS NULL THEN amount::text END, currency, occurred_at,
	       coalesce(settlement_amount::text, ''), settlement_currency, exchange_rate
	FROM provider_txns
	WHERE provider = $1 AND occurred_at >= $2 AND occurred_at < $3 AND account = $4`

// ScanProviderTxns streams the window's provider transactions in the order
// PostgreSQL finds them.
func (e executor) ScanProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(*ledger.TxnRow) error) error {
	var (
		row                           ledger.TxnRow
		curs                          ledger.Currencies
		minor                         pgtype.Int8
		typ, status, amount, currency pgtype.DriverBytes
		occurred                      pgtype.Timestamptz
	)
	dest := []any{(*pgtype.DriverBytes)(&row.ID), (*pgtype.DriverBytes)(&row.Reference), (*pgtype.DriverBytes)(&row.ProviderRef),
		(*pgtype.DriverBytes)(&row.Counterparty), (*pgtype.DriverBytes)(&row.LinkedID), &typ, &status, &minor, &amount,
		&currency, &occurred, (*pgtype.DriverBytes)(&row.Settlement), (*pgtype.DriverBytes)(&row.SettlementCurrency),
		(*pgtype.DriverBytes)(&row.ExchangeRate)}
	err := e.scan(ctx, scanTxnsSQL, windowArgs(f.Provider, f.Account, f.From, f.To), dest, func() error {
		var err error
		if row.Type, err = ledger.TxnTypeOf(typ); err != nil {
			return fmt.Errorf("provider txn %q: %w", row.ID, err)
		}
		if row.Status, err = ledger.TxnStatusOf(status); err != nil {
			return fmt.Errorf("provider txn %q: %w", row.ID, err)
		}
		cur, exp, err := curs.Lookup(currency)
		if err != nil {
			return fmt.Errorf("provider txn %q: %w", row.ID, err)
		}
		row.Currency = cur
		row.Minor, row.Bad = amountMinor(minor, amount, exp)
		if row.OccurredAt, err = utcTime(occurred, "occurred_at"); err != nil {
			return fmt.Errorf("provider txn %q: %w", row.ID, err)
		}
		return fn(&row)
	})
	return ledger.Wrap("scan provider txns", f.Provider, err)
}

// windowArgs are the arguments of the scans' statements: the provider, the
// window's bounds and the account.
func windowArgs(provider, account string, from, to time.Time) []any {
	return []any{provider, utc(from), utc(to), account}
}

// scan runs sql on e and, for each row, scans it into dest and calls fn.
// Values borrowed from the driver (pgtype.DriverBytes) are valid until fn
// returns.
func (e executor) scan(ctx context.Context, sql string, args, dest []any, fn func() error) error {
	rows, err := e.db.Query(ctx, sql, args...)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		if err := fn(); err != nil {
			return err
		}
	}
	rows.Close()
	return translate(rows.Err())
}

// amountMinor returns a row's amount in minor units as the books store
// them beside the exact amount (minor_units in migration 0009), or, when
// the amount has none (more decimals than its currency allows, or beyond
// int64), the reason, worked out again from the amount's text: the amount
// is then handed on as unreadable, never rounded.
func amountMinor(minor pgtype.Int8, text []byte, exp int32) (int64, error) {
	if minor.Valid {
		return minor.Int64, nil
	}
	_, err := ledger.ParseMinor(text, exp)
	if err == nil {
		err = fmt.Errorf("%s has no minor units at exponent %d in the books", text, exp)
	}
	return 0, fmt.Errorf("amount: %w", err) // handed on: one bad row must not stop a run
}

// utcTime returns t in UTC, the zero time for NULL, and an error for an
// infinite timestamp.
func utcTime(t pgtype.Timestamptz, field string) (time.Time, error) {
	switch {
	case !t.Valid:
		return time.Time{}, nil
	case t.InfinityModifier != pgtype.Finite:
		return time.Time{}, fmt.Errorf("%s: infinite timestamp", field)
	}
	return t.Time.UTC(), nil
}
