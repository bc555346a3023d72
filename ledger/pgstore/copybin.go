package pgstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// copyBuf builds rows in PostgreSQL's binary COPY format in memory, one
// field after the other, for a COPY of known column types: pgx's CopyFrom
// looks up an encoder for every value, which costs more than the encoding.
// Numerics are encoded by the connection's own encoder for decimals, looked
// up once.
type copyBuf struct {
	buf     []byte
	numeric pgtype.EncodePlan
}

// microsecFromUnixEpochToY2K is the start of PostgreSQL's timestamps
// (2000-01-01 UTC) in microseconds since the Unix epoch.
const microsecFromUnixEpochToY2K = 946_684_800 * 1_000_000

func newCopyBuf(tx pgx.Tx) (*copyBuf, error) {
	plan := tx.Conn().TypeMap().PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, decimal.Decimal{})
	if plan == nil {
		return nil, errors.New("copy: no binary encoder of decimals into numeric")
	}
	b := &copyBuf{numeric: plan}
	b.buf = append(b.buf, "PGCOPY\n\xff\r\n\x00"...)
	b.buf = binary.BigEndian.AppendUint32(b.buf, 0) // flags
	b.buf = binary.BigEndian.AppendUint32(b.buf, 0) // header extension length
	return b, nil
}

// row starts a row of n fields.
func (b *copyBuf) row(n int) { b.buf = binary.BigEndian.AppendUint16(b.buf, uint16(n)) }

func (b *copyBuf) text(s string) {
	b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(len(s)))
	b.buf = append(b.buf, s...)
}

func (b *copyBuf) int4(v int32) {
	b.buf = binary.BigEndian.AppendUint32(b.buf, 4)
	b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(v))
}

func (b *copyBuf) int8(v int64) {
	b.buf = binary.BigEndian.AppendUint32(b.buf, 8)
	b.buf = binary.BigEndian.AppendUint64(b.buf, uint64(v))
}

// timestamptz encodes t as pgx does: microseconds since 2000-01-01 UTC,
// the nanoseconds below a microsecond dropped.
func (b *copyBuf) timestamptz(t time.Time) {
	b.int8(t.Unix()*1_000_000 + int64(t.Nanosecond())/1000 - microsecFromUnixEpochToY2K)
}

// jsonb encodes a JSON document, or NULL when doc is nil.
func (b *copyBuf) jsonb(doc []byte) {
	if doc == nil {
		b.buf = binary.BigEndian.AppendUint32(b.buf, ^uint32(0))
		return
	}
	b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(len(doc)+1))
	b.buf = append(b.buf, 1) // jsonb binary format version
	b.buf = append(b.buf, doc...)
}

func (b *copyBuf) numericValue(d decimal.Decimal) error {
	at := len(b.buf)
	b.buf = append(b.buf, 0, 0, 0, 0)
	out, err := b.numeric.Encode(d, b.buf)
	if err != nil {
		return err
	}
	if out == nil {
		return errors.New("copy: a decimal encoded as NULL")
	}
	binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
	b.buf = out
	return nil
}

// send ends the data and copies it into table's columns.
func (b *copyBuf) send(ctx context.Context, tx pgx.Tx, table string, columns []string) error {
	b.buf = binary.BigEndian.AppendUint16(b.buf, 0xffff)
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	sql := "COPY " + pgx.Identifier{table}.Sanitize() + " (" + strings.Join(quoted, ", ") + ") FROM STDIN BINARY"
	_, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(b.buf), sql)
	return err
}
