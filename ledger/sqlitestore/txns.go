package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

const txnCols = `provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount, settlement_currency, exchange_rate`

func scanTxn(row scanner) (ledger.ProviderTxn, error) {
	var (
		t                          ledger.ProviderTxn
		amount, currency           string
		occurred, first, updatedAt string
		settlement                 sql.NullString
		settlementCurrency         string
	)
	if err := row.Scan(&t.Provider, &t.ID, &t.Type, &t.Status, &amount, &currency, &occurred, &t.Reference,
		&t.ProviderRef, &t.Counterparty, &t.LinkedID, &first, &updatedAt, &settlement, &settlementCurrency,
		&t.ExchangeRate); err != nil {
		return ledger.ProviderTxn{}, err
	}
	var err error
	if t.Settlement, err = amountOf(settlement, settlementCurrency); err != nil {
		return ledger.ProviderTxn{}, err
	}
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return ledger.ProviderTxn{}, fmt.Errorf("stored amount %q: %w", amount, err)
	}
	t.Amount = money.Amount{Value: d, Currency: currency}
	if t.OccurredAt, err = parseTS(occurred); err != nil {
		return ledger.ProviderTxn{}, err
	}
	if t.FirstSeenAt, err = parseTS(first); err != nil {
		return ledger.ProviderTxn{}, err
	}
	t.UpdatedAt, err = parseTS(updatedAt)
	return t, err
}

// UpsertProviderTxn runs its statements in one transaction (the caller's,
// or one of its own).
func (e executor) UpsertProviderTxn(ctx context.Context, t ledger.ProviderTxn, src ledger.Source) (res ledger.UpsertResult, err error) {
	if e.tx == nil {
		err = e.atomically(ctx, func(x executor) error {
			res, err = x.UpsertProviderTxn(ctx, t, src)
			return err
		})
		return res, err
	}
	key := t.Provider + "/" + t.ID
	if err := ledger.ValidateTxn(t); err != nil {
		return ledger.UpsertResult{}, ledger.Wrap("upsert provider txn", key, err)
	}
	now := ts(src.ReceivedAt)
	r, err := e.exec(ctx, `
		INSERT INTO provider_txns (`+txnCols+`)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13, ?14, ?15)
		ON CONFLICT (provider, txn_id) DO NOTHING`,
		t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Text(), t.Amount.Currency, ts(t.OccurredAt),
		t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, now, nullAmount(t.Settlement), t.Settlement.Currency,
		t.ExchangeRate)
	if err != nil {
		return res, ledger.Wrap("upsert provider txn", key, translate(err))
	}
	n, _ := r.RowsAffected()
	res.Created = n == 1
	if !res.Created {
		if _, err := e.exec(ctx, `
			UPDATE provider_txns
			SET reference = CASE WHEN reference = '' THEN ?3 ELSE reference END,
			    provider_ref = CASE WHEN provider_ref = '' THEN ?4 ELSE provider_ref END,
			    counterparty = CASE WHEN counterparty = '' THEN ?5 ELSE counterparty END,
			    linked_txn_id = CASE WHEN linked_txn_id = '' THEN ?6 ELSE linked_txn_id END,
			    status = CASE WHEN status = 'pending' THEN ?7 ELSE status END,
			    settlement_amount = CASE WHEN settlement_currency = '' THEN ?9 ELSE settlement_amount END,
			    exchange_rate = CASE WHEN settlement_currency = '' THEN ?11 ELSE exchange_rate END,
			    settlement_currency = CASE WHEN settlement_currency = '' THEN ?10 ELSE settlement_currency END,
			    updated_at = ?8
			WHERE provider = ?1 AND txn_id = ?2
			  AND ((reference = '' AND ?3 <> '') OR (provider_ref = '' AND ?4 <> '')
			       OR (counterparty = '' AND ?5 <> '') OR (linked_txn_id = '' AND ?6 <> '')
			       OR (status = 'pending' AND ?7 <> 'pending') OR (settlement_currency = '' AND ?10 <> ''))`,
			t.Provider, t.ID, t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, string(t.Status), now,
			nullAmount(t.Settlement), t.Settlement.Currency, t.ExchangeRate); err != nil {
			return res, ledger.Wrap("upsert provider txn", key, translate(err))
		}
	}
	r, err = e.exec(ctx, `
		INSERT INTO provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, t.Provider, t.ID, src.Channel, src.Ref, src.Raw, now)
	if err != nil {
		return res, ledger.Wrap("upsert provider txn", key, translate(err))
	}
	n, _ = r.RowsAffected()
	res.SourceAdded = n == 1
	res.Txn, err = scanTxn(e.queryRow(ctx, `SELECT `+txnCols+` FROM provider_txns WHERE provider = ? AND txn_id = ?`, t.Provider, t.ID))
	if err == nil && res.SourceAdded && !res.Created {
		if res.Conflict = ledger.Conflict(res.Txn, t); res.Conflict != "" {
			_, err = e.AddQuarantine(ctx, ledger.ConflictItem(t, src, res.Conflict))
		}
	}
	return res, ledger.Wrap("upsert provider txn", key, translate(err))
}

func (e executor) GetProviderTxn(ctx context.Context, provider, id string) (ledger.ProviderTxn, error) {
	key := provider + "/" + id
	t, err := scanTxn(e.queryRow(ctx, `SELECT `+txnCols+` FROM provider_txns WHERE provider = ? AND txn_id = ?`, provider, id))
	if err != nil {
		return ledger.ProviderTxn{}, ledger.Wrap("get provider txn", key, translate(err))
	}
	rows, err := e.query(ctx, `
		SELECT channel, ref, raw, received_at FROM provider_txn_sources
		WHERE provider = ? AND txn_id = ? ORDER BY received_at, channel, ref`, provider, id)
	if err != nil {
		return ledger.ProviderTxn{}, ledger.Wrap("get provider txn", key, translate(err))
	}
	t.Sources, err = collect(rows, func(r scanner) (ledger.Source, error) {
		var (
			s  ledger.Source
			at string
		)
		if err := r.Scan(&s.Channel, &s.Ref, &s.Raw, &at); err != nil {
			return s, err
		}
		var err error
		s.ReceivedAt, err = parseTS(at)
		return s, err
	})
	return t, ledger.Wrap("get provider txn", key, err)
}

// GetProviderTxns reads the transactions one by one.
func (e executor) GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error) {
	var out []ledger.ProviderTxn
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		t, err := e.GetProviderTxn(ctx, provider, id)
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (e executor) ListProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ProviderTxn) error) error {
	rows, err := e.query(ctx, `
		SELECT `+txnCols+` FROM provider_txns
		WHERE provider = ?1 AND occurred_at >= ?2 AND occurred_at < ?3
		ORDER BY occurred_at, txn_id`, f.Provider, ts(f.From), ts(f.To))
	if err != nil {
		return ledger.Wrap("list provider txns", f.Provider, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTxn(rows)
		if err != nil {
			return ledger.Wrap("list provider txns", f.Provider, err)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	return ledger.Wrap("list provider txns", f.Provider, translate(rows.Err()))
}
