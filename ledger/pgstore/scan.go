package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reconcilehq/reconcile/ledger"
)

// The scans below bypass pgx's row scanning: they run one statement with
// the extended protocol, ask for every result column in binary, and decode
// the raw values themselves (numeric straight to minor units, timestamptz to
// time, text borrowed from the read buffer). Nothing is allocated per row.

const (
	oidText        = 25
	oidVarchar     = 1043
	oidNumeric     = 1700
	oidTimestamptz = 1184
)

const scanIntentsSQL = `
	SELECT key, reference, customer, amount, currency, state, created_at, updated_at, lease_expires_at, refund_of
	FROM intents
	WHERE provider = $1 AND created_at >= $2 AND created_at < $3`

var scanIntentsCols = []uint32{oidText, oidText, oidText, oidNumeric, oidText, oidText, oidTimestamptz, oidTimestamptz, oidTimestamptz,
	oidText}

// ScanIntents streams the window's intents in the order PostgreSQL finds
// them.
func (e executor) ScanIntents(ctx context.Context, f ledger.IntentFilter, fn func(*ledger.IntentRow) error) error {
	var (
		row  ledger.IntentRow
		curs ledger.Currencies
	)
	err := e.scan(ctx, scanIntentsSQL, windowArgs(f.Provider, f.From, f.To), scanIntentsCols, func(v [][]byte) error {
		row.Key, row.Reference, row.Customer, row.RefundOf = v[0], v[1], v[2], v[9]
		cur, exp, err := curs.Lookup(v[4])
		if err != nil {
			return fmt.Errorf("intent %q: %w", v[0], err)
		}
		row.Currency = cur
		row.Bad = nil
		if row.Minor, err = numericMinor(v[3], exp); err != nil {
			row.Minor, row.Bad = 0, fmt.Errorf("amount: %w", err) // handed on: one bad row must not stop a run
		}
		if row.State, err = ledger.StateOf(v[5]); err != nil {
			return fmt.Errorf("intent %q: %w", v[0], err)
		}
		if row.CreatedAt, err = timestamptz(v[6]); err == nil {
			if row.UpdatedAt, err = timestamptz(v[7]); err == nil {
				row.LeaseExpiresAt, err = timestamptz(v[8])
			}
		}
		if err != nil {
			return fmt.Errorf("intent %q: %w", v[0], err)
		}
		return fn(&row)
	})
	return ledger.Wrap("scan intents", f.Provider, err)
}

// scanRefsSQL joins the window's intents with their attempts; the planner
// chooses between a hash join and index lookups by the window's size.
const scanRefsSQL = `
	SELECT a.intent_key, a.provider_ref
	FROM intents i JOIN attempts a ON a.intent_key = i.key
	WHERE i.provider = $1 AND i.created_at >= $2 AND i.created_at < $3 AND a.provider_ref <> ''`

var scanRefsCols = []uint32{oidText, oidText}

// ScanProviderRefs streams the provider references of the window's intents.
func (e executor) ScanProviderRefs(ctx context.Context, f ledger.IntentFilter, fn func(key, ref []byte) error) error {
	err := e.scan(ctx, scanRefsSQL, windowArgs(f.Provider, f.From, f.To), scanRefsCols, func(v [][]byte) error {
		return fn(v[0], v[1])
	})
	return ledger.Wrap("scan provider refs", f.Provider, err)
}

const scanTxnsSQL = `
	SELECT txn_id, reference, provider_ref, counterparty, linked_txn_id, type, status, amount, currency, occurred_at,
	       coalesce(settlement_amount::text, ''), settlement_currency, exchange_rate
	FROM provider_txns
	WHERE provider = $1 AND occurred_at >= $2 AND occurred_at < $3`

var scanTxnsCols = []uint32{oidText, oidText, oidText, oidText, oidText, oidText, oidText, oidNumeric, oidText, oidTimestamptz,
	oidText, oidText, oidText}

// ScanProviderTxns streams the window's provider transactions in the order
// PostgreSQL finds them.
func (e executor) ScanProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(*ledger.TxnRow) error) error {
	var (
		row  ledger.TxnRow
		curs ledger.Currencies
	)
	err := e.scan(ctx, scanTxnsSQL, windowArgs(f.Provider, f.From, f.To), scanTxnsCols, func(v [][]byte) error {
		row.ID, row.Reference, row.ProviderRef, row.Counterparty, row.LinkedID = v[0], v[1], v[2], v[3], v[4]
		var err error
		if row.Type, err = ledger.TxnTypeOf(v[5]); err != nil {
			return fmt.Errorf("provider txn %q: %w", v[0], err)
		}
		if row.Status, err = ledger.TxnStatusOf(v[6]); err != nil {
			return fmt.Errorf("provider txn %q: %w", v[0], err)
		}
		cur, exp, err := curs.Lookup(v[8])
		if err != nil {
			return fmt.Errorf("provider txn %q: %w", v[0], err)
		}
		row.Currency = cur
		row.Bad = nil
		if row.Minor, err = numericMinor(v[7], exp); err != nil {
			row.Minor, row.Bad = 0, fmt.Errorf("amount: %w", err) // handed on: one bad row must not stop a run
		}
		if row.OccurredAt, err = timestamptz(v[9]); err != nil {
			return fmt.Errorf("provider txn %q: %w", v[0], err)
		}
		row.Settlement, row.SettlementCurrency, row.ExchangeRate = v[10], v[11], v[12]
		return fn(&row)
	})
	return ledger.Wrap("scan provider txns", f.Provider, err)
}

// windowArgs encodes (provider, from, to): the provider as text, the times
// as binary timestamptz.
func windowArgs(provider string, from, to time.Time) scanArgs {
	return scanArgs{
		values:  [][]byte{[]byte(provider), pgTime(from), pgTime(to)},
		oids:    []uint32{oidText, oidTimestamptz, oidTimestamptz},
		formats: []int16{pgx.TextFormatCode, pgx.BinaryFormatCode, pgx.BinaryFormatCode},
	}
}

type scanArgs struct {
	values  [][]byte
	oids    []uint32
	formats []int16
}

// scan runs sql on a connection of e with every result column in binary,
// checks the columns' types against want, and calls fn with each row's raw
// values, which are valid until fn returns.
func (e executor) scan(ctx context.Context, sql string, args scanArgs, want []uint32, fn func([][]byte) error) error {
	conn, release, err := e.conn(ctx)
	if err != nil {
		return translate(err)
	}
	defer release()
	formats := make([]int16, len(want))
	for i := range formats {
		formats[i] = pgx.BinaryFormatCode
	}
	rr := conn.ExecParams(ctx, sql, args.values, args.oids, args.formats, formats)
	if err := checkColumns(rr.FieldDescriptions(), want); err != nil {
		_, cerr := rr.Close()
		return errors.Join(translate(cerr), err)
	}
	for rr.NextRow() {
		if err := fn(rr.Values()); err != nil {
			_, _ = rr.Close()
			return err
		}
	}
	_, err = rr.Close()
	return translate(err)
}

// conn returns the connection e runs on and a function that gives it back:
// the transaction's own, or one taken from the pool.
func (e executor) conn(ctx context.Context) (*pgconn.PgConn, func(), error) {
	switch db := e.db.(type) {
	case *pgxpool.Pool:
		c, err := db.Acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		return c.Conn().PgConn(), c.Release, nil
	case pgx.Tx:
		return db.Conn().PgConn(), func() {}, nil
	}
	return nil, nil, fmt.Errorf("pgstore: no connection behind %T", e.db)
}

func checkColumns(fds []pgconn.FieldDescription, want []uint32) error {
	if fds == nil {
		return nil // the statement failed; Close reports why
	}
	if len(fds) != len(want) {
		return fmt.Errorf("scan: %d columns, want %d", len(fds), len(want))
	}
	for i, fd := range fds {
		got := fd.DataTypeOID
		if got == oidVarchar {
			got = oidText
		}
		if got != want[i] || fd.Format != pgx.BinaryFormatCode {
			return fmt.Errorf("scan: column %s has type oid %d format %d, want oid %d in binary", fd.Name, fd.DataTypeOID, fd.Format, want[i])
		}
	}
	return nil
}

// pgEpochMicros is 2000-01-01 UTC, PostgreSQL's epoch, in Unix microseconds.
const pgEpochMicros = 946684800 * 1_000_000

func pgTime(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(utc(t).UnixMicro()-pgEpochMicros))
}

// timestamptz decodes a binary timestamptz; NULL is the zero time.
func timestamptz(b []byte) (time.Time, error) {
	if b == nil {
		return time.Time{}, nil
	}
	if len(b) != 8 {
		return time.Time{}, fmt.Errorf("timestamptz of %d bytes", len(b))
	}
	us := int64(binary.BigEndian.Uint64(b))
	if us == math.MaxInt64 || us == math.MinInt64 {
		return time.Time{}, errors.New("infinite timestamp")
	}
	return time.UnixMicro(us + pgEpochMicros).UTC(), nil
}

// numericMinor decodes a binary numeric as integer minor units at exponent
// exp. The wire form is a sign, a weight and base-10000 digits with
// trailing zero digits dropped; value = digits × 10000^(weight-ndigits+1).
func numericMinor(b []byte, exp int32) (int64, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("numeric of %d bytes", len(b))
	}
	ndigits := int(binary.BigEndian.Uint16(b[0:]))
	weight := int32(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	if sign != 0x0000 && sign != 0x4000 {
		return 0, errors.New("not a finite number")
	}
	if len(b) != 8+2*ndigits {
		return 0, fmt.Errorf("numeric of %d bytes with %d digits", len(b), ndigits)
	}
	// Decimal digits are added one by one; zeros are held back until a
	// non-zero digit follows, so that trailing zeros never overflow.
	var coef int64
	zeros := int32(0)
	for i := range ndigits {
		g := int64(binary.BigEndian.Uint16(b[8+2*i:]))
		if g > 9999 {
			return 0, fmt.Errorf("numeric digit %d out of range", g)
		}
		for _, p := range [4]int64{1000, 100, 10, 1} {
			d := g / p % 10
			if d == 0 {
				zeros++
				continue
			}
			for ; zeros > 0; zeros-- {
				if coef > math.MaxInt64/10 {
					return 0, errMinorRange
				}
				coef *= 10
			}
			if coef > (math.MaxInt64-d)/10 {
				return 0, errMinorRange
			}
			coef = coef*10 + d
		}
	}
	if sign == 0x4000 {
		coef = -coef
	}
	scale := -4*(weight-int32(ndigits)+1) - zeros
	m, err := ledger.MinorUnits(coef, scale, exp)
	if err != nil {
		return 0, fmt.Errorf("%s at exponent %d: %w", numericText(coef, scale), exp, err)
	}
	return m, nil
}

var errMinorRange = errors.New("does not fit in int64 minor units")

// numericText renders coef × 10^-scale for error messages.
func numericText(coef int64, scale int32) string {
	s := fmt.Sprint(coef)
	switch {
	case scale <= 0:
		for range -scale {
			s += "0"
		}
		return s
	default:
		neg := coef < 0
		if neg {
			s = s[1:]
		}
		for int32(len(s)) <= scale {
			s = "0" + s
		}
		s = s[:int32(len(s))-scale] + "." + s[int32(len(s))-scale:]
		if neg {
			s = "-" + s
		}
		return s
	}
}
