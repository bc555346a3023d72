package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// fastChunk is the most rows one multi-row statement of a batch of
// sightings carries: with 18 values a row, about half SQLite's limit on
// bound parameters. Shorter runs take the power-of-two sizes below it, so
// that a transaction prepares at most a dozen statements of each kind, each
// once.
const fastChunk = 1024

// The multi-row statements of a batch of sightings, by multiRow kind (the
// intents import uses the first few).
const (
	rowsProbe = 10 + iota
	rowsTxns
	rowsSources
	rowsSharedSources
	// rowsSharedTxnsShape plus a set of values held alike (sameType...)
	// keys the shared inserts of transactions.
	rowsSharedTxnsShape = 1000
)

// probeSQL returns, for each of n (position, provider, id, channel, ref)
// rows whose transaction is stored, what ledger.StoredTxn holds of it: its
// type, status, amount, currency, time (microseconds since 1970), settlement
// amount and currency, a bitmask of its empty text fields (the
// ledger.Fill values) with bit 16 set when the row's source is stored, and
// its account. Each row is a primary-key look-up.
func probeSQL(n int) string {
	return multiRow(rowsProbe, n, `WITH k(i, provider, txn_id, channel, ref) AS (VALUES `, `(?,?,?,?,?)`, `)
	SELECT k.i, p.type, p.status, p.amount, p.currency,
	       unixepoch(p.occurred_at) * 1000000 + CAST(substr(p.occurred_at, 21, 6) AS INTEGER),
	       p.settlement_amount, p.settlement_currency,
	       (p.reference = '') | ((p.provider_ref = '') << 1) | ((p.counterparty = '') << 2)
	       | ((p.linked_txn_id = '') << 3)
	       | (EXISTS (SELECT 1 FROM provider_txn_sources x WHERE x.provider = k.provider AND x.txn_id = k.txn_id
	                  AND x.channel = k.channel AND x.ref = k.ref) << 4),
	       p.account
	FROM k CROSS JOIN provider_txns p ON p.provider = k.provider AND p.txn_id = k.txn_id`)
}

// sourceStored is the bit of probeSQL's last column that says the row's
// source is stored.
const sourceStored = 16

// probeSightings reads what is stored of each sighting's transaction and
// source.
func (e executor) probeSightings(ctx context.Context, batch []ledger.Sighting) ([]ledger.Probe, error) {
	probes := make([]ledger.Probe, len(batch))
	order := make([]int32, len(batch))
	for i := range order {
		order[i] = int32(i)
	}
	args := make([]any, 0, 5*min(fastChunk, len(batch)))
	err := chunks(order, func(part []int32) error {
		args = args[:0]
		for _, i := range part {
			s := &batch[i]
			args = append(args, i, s.Txn.Provider, s.Txn.ID, s.Source.Channel, s.Source.Ref)
		}
		rows, err := e.query(ctx, probeSQL(len(part)), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scanProbe(rows, probes); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("probe stored transactions: %w", err)
	}
	return probes, nil
}

// scanProbe reads a row of probeSQL into probes.
func scanProbe(rows *sql.Rows, probes []ledger.Probe) error {
	var (
		i                  int
		typ, status        string
		amount, currency   string
		occurred, flags    int64
		settlement         sql.NullString
		settlementCurrency string
		account            string
	)
	if err := rows.Scan(&i, &typ, &status, &amount, &currency, &occurred, &settlement, &settlementCurrency, &flags, &account); err != nil {
		return err
	}
	if i < 0 || i >= len(probes) {
		return fmt.Errorf("probe returned position %d of %d", i, len(probes))
	}
	st := ledger.StoredTxn{Account: account, Type: ledger.TxnType(typ), Status: ledger.TxnStatus(status), OccurredAt: time.UnixMicro(occurred).UTC(),
		Empty: ledger.TxnFields(flags) & (ledger.FillReference | ledger.FillProviderRef | ledger.FillCounterparty | ledger.FillLinkedID)}
	value, err := storedDecimal(amount)
	if err != nil {
		return err
	}
	st.Amount = money.Amount{Value: value, Currency: currency}
	if settlementCurrency != "" {
		st.Settlement.Currency = settlementCurrency
		if settlement.Valid {
			if st.Settlement.Value, err = storedDecimal(settlement.String); err != nil {
				return err
			}
		}
	}
	probes[i] = ledger.Probe{Found: true, Txn: st, Recorded: flags&sourceStored != 0}
	return nil
}

// storedDecimal reads a stored amount, plain decimal text.
func storedDecimal(s string) (decimal.Decimal, error) {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		case c != '-' || i > 0:
			dots = 2
		}
	}
	if digits > 0 && dots <= 1 {
		if d, ok := money.QuickDecimal(s, 18); ok {
			return d, nil
		}
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("stored amount %q: %w", s, err)
	}
	return d, nil
}
