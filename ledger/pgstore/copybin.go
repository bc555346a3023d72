package pgstore

import (
	"encoding/binary"
	"errors"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Binary COPY of rows of known column types, written by hand: pgx's
// CopyFrom looks up an encoder for every value, which costs more than the
// encoding itself.

// copyRows reads n rows in COPY's binary format (a header, the rows, a
// trailer), encoding them as the server takes them, about 64 KiB at a
// time: a batch is never encoded whole in memory.
type copyRows struct {
	enc   *copyEncoder
	n, i  int
	row   func(i int) error // appends row i to enc.buf
	state int               // 0 before the header, 1 in the rows, 2 after the trailer
	off   int               // of enc.buf, read already
}

func (r *copyRows) Read(p []byte) (int, error) {
	for r.off == len(r.enc.buf) {
		r.enc.buf, r.off = r.enc.buf[:0], 0
		switch {
		case r.state == 0:
			r.enc.buf = append(r.enc.buf, "PGCOPY\n\377\r\n\000"...)
			r.enc.buf = binary.BigEndian.AppendUint32(r.enc.buf, 0) // flags
			r.enc.buf = binary.BigEndian.AppendUint32(r.enc.buf, 0) // header extension
			r.state = 1
		case r.i < r.n:
			for ; r.i < r.n && len(r.enc.buf) < 64<<10; r.i++ {
				if err := r.row(r.i); err != nil {
					return 0, err
				}
			}
		case r.state == 1:
			r.enc.buf = binary.BigEndian.AppendUint16(r.enc.buf, 0xffff)
			r.state = 2
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, r.enc.buf[r.off:])
	r.off += n
	return n, nil
}

func uniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// pgEpochMicros is 2000-01-01 UTC, the zero of PostgreSQL's binary
// timestamps, in microseconds since 1970.
const pgEpochMicros = 946684800 * 1000000

// copyEncoder appends rows in COPY's binary format (copyRows adds the
// header and trailer): per row the field count, then each field as its
// length (-1 for NULL) and bytes. Text and timestamps are written
// directly, numerics by appendNumeric or, past its range, pgx's numeric
// encoder, planned once per COPY.
type copyEncoder struct {
	buf     []byte
	numeric pgtype.EncodePlan
}

func newCopyEncoder(tx pgx.Tx) (*copyEncoder, error) {
	plan := tx.Conn().TypeMap().PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, pgtype.Numeric{})
	if plan == nil {
		return nil, errors.New("copy: no binary encoder of numerics")
	}
	return &copyEncoder{numeric: plan}, nil
}

// row starts a row of n fields.
func (e *copyEncoder) row(n int) { e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(n)) }

func (e *copyEncoder) text(s string) {
	e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(len(s)))
	e.buf = append(e.buf, s...)
}

// normalReference appends the normal form of reference
// (ledger.NormalReference) as a text field, written straight into the
// buffer.
func (e *copyEncoder) normalReference(reference string) {
	at := len(e.buf)
	e.buf = append(e.buf, 0, 0, 0, 0)
	e.buf = ledger.AppendNormalReference(e.buf, reference)
	binary.BigEndian.PutUint32(e.buf[at:], uint32(len(e.buf)-at-4))
}

func (e *copyEncoder) bytea(b []byte) {
	if b == nil {
		e.null()
		return
	}
	e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(len(b)))
	e.buf = append(e.buf, b...)
}

// jsonb encodes a JSON document, or NULL when doc is nil.
func (e *copyEncoder) jsonb(doc []byte) {
	if doc == nil {
		e.null()
		return
	}
	e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(len(doc)+1))
	e.buf = append(e.buf, 1) // jsonb binary format version
	e.buf = append(e.buf, doc...)
}

func (e *copyEncoder) null() { e.buf = binary.BigEndian.AppendUint32(e.buf, 0xffffffff) }

func (e *copyEncoder) bool(v bool) {
	e.buf = binary.BigEndian.AppendUint32(e.buf, 1)
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// pgEpochDays is 2000-01-01, the zero of PostgreSQL's binary dates, in days
// since 1970.
const pgEpochDays = 10957

// date writes the calendar day of t (in its own zone, as dayText does), or
// NULL when t is zero.
func (e *copyEncoder) date(t time.Time) {
	if t.IsZero() {
		e.null()
		return
	}
	y, m, d := t.Date()
	e.int4(int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400 - pgEpochDays))
}

func (e *copyEncoder) int4(v int32) {
	e.buf = binary.BigEndian.AppendUint32(e.buf, 4)
	e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v))
}

func (e *copyEncoder) int8(v int64) {
	e.buf = binary.BigEndian.AppendUint32(e.buf, 8)
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v))
}

// amountMinor writes AmountMinor(a), or NULL when a has no exact minor units.
func (e *copyEncoder) amountMinor(a money.Amount) {
	if m, ok := AmountMinor(a); ok {
		e.int8(m)
	} else {
		e.null()
	}
}

// timestamp writes t as pgx does: the nanoseconds below a microsecond
// dropped.
func (e *copyEncoder) timestamp(t time.Time) { e.int8(t.UnixMicro() - pgEpochMicros) }

func (e *copyEncoder) decimal(d decimal.Decimal) error {
	at := len(e.buf)
	e.buf = append(e.buf, 0, 0, 0, 0)
	if d.NumDigits() <= 15 {
		if out, ok := appendNumeric(e.buf, d.CoefficientInt64(), d.Exponent()); ok {
			binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
			e.buf = out
			return nil
		}
	}
	out, err := e.numeric.Encode(pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}, e.buf)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
	e.buf = out
	return nil
}

// appendNumeric appends c×10^exp in PostgreSQL's binary numeric format,
// digit for digit as pgx's encoder writes a pgtype.Numeric{Int: c, Exp:
// exp}, without its big.Int arithmetic. ok is false when |c| is 10^15 or
// more or the scale is beyond 16 digits: the caller then uses pgx's.
func appendNumeric(buf []byte, c int64, exp int32) (out []byte, ok bool) {
	var sign uint16
	abs := uint64(c)
	if c < 0 {
		sign, abs = 0x4000, uint64(-c)
	}
	if abs >= 1e15 || exp < -16 || exp > 1000 {
		return buf, false
	}
	dscale := int32(0)
	if exp < 0 {
		dscale = -exp
	}
	// Align the exponent on a multiple of 4 (base-10000 digits).
	switch exp % 4 {
	case 1, -3:
		abs, exp = abs*10, exp-1
	case 2, -2:
		abs, exp = abs*100, exp-2
	case 3, -1:
		abs, exp = abs*1000, exp-3
	}
	whole, frac, fracDigits := abs, uint64(0), 0
	if exp < 0 {
		fracDigits = int(-exp / 4)
		div := uint64(1)
		for range -exp {
			div *= 10
		}
		whole, frac = abs/div, abs%div
	}
	var w [8]uint16
	n := 0
	for ; whole != 0; whole /= 10000 {
		w[n] = uint16(whole % 10000)
		n++
	}
	weight := int32(n-1) + max(exp, 0)/4
	if n == 0 {
		weight = exp/4 - 1 + int32(fracDigits)
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(n+fracDigits))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for i := n - 1; i >= 0; i-- {
		buf = binary.BigEndian.AppendUint16(buf, w[i])
	}
	var f [4]uint16
	for i := fracDigits - 1; i >= 0; i-- {
		f[i] = uint16(frac % 10000)
		frac /= 10000
	}
	for i := range fracDigits {
		buf = binary.BigEndian.AppendUint16(buf, f[i])
	}
	return buf, true
}
