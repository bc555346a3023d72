package pgstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
)

// A large batch (copyAt sightings or more) takes a faster way than staging
// all of it: one probe reads, for each sighting whose key the batch names
// once, the stored transaction's compared fields and whether the sighting
// is recorded. Go then sorts the batch into
//   - new: the key is not stored. These rows go straight into
//     provider_txns and provider_txn_sources with binary COPY, sorted by
//     key, with no staging table and no speculative ON CONFLICT insert;
//   - recorded: the stored transaction agrees with the sighting exactly as
//     classifySQL decides "nothing to do" (agreesStored) and the sighting is
//     recorded. They are duplicates and write nothing;
//   - the rest (a key named twice in the batch, a fill, a conflict, a new
//     sighting of a stored transaction), which the staged set statements
//     apply as before, on those rows only.
// A re-import of a known file is then the probe and no write, and a first
// import is about the cost of COPY into the indexed tables.
//
// A concurrent writer can store a key between the probe and the COPY. The
// COPY runs in a savepoint: on a unique violation it is rolled back and the
// whole batch goes through the staged statements, which handle that case
// (ON CONFLICT DO NOTHING, then the comparison with what is stored).
// Each batch with new rows takes one savepoint. PostgreSQL keeps the ids
// of released savepoints that wrote until the transaction ends; past 64 of
// them (an import of more than 640,000 new lines in batches of 10,000),
// other sessions taking a snapshot while the import runs look its
// subtransactions up in pg_subtrans.

// probeSQL reads, for each key in the arrays, the stored transaction's
// compared fields, a bitmask of its empty fields (emptyReference...) and
// whether the sighting's source exists (sourceRecorded). Keys not stored
// return no row. Each key is a primary-key probe through a LATERAL ...
// LIMIT 1, whatever the tables' sizes and statistics (see the set
// statements).
const probeSQL = `
	SELECT k.i::int4, p.type, p.status, p.amount, p.currency, p.occurred_at, p.settlement_amount,
	       p.settlement_currency,
	       (CASE WHEN p.reference = '' THEN 1 ELSE 0 END | CASE WHEN p.provider_ref = '' THEN 2 ELSE 0 END
	        | CASE WHEN p.counterparty = '' THEN 4 ELSE 0 END | CASE WHEN p.linked_txn_id = '' THEN 8 ELSE 0 END
	        | CASE WHEN EXISTS (SELECT FROM provider_txn_sources x WHERE x.provider = k.provider
	                            AND x.txn_id = k.txn_id AND x.channel = k.channel AND x.ref = k.ref)
	               THEN 16 ELSE 0 END)::int4
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(provider, txn_id, channel, ref, i)
	CROSS JOIN LATERAL (
	    SELECT p.type, p.status, p.amount, p.currency, p.occurred_at, p.reference, p.provider_ref, p.counterparty,
	           p.linked_txn_id, p.settlement_amount, p.settlement_currency
	    FROM provider_txns p WHERE p.provider = k.provider AND p.txn_id = k.txn_id LIMIT 1) p`

// The bits of probeSQL's last column.
const (
	emptyReference = 1 << iota
	emptyProviderRef
	emptyCounterparty
	emptyLinkedID
	sourceRecorded
)

// storedTxn is a row of probeSQL, as its binary values.
type storedTxn struct {
	typ, status, amount, currency, occurred, settlement, settlementCurrency []byte
	flags                                                                   int32
}

// Test hooks: beforeNewCopy, when set, runs between the probe and the COPY
// of the new rows; stagedOnly sends large batches through the set
// statements alone, for tests that compare the two ways.
var (
	beforeNewCopy atomic.Pointer[func(ctx context.Context, batch []ledger.Sighting)]
	stagedOnly    atomic.Bool
)

// upsertLarge applies a large batch as described above. known is as in
// upsertSightings. allNew, when not nil, says whether no key of the
// transaction's previous batch was stored, and is set for the next one:
// then the batch is first copied without a probe, on the bet that its keys
// are new too (the second and later batches of a first import). A key
// found stored makes the COPY fail; it is rolled back and the batch is
// probed as usual.
func upsertLarge(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, known, allNew *bool) (ledger.UpsertCounts, error) {
	optimistic := allNew != nil && *allNew
	var (
		fresh, rest       []int
		restKnown, stored int
		err               error
	)
	if optimistic {
		fresh, rest = splitRepeats(batch)
	} else if fresh, rest, restKnown, stored, err = classifyBatch(ctx, tx, batch); err != nil {
		return ledger.UpsertCounts{}, err
	}
	if h := beforeNewCopy.Load(); h != nil {
		(*h)(ctx, batch)
	}
	if len(fresh) > 0 {
		copied, err := copyNewTxns(ctx, tx, batch, fresh)
		if err != nil {
			return ledger.UpsertCounts{}, err
		}
		if !copied && optimistic {
			// Some key was stored: probe after all.
			*allNew = false
			return upsertLarge(ctx, tx, batch, known, allNew)
		}
		if !copied {
			// A concurrent writer stored one of the keys since the
			// probe: the staged statements sort it out.
			if allNew != nil {
				*allNew = false
			}
			return upsertSightings(ctx, tx, batch, nil, known)
		}
	}
	if allNew != nil {
		*allNew = stored == 0
	}
	var c ledger.UpsertCounts
	if len(rest) > 0 {
		sub := make([]ledger.Sighting, len(rest))
		for i, p := range rest {
			sub[i] = batch[p]
		}
		subKnown := 2*restKnown > len(rest)
		if c, err = upsertSightings(ctx, tx, sub, nil, &subKnown); err != nil {
			return ledger.UpsertCounts{}, err
		}
		for i := range c.Conflicts {
			c.Conflicts[i].Index = rest[c.Conflicts[i].Index]
		}
	}
	c.NewTxns += len(fresh)
	c.NewSources += len(fresh)
	c.Duplicates = len(batch) - c.NewSources - len(c.Conflicts)
	if known != nil {
		*known = 2*c.NewTxns < len(batch)
	}
	return c, nil
}

// binaryResults says whether the connection's queries return their results
// in binary, as classifyBatch reads them. A URL may ask for a query mode
// that returns text (default_query_exec_mode=exec or simple_protocol);
// large batches then take the set statements.
func binaryResults(tx pgx.Tx) bool {
	switch tx.Conn().Config().DefaultQueryExecMode {
	case pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol:
		return false
	}
	return true
}

// splitRepeats returns the positions of the rows whose key the batch names
// once, in key order, and of the others, in batch order.
func splitRepeats(batch []ledger.Sighting) (once, repeats []int) {
	order := make([]int, len(batch))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := compareKeys(&batch[a].Txn, &batch[b].Txn); c != 0 {
			return c
		}
		return a - b
	})
	for j := 0; j < len(order); {
		k := j + 1
		for k < len(order) && compareKeys(&batch[order[j]].Txn, &batch[order[k]].Txn) == 0 {
			k++
		}
		if k-j == 1 {
			once = append(once, order[j])
		} else {
			repeats = append(repeats, order[j:k]...)
		}
		j = k
	}
	slices.Sort(repeats)
	return once, repeats
}

// classifyBatch probes the keys the batch names once and returns the
// positions of the new rows, in key order, and of the rest (neither new nor
// recorded: repeated keys, or stored transactions with work), in batch
// order, with how many of the rest have a stored transaction and how many
// rows met one.
func classifyBatch(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting) (fresh, rest []int, restKnown, stored int, err error) {
	probe, repeats := splitRepeats(batch)
	kind := make([]byte, len(batch)) // 0 new, 'r' repeated key, 's' stored and recorded, 'k' stored with work
	for _, p := range repeats {
		kind[p] = 'r'
	}
	provider, id, channel, ref := make([]string, len(probe)), make([]string, len(probe)),
		make([]string, len(probe)), make([]string, len(probe))
	for i, p := range probe {
		s := &batch[p]
		provider[i], id[i], channel[i], ref[i] = s.Txn.Provider, s.Txn.ID, s.Source.Channel, s.Source.Ref
	}
	rows, err := tx.Query(ctx, probeSQL, provider, id, channel, ref)
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("probe stored transactions: %w", err)
	}
	for rows.Next() {
		v := rows.RawValues()
		if len(v) != 9 || len(v[0]) != 4 || len(v[8]) != 4 {
			rows.Close()
			return nil, nil, 0, 0, errors.New("probe stored transactions: unexpected row")
		}
		p := probe[int32(binary.BigEndian.Uint32(v[0]))-1]
		st := storedTxn{typ: v[1], status: v[2], amount: v[3], currency: v[4], occurred: v[5], settlement: v[6],
			settlementCurrency: v[7], flags: int32(binary.BigEndian.Uint32(v[8]))}
		stored++
		if agreesStored(&batch[p], &st) {
			kind[p] = 's'
		} else {
			kind[p] = 'k'
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, 0, fmt.Errorf("probe stored transactions: %w", err)
	}
	for _, p := range probe {
		if kind[p] == 0 {
			fresh = append(fresh, p)
		}
	}
	for p, k := range kind {
		switch k {
		case 'k':
			restKnown++
			rest = append(rest, p)
		case 'r':
			rest = append(rest, p)
		}
	}
	return fresh, rest, restKnown, stored, nil
}

// compareKeys orders transactions by provider and id, bytewise (COLLATE
// "C"), the order in which every write path inserts them.
func compareKeys(a, b *ledger.ProviderTxn) int {
	if c := cmp.Compare(a.Provider, b.Provider); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// dayMicros is interval '24 hours' in microseconds.
const dayMicros = 24 * 3600 * 1000000

// agreesStored is classifySQL's condition negated, in Go: the sighting
// agrees with the stored transaction st, fills none of its empty fields and
// is recorded already, so that no set statement would change anything for
// it. It must decide exactly as classifySQL does (a test compares them on
// random batches).
func agreesStored(s *ledger.Sighting, st *storedTxn) bool {
	t := &s.Txn
	if st.flags&sourceRecorded == 0 {
		return false
	}
	if (st.flags&emptyReference != 0 && t.Reference != "") || (st.flags&emptyProviderRef != 0 && t.ProviderRef != "") ||
		(st.flags&emptyCounterparty != 0 && t.Counterparty != "") || (st.flags&emptyLinkedID != 0 && t.LinkedID != "") {
		return false
	}
	if string(st.typ) != string(t.Type) || string(st.currency) != t.Amount.Currency {
		return false
	}
	if t.Status != ledger.TxnPending && string(st.status) != string(t.Status) {
		return false
	}
	if len(st.occurred) != 8 {
		return false
	}
	stored := int64(binary.BigEndian.Uint64(st.occurred))
	if stored == math.MaxInt64 || stored == math.MinInt64 {
		return false // infinity: always beyond a day
	}
	seen := utc(t.OccurredAt).UnixMicro() - pgEpochMicros
	if seen > stored+dayMicros || seen < stored-dayMicros {
		return false
	}
	if t.Settlement.Currency != "" {
		if string(st.settlementCurrency) != t.Settlement.Currency || st.settlement == nil ||
			!numericEqual(st.settlement, t.Settlement.Value) {
			return false
		}
	}
	return numericEqual(st.amount, t.Amount.Value)
}

// numericEqual reports whether the binary numeric raw equals d as numbers
// (1.5 = 1.50). NaN and infinities equal no decimal.
func numericEqual(raw []byte, d decimal.Decimal) bool {
	// Most amounts fit in int64 on both sides: compare them without
	// allocating, each with its trailing zeros stripped.
	if len(raw) >= 8 && len(raw) <= 8+2*4 && d.NumDigits() <= 18 {
		c, e, ok := numericInt64(raw)
		if !ok {
			return false
		}
		dc, de := stripZeros(d.CoefficientInt64(), d.Exponent())
		return c == dc && (c == 0 || e == de)
	}
	c, e, ok := numericValue(raw)
	if !ok {
		return false
	}
	dc, de := d.Coefficient(), d.Exponent()
	// Compare c*10^e with dc*10^de at the smaller exponent.
	switch {
	case e > de:
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)-int64(de)), nil))
	case de > e:
		dc.Mul(dc, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(de)-int64(e)), nil))
	}
	return c.Cmp(dc) == 0
}

// numericInt64 is numericValue for at most four base-10000 digits, with
// the coefficient's trailing zeros stripped.
func numericInt64(raw []byte) (c int64, exp int32, ok bool) {
	n := int(binary.BigEndian.Uint16(raw[0:]))
	weight := int32(int16(binary.BigEndian.Uint16(raw[2:])))
	sign := binary.BigEndian.Uint16(raw[4:])
	if (sign != 0 && sign != 0x4000) || len(raw) != 8+2*n || n > 4 {
		return 0, 0, false
	}
	for i := 0; i < n; i++ {
		c = c*10000 + int64(binary.BigEndian.Uint16(raw[8+2*i:]))
	}
	if sign == 0x4000 {
		c = -c
	}
	c, exp = stripZeros(c, 4*(weight-int32(n)+1))
	return c, exp, true
}

// stripZeros divides out the trailing decimal zeros of c, raising exp.
func stripZeros(c int64, exp int32) (int64, int32) {
	for c != 0 && c%10 == 0 {
		c /= 10
		exp++
	}
	return c, exp
}

// numericValue decodes PostgreSQL's binary numeric (ndigits, weight, sign,
// dscale, then base-10000 digits) into coefficient and decimal exponent.
// ok is false for NaN, infinities and malformed input.
func numericValue(raw []byte) (c *big.Int, exp int32, ok bool) {
	if len(raw) < 8 {
		return nil, 0, false
	}
	n := int(binary.BigEndian.Uint16(raw[0:]))
	weight := int32(int16(binary.BigEndian.Uint16(raw[2:])))
	sign := binary.BigEndian.Uint16(raw[4:])
	if (sign != 0 && sign != 0x4000) || len(raw) != 8+2*n {
		return nil, 0, false
	}
	var small uint64
	c = new(big.Int)
	for i := 0; i < n; i++ {
		d := uint64(binary.BigEndian.Uint16(raw[8+2*i:]))
		if i < 4 {
			small = small*10000 + d
			if i == n-1 || i == 3 {
				c.SetUint64(small)
			}
			continue
		}
		c.Mul(c, big.NewInt(10000))
		c.Add(c, big.NewInt(int64(d)))
	}
	if sign == 0x4000 {
		c.Neg(c)
	}
	return c, 4 * (weight - int32(n) + 1), true
}

// Columns written by copyNewTxns, as insertNewSQL and insertCreatedSourcesSQL
// write them.
const (
	copyTxnsSQL = `COPY provider_txns (provider, txn_id, type, status, amount, currency, occurred_at, reference,
	    provider_ref, counterparty, linked_txn_id, first_seen_at, updated_at, settlement_amount,
	    settlement_currency, exchange_rate, amount_minor, ref_norm) FROM STDIN (FORMAT binary)`
	copySourcesSQL = `COPY provider_txn_sources (provider, txn_id, channel, ref, raw, received_at)
	    FROM STDIN (FORMAT binary)`
)

// copyNewTxns writes the new rows at positions fresh (in key order) with binary
// COPY in a savepoint. copied is false, and nothing written, when a key was
// stored meanwhile by another transaction.
func copyNewTxns(ctx context.Context, tx pgx.Tx, batch []ledger.Sighting, fresh []int) (copied bool, err error) {
	enc, err := newCopyEncoder(tx)
	if err != nil {
		return false, err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = sp.Rollback(ctx) }() // a no-op once released
	pc := sp.Conn().PgConn()
	txns := &copyRows{enc: enc, n: len(fresh), row: func(i int) error { return enc.txn(&batch[fresh[i]]) }}
	if _, err := pc.CopyFrom(ctx, txns, copyTxnsSQL); err != nil {
		if uniqueViolation(err) {
			return false, sp.Rollback(ctx)
		}
		return false, fmt.Errorf("copy new transactions: %w", err)
	}
	sources := &copyRows{enc: enc, n: len(fresh), row: func(i int) error { enc.source(&batch[fresh[i]]); return nil }}
	if _, err := pc.CopyFrom(ctx, sources, copySourcesSQL); err != nil {
		if uniqueViolation(err) {
			return false, sp.Rollback(ctx)
		}
		return false, fmt.Errorf("copy new sightings: %w", err)
	}
	return true, sp.Commit(ctx)
}

// txn appends a row of provider_txns (copyTxnsSQL's columns).
func (e *copyEncoder) txn(s *ledger.Sighting) error {
	t, src := &s.Txn, &s.Source
	received := utc(src.ReceivedAt).UnixMicro() - pgEpochMicros
	e.row(18)
	e.text(t.Provider)
	e.text(t.ID)
	e.text(string(t.Type))
	e.text(string(t.Status))
	if err := e.decimal(t.Amount.Value); err != nil {
		return err
	}
	e.text(t.Amount.Currency)
	e.timestamptz(utc(t.OccurredAt).UnixMicro() - pgEpochMicros)
	e.text(t.Reference)
	e.text(t.ProviderRef)
	e.text(t.Counterparty)
	e.text(t.LinkedID)
	e.timestamptz(received)
	e.timestamptz(received)
	if t.Settlement.IsZero() {
		e.null()
	} else if err := e.decimal(t.Settlement.Value); err != nil {
		return err
	}
	e.text(t.Settlement.Currency)
	e.text(t.ExchangeRate)
	e.amountMinor(t.Amount)
	e.normalReference(t.Reference)
	return nil
}

// source appends a row of provider_txn_sources (copySourcesSQL's columns).
func (e *copyEncoder) source(s *ledger.Sighting) {
	t, src := &s.Txn, &s.Source
	e.row(6)
	e.text(t.Provider)
	e.text(t.ID)
	e.text(src.Channel)
	e.text(src.Ref)
	e.bytea(src.Raw)
	e.timestamptz(utc(src.ReceivedAt).UnixMicro() - pgEpochMicros)
}
