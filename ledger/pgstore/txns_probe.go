package pgstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// probeSQL returns, for each (provider, id, channel, ref) row of the arrays
// whose transaction is stored, its position (from 1) and what
// ledger.StoredTxn holds of it: type, status, amount, currency, time,
// settlement amount and currency, and a bitmask of its empty text fields
// (the ledger.Fill values) with sourceStored set when the row's source is
// stored. Each key is a primary-key look-up through a LATERAL ... LIMIT 1,
// whatever the tables' sizes and statistics: the planner cannot know
// better inside the transaction that grows them.
const probeSQL = `
	SELECT k.i::int4, p.type, p.status, p.amount, p.currency, p.occurred_at, p.settlement_amount,
	       p.settlement_currency,
	       (CASE WHEN p.reference = '' THEN 1 ELSE 0 END | CASE WHEN p.provider_ref = '' THEN 2 ELSE 0 END
	        | CASE WHEN p.counterparty = '' THEN 4 ELSE 0 END | CASE WHEN p.linked_txn_id = '' THEN 8 ELSE 0 END
	        | CASE WHEN EXISTS (SELECT FROM provider_txn_sources x WHERE x.provider = k.provider
	                            AND x.txn_id = k.txn_id AND x.channel = k.channel AND x.ref = k.ref)
	               THEN 16 ELSE 0 END)::int4, p.account
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(provider, txn_id, channel, ref, i)
	CROSS JOIN LATERAL (
	    SELECT p.type, p.status, p.amount, p.currency, p.occurred_at, p.reference, p.provider_ref, p.counterparty,
	           p.linked_txn_id, p.settlement_amount, p.settlement_currency, p.account
	    FROM provider_txns p WHERE p.provider = k.provider AND p.txn_id = k.txn_id LIMIT 1) p`

// sourceStored is the bit of probeSQL's last column that says the row's
// source is stored.
const sourceStored = 16

// probeSightings reads what is stored of each sighting's transaction and
// source.
func probeSightings(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting) ([]ledger.Probe, error) {
	n := len(batch)
	provider, id, channel, ref := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range batch {
		s := &batch[i]
		provider[i], id[i], channel[i], ref[i] = s.Txn.Provider, s.Txn.ID, s.Source.Channel, s.Source.Ref
	}
	rows, err := tx.Query(ctx, probeSQL, provider, id, channel, ref)
	if err != nil {
		return nil, fmt.Errorf("probe stored transactions: %w", err)
	}
	defer rows.Close()
	probes := make([]ledger.Probe, n)
	for rows.Next() {
		if err := scanProbe(rows, probes); err != nil {
			return nil, fmt.Errorf("probe stored transactions: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("probe stored transactions: %w", err)
	}
	return probes, nil
}

// scanProbe reads a row of probeSQL into probes.
func scanProbe(rows pgx.Rows, probes []ledger.Probe) error {
	var (
		i                  int32
		st                 ledger.StoredTxn
		amount             decimal.Decimal
		currency           string
		occurred           pgtype.Timestamptz
		settlement         decimal.NullDecimal
		settlementCurrency string
		flags              int32
	)
	if err := rows.Scan(&i, &st.Type, &st.Status, &amount, &currency, &occurred, &settlement, &settlementCurrency, &flags, &st.Account); err != nil {
		return err
	}
	if i < 1 || int(i) > len(probes) {
		return fmt.Errorf("position %d of %d", i, len(probes))
	}
	st.Amount = money.Amount{Value: amount, Currency: currency}
	switch occurred.InfinityModifier {
	case pgtype.Finite:
		st.OccurredAt = occurred.Time.UTC()
	case pgtype.Infinity:
		// Never written by this store; beyond a day of any time.
		st.OccurredAt = time.UnixMicro(math.MaxInt64).UTC()
	default:
		st.OccurredAt = time.UnixMicro(math.MinInt64).UTC()
	}
	if settlementCurrency != "" {
		st.Settlement = money.Amount{Value: settlement.Decimal, Currency: settlementCurrency}
	}
	st.Empty = ledger.TxnFields(flags) & (ledger.FillReference | ledger.FillProviderRef | ledger.FillCounterparty | ledger.FillLinkedID)
	probes[i-1] = ledger.Probe{Found: true, Txn: st, Recorded: flags&sourceStored != 0}
	return nil
}
