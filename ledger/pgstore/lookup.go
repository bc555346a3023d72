package pgstore

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

// findIntentsSQL unites one index look-up per list (the primary key, the
// normal reference, the refunds of a charge, the attempts' provider
// references) and reads the intents found once each.
const findIntentsSQL = `
	WITH k AS (
	    SELECT key FROM intents WHERE key = ANY($4) AND provider = $1 AND account = $8
	    UNION
	    SELECT key FROM intents WHERE provider = $1 AND account = $8 AND ref_norm = ANY($5) AND ref_norm <> ''
	        AND created_at >= $2 AND created_at < $3
	    UNION
	    SELECT key FROM intents WHERE refund_of = ANY($6) AND kind = 'refund' AND provider = $1 AND account = $8
	        AND created_at >= $2 AND created_at < $3
	    UNION
	    SELECT i.key FROM attempts a JOIN intents i ON i.key = a.intent_key
	    WHERE a.provider_ref = ANY($7) AND a.provider_ref <> '' AND i.provider = $1 AND i.account = $8
	        AND i.created_at >= $2 AND i.created_at < $3)
	SELECT ` + intentCols + ` FROM intents WHERE key IN (SELECT key FROM k)`

// FindIntents looks each list up by its index, then reads the provider
// references of the intents found in one more statement.
func (e executor) FindIntents(ctx context.Context, l ledger.IntentLookup) ([]ledger.Intent, error) {
	if l.Empty() {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, findIntentsSQL, l.Provider, utc(l.From), utc(l.To), nonNil(l.Keys), nonNil(l.RefNorms),
		nonNil(l.RefundOf), nonNil(l.ProviderRefs), l.Account)
	if err != nil {
		return nil, ledger.Wrap("find intents", l.Provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Intent, error) { return scanIntent(r) })
	if err != nil || len(out) == 0 {
		return out, ledger.Wrap("find intents", l.Provider, translate(err))
	}
	refs := ledger.NewRefAttacher(out)
	rows, err = e.db.Query(ctx, `
		SELECT DISTINCT intent_key, provider_ref FROM attempts
		WHERE intent_key = ANY($1) AND provider_ref <> '' ORDER BY intent_key, provider_ref`, refs.Keys())
	if err != nil {
		return nil, ledger.Wrap("find intents", l.Provider, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var key, ref string
		if err := rows.Scan(&key, &ref); err != nil {
			return nil, ledger.Wrap("find intents", l.Provider, err)
		}
		refs.Add(key, ref)
	}
	return out, ledger.Wrap("find intents", l.Provider, translate(rows.Err()))
}

// findTxnsSQL is findIntentsSQL for transactions: the primary key, the
// provider reference, the normal reference and the transaction named.
const findTxnsSQL = `
	WITH k AS (
	    SELECT txn_id FROM provider_txns WHERE provider = $1 AND account = $8 AND txn_id = ANY($4)
	    UNION
	    SELECT txn_id FROM provider_txns WHERE provider = $1 AND account = $8 AND provider_ref = ANY($5) AND provider_ref <> ''
	        AND occurred_at >= $2 AND occurred_at < $3
	    UNION
	    SELECT txn_id FROM provider_txns WHERE provider = $1 AND account = $8 AND ref_norm = ANY($6) AND ref_norm <> ''
	        AND occurred_at >= $2 AND occurred_at < $3
	    UNION
	    SELECT txn_id FROM provider_txns WHERE provider = $1 AND account = $8 AND linked_txn_id = ANY($7) AND linked_txn_id <> ''
	        AND occurred_at >= $2 AND occurred_at < $3)
	SELECT ` + txnCols + ` FROM provider_txns WHERE provider = $1 AND account = $8 AND txn_id IN (SELECT txn_id FROM k)`

// FindTxns looks each list up by its index.
func (e executor) FindTxns(ctx context.Context, l ledger.TxnLookup) ([]ledger.ProviderTxn, error) {
	if l.Empty() {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, findTxnsSQL, l.Provider, utc(l.From), utc(l.To), nonNil(l.IDs), nonNil(l.ProviderRefs),
		nonNil(l.RefNorms), nonNil(l.Linked), l.Account)
	if err != nil {
		return nil, ledger.Wrap("find provider txns", l.Provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.ProviderTxn, error) { return scanTxn(r) })
	return out, ledger.Wrap("find provider txns", l.Provider, translate(err))
}

// FindManualLinks reads the links by transaction (primary key) and by
// intent (manual_links_intent).
func (e executor) FindManualLinks(ctx context.Context, provider string, txnIDs, intentKeys []string) ([]ledger.ManualLink, error) {
	if len(txnIDs)+len(intentKeys) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `
		SELECT `+manualLinkCols+` FROM manual_links WHERE provider = $1 AND txn_id = ANY($2)
		UNION
		SELECT `+manualLinkCols+` FROM manual_links WHERE provider = $1 AND intent_key = ANY($3)`,
		provider, nonNil(txnIDs), nonNil(intentKeys))
	if err != nil {
		return nil, ledger.Wrap("find manual links", provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.ManualLink, error) { return scanManualLink(r) })
	return out, ledger.Wrap("find manual links", provider, translate(err))
}

// nonNil is s, or an empty list: a nil slice is sent as NULL, which = ANY
// would not match but which reads as a mistake.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clip(s)
}
