package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

// load copies the bulk day into the store's tables and returns the rows
// written to intents, attempts and provider_txns.
func load(ctx context.Context, pg *pgstore.Store, bk scenario.Bulk) ([3]int, error) {
	var rows [3]int
	conn, err := pg.Pool().Acquire(ctx)
	if err != nil {
		return rows, err
	}
	defer conn.Release()
	c := conn.Conn()

	i := 0
	n, err := c.CopyFrom(ctx, pgx.Identifier{"intents"}, []string{"key", "provider", "amount", "currency", "customer",
		"reference", "state", "claim_token", "claim_owner", "lease_expires_at", "created_at", "updated_at", "amount_minor", "ref_norm"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i == bk.N {
				return nil, nil
			}
			in := bk.Intent(i)
			i++
			var lease *time.Time
			if !in.LeaseExpiresAt.IsZero() {
				lease = &in.LeaseExpiresAt
			}
			owner := ""
			if in.State == ledger.StateProcessing {
				owner = "worker-1"
			}
			return []any{in.Key, in.Provider, in.Amount.Value, in.Amount.Currency, in.Customer, in.Reference,
				string(in.State), int64(1), owner, lease, in.CreatedAt, in.UpdatedAt, amountMinor(in.Amount),
				ledger.NormalReference(in.Reference)}, nil
		}))
	if err != nil {
		return rows, err
	}
	rows[0] = int(n)

	i = 0
	var pending [][]any
	n, err = c.CopyFrom(ctx, pgx.Identifier{"attempts"}, []string{"intent_key", "number", "claim_token", "provider_ref",
		"outcome", "started_at", "finished_at"},
		pgx.CopyFromFunc(func() ([]any, error) {
			for len(pending) == 0 {
				if i == bk.N {
					return nil, nil
				}
				in := bk.Intent(i)
				i++
				for k, ref := range in.ProviderRefs {
					outcome := ledger.OutcomeSucceeded
					switch in.State {
					case ledger.StateFailed:
						outcome = ledger.OutcomeFailed
					case ledger.StateUnknown:
						outcome = ledger.OutcomeUnknown
					case ledger.StateProcessing:
						outcome = ledger.OutcomeStarted
					}
					pending = append(pending, []any{in.Key, int32(k + 1), int64(1), ref, string(outcome), in.CreatedAt, in.UpdatedAt})
				}
			}
			row := pending[0]
			pending = pending[1:]
			return row, nil
		}))
	if err != nil {
		return rows, err
	}
	rows[1] = int(n)

	i = 0
	var txns []ledger.ProviderTxn
	n, err = c.CopyFrom(ctx, pgx.Identifier{"provider_txns"}, []string{"provider", "txn_id", "type", "status", "amount",
		"currency", "occurred_at", "reference", "provider_ref", "counterparty", "linked_txn_id", "first_seen_at", "updated_at",
		"amount_minor", "ref_norm"},
		pgx.CopyFromFunc(func() ([]any, error) {
			for len(txns) == 0 {
				if i == bk.N {
					return nil, nil
				}
				_ = bk.TxnsOf(i, func(t ledger.ProviderTxn) error { txns = append(txns, t); return nil })
				i++
			}
			t := txns[0]
			txns = txns[1:]
			seen := t.OccurredAt.Add(time.Second)
			return []any{t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Value, t.Amount.Currency,
				t.OccurredAt, t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, seen, seen, amountMinor(t.Amount),
				ledger.NormalReference(t.Reference)}, nil
		}))
	rows[2] = int(n)
	return rows, err
}

// amountMinor is the amount_minor the stores write for a (pgstore.AmountMinor),
// nil (NULL) when it has no exact minor units.
func amountMinor(a money.Amount) *int64 {
	if m, ok := pgstore.AmountMinor(a); ok {
		return &m
	}
	return nil
}
