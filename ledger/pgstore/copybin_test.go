package pgstore

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"testing/iotest"
	"time"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// benchBatch returns n new transactions as a statement's lines create
// them.
func benchBatch(n int) []ledger.ProviderTxn {
	t0 := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	txns := make([]ledger.ProviderTxn, n)
	for i := range txns {
		txns[i] = ledger.ProviderTxn{Provider: "mpesa", ID: fmt.Sprintf("SLK%07dXY", i), Type: ledger.TxnCharge,
			Status: ledger.TxnSucceeded, Amount: money.Amount{Value: decimal.New(int64(150000+i), -2), Currency: "KES"},
			OccurredAt: t0.Add(time.Duration(i) * time.Minute), Reference: "INV-2026-" + fmt.Sprint(i),
			Counterparty: "2547****0001", FirstSeenAt: t0, UpdatedAt: t0}
	}
	return txns
}

// BenchmarkCopyEncode compares, per transaction row, the COPY encoding of
// copyEncoder with pgx's generic one (CopyFrom's: one encoding plan looked
// up per value, decimals through the shopspring wrapper).
func BenchmarkCopyEncode(b *testing.B) {
	batch := benchBatch(10000)
	m := pgtype.NewMap()
	pgxdecimal.Register(m)
	b.Run("copyEncoder", func(b *testing.B) {
		for b.Loop() {
			enc := &copyEncoder{numeric: m.PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, pgtype.Numeric{})}
			r := &copyRows{enc: enc, n: len(batch), row: func(i int) error { return enc.txn(&batch[i]) }}
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/row")
	})
	oids := []uint32{pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.NumericOID,
		pgtype.TextOID, pgtype.TimestamptzOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID,
		pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.NumericOID, pgtype.TextOID, pgtype.TextOID}
	b.Run("pgxGeneric", func(b *testing.B) {
		for b.Loop() {
			buf := make([]byte, 0, 19+len(batch)*200)
			for _, t := range batch {
				row := []any{t.Provider, t.ID, string(t.Type), string(t.Status), t.Amount.Value, t.Amount.Currency,
					utc(t.OccurredAt), t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID, utc(t.FirstSeenAt),
					utc(t.UpdatedAt), decimal.NullDecimal{Decimal: t.Settlement.Value, Valid: !t.Settlement.IsZero()}, t.Settlement.Currency, t.ExchangeRate}
				for i, v := range row {
					sp := len(buf)
					buf = append(buf, 0, 0, 0, 0)
					out, err := m.Encode(oids[i], pgtype.BinaryFormatCode, v, buf)
					if err != nil {
						b.Fatal(err)
					}
					if out != nil {
						buf = out
					}
					_ = sp
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/row")
	})
}

// TestAppendNumeric compares appendNumeric byte for byte with pgx's
// encoder on random values of every sign, size and scale it takes, and
// checks that it declines the others.
func TestAppendNumeric(t *testing.T) {
	t.Parallel()
	m := pgtype.NewMap()
	plan := m.PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, pgtype.Numeric{})
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	cases := []decimal.Decimal{decimal.Zero, decimal.New(0, -2), decimal.New(0, 3), decimal.New(1, -16),
		decimal.New(999999999999999, -16), decimal.New(-999999999999999, 7), decimal.New(1500, 0),
		decimal.New(150000, -2), decimal.New(15, -1), decimal.New(-1, -17), decimal.New(1000000000000000, 0)}
	for range 20000 {
		c := rng.Int64N(int64(math.Pow10(rng.IntN(17))))
		if rng.IntN(2) == 0 {
			c = -c
		}
		cases = append(cases, decimal.New(c, int32(rng.IntN(30))-20))
	}
	for _, d := range cases {
		want, err := plan.Encode(pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendNumeric(nil, d.CoefficientInt64(), d.Exponent())
		fits := d.NumDigits() <= 15 && d.Exponent() >= -16
		if ok != fits {
			t.Fatalf("%s (exp %d): ok %v", d, d.Exponent(), ok)
		}
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("%s (exp %d): %x, pgx %x", d, d.Exponent(), got, want)
		}
	}
}

// TestCopyRowsChunks reads a batch far larger than one chunk through
// readers of several sizes and checks that the stream is the header, every
// row once in order, and the trailer.
func TestCopyRowsChunks(t *testing.T) {
	t.Parallel()
	batch := benchBatch(3000)
	m := pgtype.NewMap()
	plan := m.PlanEncode(pgtype.NumericOID, pgtype.BinaryFormatCode, pgtype.Numeric{})
	want := &copyEncoder{numeric: plan}
	want.buf = append(want.buf, "PGCOPY\n\377\r\n\000\x00\x00\x00\x00\x00\x00\x00\x00"...)
	for i := range batch {
		if err := want.txn(&batch[i]); err != nil {
			t.Fatal(err)
		}
	}
	want.buf = append(want.buf, 0xff, 0xff)
	if len(want.buf) < 3*64<<10 {
		t.Fatalf("%d bytes: not several chunks", len(want.buf))
	}
	for _, read := range []func(io.Reader) io.Reader{
		func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader,
	} {
		enc := &copyEncoder{numeric: plan}
		got, err := io.ReadAll(read(&copyRows{enc: enc, n: len(batch), row: func(i int) error { return enc.txn(&batch[i]) }}))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.buf) {
			t.Fatalf("stream of %d bytes differs from the %d expected", len(got), len(want.buf))
		}
	}
}
