package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// createRefund creates a refund intent in a transaction of its own (a
// savepoint inside the caller's): the charge row is locked first, so that
// refunds of one charge created concurrently are checked one after the
// other, each against the refunds committed before it. A replay of the same
// request is answered before any check: its amount is already counted.
func (e executor) createRefund(ctx context.Context, n ledger.NewIntent, meta []byte) (ledger.Intent, bool, error) {
	p := n.IntentParams
	b, ok := e.db.(beginner)
	if !ok {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key, errors.New("executor cannot begin a transaction"))
	}
	var (
		in      ledger.Intent
		created bool
	)
	err := pgx.BeginFunc(ctx, b, func(ptx pgx.Tx) error {
		x := executor{db: ptx}
		r, err := x.lockRefundable(ctx, p.RefundOf)
		if err != nil {
			return err
		}
		if _, err := x.GetIntent(ctx, p.Key); err == nil {
			in, created, err = x.existingIntent(ctx, p)
			return err
		} else if !errors.Is(err, ledger.ErrNotFound) {
			return err
		}
		if err := ledger.CheckRefund(p, r); err != nil {
			return ledger.Wrap("create intent", p.Key, err)
		}
		createdAt, updatedAt := utc(n.CreatedAt), utc(n.UpdatedAt)
		created = true
		in, err = scanIntent(ptx.QueryRow(ctx, `
			INSERT INTO intents (key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at,
			    updated_at, amount_minor, ref_norm, account)
			VALUES ($1, 'refund', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, minor_units($4, $5), $12, $13)
			RETURNING `+intentCols,
			p.Key, p.RefundOf, p.Provider, p.Amount.Value, p.Amount.Currency, p.Customer, p.Reference, meta, n.State, createdAt, updatedAt,
			ledger.NormalReference(p.Reference), p.Account))
		return ledger.Wrap("create intent", p.Key, translate(err))
	})
	if err != nil {
		return ledger.Intent{}, false, err
	}
	return in, created, nil
}

// lockRefundable locks the charge row of key (FOR UPDATE) and sums its
// refunds that did not fail, read after the lock is held.
func (e executor) lockRefundable(ctx context.Context, key string) (ledger.Refundable, error) {
	var r ledger.Refundable
	in, err := scanIntent(e.db.QueryRow(ctx, `SELECT `+intentCols+` FROM intents WHERE key = $1 FOR UPDATE`, key))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return r, nil
	case err != nil:
		return r, ledger.Wrap("lock charge", key, translate(err))
	}
	r.Charge, r.Found = in, true
	err = e.db.QueryRow(ctx, `
		SELECT COALESCE(sum(amount), 0) FROM intents
		WHERE kind = 'refund' AND refund_of = $1 AND state <> 'failed'`, key).Scan(&r.Refunded)
	if r.Refunded.IsZero() {
		r.Refunded = decimal.Zero
	}
	return r, ledger.Wrap("sum refunds", key, translate(err))
}

// checkImportedRefunds checks, set-wise, the refunds an import created
// (their charges locked): each against its charge and, in file order, the
// refunds of that charge not created by the import plus those of the file
// before it. A refused refund is deleted again with its imported attempts,
// so that the rest of the import stands as written.
func checkImportedRefunds(ctx context.Context, tx pgx.Tx) ([]ledger.RefusedIntent, error) {
	rows, err := tx.Query(ctx, `
		WITH n AS (
			SELECT s.line, s.key, s.kind, s.refund_of, s.provider, s.amount, s.currency, s.state
			FROM intent_import s JOIN intent_import_new k ON k.key = s.key
			WHERE s.kind = 'refund'
		), before AS (
			SELECT r.refund_of, sum(r.amount) AS amount FROM intents r
			WHERE r.kind = 'refund' AND r.state <> 'failed'
			  AND r.refund_of IN (SELECT refund_of FROM n)
			  AND NOT EXISTS (SELECT 1 FROM intent_import_new k WHERE k.key = r.key)
			GROUP BY r.refund_of
		)
		SELECT n.line, n.key, n.refund_of, n.provider, n.amount, n.currency,
		       n.state, COALESCE(b.amount, 0),
		       c.key IS NOT NULL, COALESCE(c.kind, ''), COALESCE(c.provider, ''), COALESCE(c.amount, 0), COALESCE(c.currency, ''),
		       COALESCE(c.state, '')
		FROM n LEFT JOIN before b ON b.refund_of = n.refund_of LEFT JOIN intents c ON c.key = n.refund_of
		ORDER BY n.refund_of, n.line`)
	if err != nil {
		return nil, err
	}
	var (
		refused []ledger.RefusedIntent
		keys    []string
		charge  string          // of the refunds being read
		file    decimal.Decimal // accepted refunds of charge in the file so far
	)
	for rows.Next() {
		var (
			line                  int
			p                     ledger.IntentParams
			r                     ledger.Refundable
			amount, chargeAmount  decimal.Decimal
			currency, chargeCur   string
			chargeKind, chargePrv string
			state, chargeState    ledger.State
		)
		if err := rows.Scan(&line, &p.Key, &p.RefundOf, &p.Provider, &amount, &currency, &state, &r.Refunded,
			&r.Found, &chargeKind, &chargePrv, &chargeAmount, &chargeCur, &chargeState); err != nil {
			rows.Close()
			return nil, err
		}
		p.Kind = ledger.IntentRefund
		p.Amount = money.Amount{Value: amount, Currency: currency}
		r.Charge.Key, r.Charge.Kind, r.Charge.Provider = p.RefundOf, ledger.IntentKind(chargeKind), chargePrv
		r.Charge.Amount = money.Amount{Value: chargeAmount, Currency: chargeCur}
		r.Charge.State = chargeState
		if p.RefundOf != charge {
			charge, file = p.RefundOf, decimal.Zero
		}
		r.Refunded = r.Refunded.Add(file)
		err := ledger.CheckRefund(p, r)
		if err == nil {
			err = ledger.CheckImportedRefundSends(state, r.Charge)
		}
		if err != nil {
			refused = append(refused, ledger.RefusedIntent{Line: line, Err: err})
			keys = append(keys, p.Key)
		} else if ledger.CountsAsRefunded(state) {
			file = file.Add(amount)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(keys) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM attempts WHERE intent_key = ANY($1)`, keys); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM intents WHERE key = ANY($1)`, keys); err != nil {
			return nil, err
		}
	}
	return refused, nil
}
