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
	counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount, settlement_currency, exchange_rate, account`

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
		&t.ExchangeRate, &t.Account); err != nil {
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

// UpsertProviderTxn is UpsertProviderTxns with one sighting, and the
// stored transaction read back.
func (e executor) UpsertProviderTxn(ctx context.Context, t ledger.ProviderTxn, src ledger.Source) (ledger.UpsertResult, error) {
	key := t.Provider + "/" + t.ID
	c, err := e.UpsertProviderTxns(ctx, []ledger.Sighting{{Txn: t, Source: src}})
	if err != nil {
		var se *ledger.SightingError
		if errors.As(err, &se) {
			err = se.Err
		}
		return ledger.UpsertResult{}, err
	}
	res := ledger.UpsertResult{Created: c.NewTxns == 1, SourceAdded: c.NewSources == 1}
	if len(c.Conflicts) == 1 {
		res.Conflict = c.Conflicts[0].Reason
	}
	res.Txn, err = scanTxn(e.queryRow(ctx, `SELECT `+txnCols+` FROM provider_txns WHERE provider = ? AND txn_id = ?`, t.Provider, t.ID))
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
		WHERE provider = ?1 AND account = ?4 AND occurred_at >= ?2 AND occurred_at < ?3
		ORDER BY occurred_at, txn_id`, f.Provider, ts(f.From), ts(f.To), f.Account)
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
