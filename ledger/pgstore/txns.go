package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

const txnCols = `provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount, settlement_currency, exchange_rate, account`

func scanTxn(row pgx.Row) (ledger.ProviderTxn, error) {
	var (
		t        ledger.ProviderTxn
		amount   decimal.Decimal
		currency string
		settle   decimal.NullDecimal
		settleCu string
	)
	if err := row.Scan(&t.Provider, &t.ID, &t.Type, &t.Status, &amount, &currency, &t.OccurredAt, &t.Reference,
		&t.ProviderRef, &t.Counterparty, &t.LinkedID, &t.FirstSeenAt, &t.UpdatedAt, &settle, &settleCu, &t.ExchangeRate, &t.Account); err != nil {
		return ledger.ProviderTxn{}, err
	}
	if settle.Valid && settleCu != "" {
		t.Settlement = money.Amount{Value: settle.Decimal, Currency: settleCu}
	}
	t.Amount = money.Amount{Value: amount, Currency: currency}
	t.OccurredAt = t.OccurredAt.UTC()
	t.FirstSeenAt = t.FirstSeenAt.UTC()
	t.UpdatedAt = t.UpdatedAt.UTC()
	return t, nil
}

// UpsertProviderTxn is UpsertProviderTxns with one sighting, and the
// stored transaction read back.
func (e executor) UpsertProviderTxn(ctx context.Context, t ledger.ProviderTxn, src ledger.Source) (ledger.UpsertResult, error) {
	var stored ledger.ProviderTxn
	c, err := e.upsertProviderTxns(ctx, []ledger.Sighting{{Txn: t, Source: src}}, &stored, nil)
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
	res.Txn = stored
	return res, nil
}

func (e executor) GetProviderTxn(ctx context.Context, provider, id string) (ledger.ProviderTxn, error) {
	key := provider + "/" + id
	t, err := scanTxn(e.db.QueryRow(ctx, `SELECT `+txnCols+` FROM provider_txns WHERE provider = $1 AND txn_id = $2`, provider, id))
	if err != nil {
		return ledger.ProviderTxn{}, ledger.Wrap("get provider txn", key, translate(err))
	}
	rows, err := e.db.Query(ctx, `
		SELECT channel, ref, raw, received_at FROM provider_txn_sources
		WHERE provider = $1 AND txn_id = $2 ORDER BY received_at, channel, ref`, provider, id)
	if err != nil {
		return ledger.ProviderTxn{}, ledger.Wrap("get provider txn", key, translate(err))
	}
	t.Sources, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Source, error) {
		var s ledger.Source
		err := r.Scan(&s.Channel, &s.Ref, &s.Raw, &s.ReceivedAt)
		s.ReceivedAt = s.ReceivedAt.UTC()
		return s, err
	})
	return t, ledger.Wrap("get provider txn", key, translate(err))
}

// GetProviderTxns reads the transactions and then all their sources, in
// two statements.
func (e executor) GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `SELECT `+txnCols+` FROM provider_txns WHERE provider = $1 AND txn_id = ANY($2)`, provider, ids)
	if err != nil {
		return nil, ledger.Wrap("get provider txns", provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.ProviderTxn, error) { return scanTxn(r) })
	if err != nil || len(out) == 0 {
		return out, ledger.Wrap("get provider txns", provider, translate(err))
	}
	at := make(map[string]int, len(out))
	for i, t := range out {
		at[t.ID] = i
	}
	rows, err = e.db.Query(ctx, `
		SELECT txn_id, channel, ref, raw, received_at FROM provider_txn_sources
		WHERE provider = $1 AND txn_id = ANY($2) ORDER BY txn_id, received_at, channel, ref`, provider, ids)
	if err != nil {
		return nil, ledger.Wrap("get provider txns", provider, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id string
			s  ledger.Source
		)
		if err := rows.Scan(&id, &s.Channel, &s.Ref, &s.Raw, &s.ReceivedAt); err != nil {
			return nil, ledger.Wrap("get provider txns", provider, err)
		}
		s.ReceivedAt = s.ReceivedAt.UTC()
		if i, ok := at[id]; ok {
			out[i].Sources = append(out[i].Sources, s)
		}
	}
	return out, ledger.Wrap("get provider txns", provider, translate(rows.Err()))
}

func (e executor) ListProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ProviderTxn) error) error {
	rows, err := e.db.Query(ctx, `
		SELECT `+txnCols+` FROM provider_txns
		WHERE provider = $1 AND account = $4 AND occurred_at >= $2 AND occurred_at < $3
		ORDER BY occurred_at, txn_id`, f.Provider, utc(f.From), utc(f.To), f.Account)
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
