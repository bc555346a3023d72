package sqlitestore

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// findIntentsSQL unites one index look-up per list (the primary key, the
// normal reference, the refunds of a charge, the attempts' provider
// references), each list bound as a JSON array.
const findIntentsSQL = `
	WITH k(key) AS (
	    SELECT key FROM intents WHERE key IN (SELECT value FROM json_each(?4)) AND provider = ?1 AND account = ?8
	    UNION
	    SELECT key FROM intents WHERE provider = ?1 AND account = ?8 AND ref_norm IN (SELECT value FROM json_each(?5)) AND ref_norm <> ''
	        AND created_at >= ?2 AND created_at < ?3
	    UNION
	    SELECT key FROM intents WHERE refund_of IN (SELECT value FROM json_each(?6)) AND kind = 'refund' AND provider = ?1 AND account = ?8
	        AND created_at >= ?2 AND created_at < ?3
	    UNION
	    SELECT i.key FROM attempts a JOIN intents i ON i.key = a.intent_key
	    WHERE a.provider_ref IN (SELECT value FROM json_each(?7)) AND a.provider_ref <> '' AND i.provider = ?1 AND i.account = ?8
	        AND i.created_at >= ?2 AND i.created_at < ?3)
	SELECT ` + intentCols + ` FROM intents WHERE key IN (SELECT key FROM k)`

// FindIntents looks each list up by its index, then reads the provider
// references of the intents found in one more statement.
func (e executor) FindIntents(ctx context.Context, l ledger.IntentLookup) ([]ledger.Intent, error) {
	if l.Empty() {
		return nil, nil
	}
	rows, err := e.query(ctx, findIntentsSQL, l.Provider, ts(l.From), ts(l.To), jsonList(l.Keys), jsonList(l.RefNorms),
		jsonList(l.RefundOf), jsonList(l.ProviderRefs), l.Account)
	if err != nil {
		return nil, ledger.Wrap("find intents", l.Provider, translate(err))
	}
	out, err := collect(rows, func(s scanner) (ledger.Intent, error) { return scanIntent(s) })
	if err != nil || len(out) == 0 {
		return out, ledger.Wrap("find intents", l.Provider, translate(err))
	}
	refs := ledger.NewRefAttacher(out)
	rows, err = e.query(ctx, `
		SELECT DISTINCT intent_key, provider_ref FROM attempts
		WHERE intent_key IN (SELECT value FROM json_each(?1)) AND provider_ref <> '' ORDER BY intent_key, provider_ref`, jsonList(refs.Keys()))
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
	WITH k(txn_id) AS (
	    SELECT txn_id FROM provider_txns WHERE provider = ?1 AND account = ?8 AND txn_id IN (SELECT value FROM json_each(?4))
	    UNION
	    SELECT txn_id FROM provider_txns WHERE provider = ?1 AND account = ?8 AND provider_ref IN (SELECT value FROM json_each(?5))
	        AND provider_ref <> '' AND occurred_at >= ?2 AND occurred_at < ?3
	    UNION
	    SELECT txn_id FROM provider_txns WHERE provider = ?1 AND account = ?8 AND ref_norm IN (SELECT value FROM json_each(?6))
	        AND ref_norm <> '' AND occurred_at >= ?2 AND occurred_at < ?3
	    UNION
	    SELECT txn_id FROM provider_txns WHERE provider = ?1 AND account = ?8 AND linked_txn_id IN (SELECT value FROM json_each(?7))
	        AND linked_txn_id <> '' AND occurred_at >= ?2 AND occurred_at < ?3)
	SELECT ` + txnCols + ` FROM provider_txns WHERE provider = ?1 AND account = ?8 AND txn_id IN (SELECT txn_id FROM k)`

// FindTxns looks each list up by its index.
func (e executor) FindTxns(ctx context.Context, l ledger.TxnLookup) ([]ledger.ProviderTxn, error) {
	if l.Empty() {
		return nil, nil
	}
	rows, err := e.query(ctx, findTxnsSQL, l.Provider, ts(l.From), ts(l.To), jsonList(l.IDs), jsonList(l.ProviderRefs),
		jsonList(l.RefNorms), jsonList(l.Linked), l.Account)
	if err != nil {
		return nil, ledger.Wrap("find provider txns", l.Provider, translate(err))
	}
	out, err := collect(rows, func(s scanner) (ledger.ProviderTxn, error) { return scanTxn(s) })
	return out, ledger.Wrap("find provider txns", l.Provider, translate(err))
}

// FindManualLinks reads the links by transaction (primary key) and by
// intent (manual_links_intent).
func (e executor) FindManualLinks(ctx context.Context, provider string, txnIDs, intentKeys []string) ([]ledger.ManualLink, error) {
	if len(txnIDs)+len(intentKeys) == 0 {
		return nil, nil
	}
	rows, err := e.query(ctx, `
		SELECT `+manualLinkCols+` FROM manual_links WHERE provider = ?1 AND txn_id IN (SELECT value FROM json_each(?2))
		UNION
		SELECT `+manualLinkCols+` FROM manual_links WHERE provider = ?1 AND intent_key IN (SELECT value FROM json_each(?3))`,
		provider, jsonList(txnIDs), jsonList(intentKeys))
	if err != nil {
		return nil, ledger.Wrap("find manual links", provider, translate(err))
	}
	out, err := collect(rows, scanManualLink)
	return out, ledger.Wrap("find manual links", provider, translate(err))
}
