package main

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
)

// fastStore is the PostgreSQL store with ListIntents read the way the
// matcher wants it: one LEFT JOIN of intents and attempts in key order,
// grouped while streaming, instead of one correlated array_agg subquery per
// intent. It prototypes the store change this benchmark argues for.
type fastStore struct{ *pgstore.Store }

const fastIntentsSQL = `
SELECT i.key, i.provider, i.amount, i.currency, i.customer, i.reference, i.state, i.claim_token, i.claim_owner,
       i.lease_expires_at, i.created_at, i.updated_at, COALESCE(a.provider_ref, '')
FROM intents i LEFT JOIN attempts a ON a.intent_key = i.key AND a.provider_ref <> ''
WHERE i.provider = $1 AND i.created_at >= $2 AND i.created_at < $3
ORDER BY i.key, a.provider_ref`

func (s fastStore) ListIntents(ctx context.Context, f ledger.IntentFilter, fn func(ledger.Intent) error) error {
	rows, err := s.Pool().Query(ctx, fastIntentsSQL, f.Provider, f.From.UTC(), f.To.UTC())
	if err != nil {
		return ledger.Wrap("list intents", f.Provider, err)
	}
	defer rows.Close()
	var (
		cur  ledger.Intent
		have bool
	)
	for rows.Next() {
		var (
			in       ledger.Intent
			amount   decimal.Decimal
			currency string
			lease    *time.Time
			ref      string
		)
		if err := rows.Scan(&in.Key, &in.Provider, &amount, &currency, &in.Customer, &in.Reference, &in.State,
			&in.ClaimToken, &in.ClaimOwner, &lease, &in.CreatedAt, &in.UpdatedAt, &ref); err != nil {
			return ledger.Wrap("list intents", f.Provider, err)
		}
		if have && in.Key == cur.Key {
			if ref != "" && ref != cur.ProviderRefs[len(cur.ProviderRefs)-1] {
				cur.ProviderRefs = append(cur.ProviderRefs, ref)
			}
			continue
		}
		if have {
			if err := fn(cur); err != nil {
				return err
			}
		}
		in.Amount = money.Amount{Value: amount, Currency: currency}
		if lease != nil {
			in.LeaseExpiresAt = lease.UTC()
		}
		in.CreatedAt, in.UpdatedAt = in.CreatedAt.UTC(), in.UpdatedAt.UTC()
		if ref != "" {
			in.ProviderRefs = []string{ref}
		}
		cur, have = in, true
	}
	if err := rows.Err(); err != nil {
		return ledger.Wrap("list intents", f.Provider, err)
	}
	if have {
		return fn(cur)
	}
	return nil
}
