package pgstore

import (
	"errors"
	"testing"
	"time"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// encodeNumeric encodes d the way PostgreSQL sends a numeric in binary.
func encodeNumeric(t testing.TB, d decimal.Decimal) []byte {
	m := pgtype.NewMap()
	pgxdecimal.Register(m)
	b, err := m.Encode(oidNumeric, pgx.BinaryFormatCode, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var numericCases = []struct {
	in  string
	exp int32
}{
	{"1500", 2}, {"1500.00", 2}, {"12.5", 2}, {"-12.50", 2}, {"0", 2}, {"0.01", 2}, {"0.001", 3}, {"150000", 0},
	{"92233720368547758.07", 2}, {"-92233720368547758.07", 2}, {"92233720368547758.08", 2}, {"12.345", 2},
	{"10000000000000000000000", 0}, {"1.0000000000000000000000000", 2}, {"0.00000000000000000001", 2},
}

func TestNumericMinor(t *testing.T) {
	t.Parallel()
	for _, c := range numericCases {
		checkNumeric(t, c.in, c.exp)
	}
	if _, err := numericMinor(encodeNumeric(t, decimal.RequireFromString("12.345")), 2); !errors.Is(err, money.ErrTooPrecise) {
		t.Fatalf("over-precise: %v", err)
	}
	nan := []byte{0, 0, 0, 0, 0xC0, 0, 0, 0}
	if _, err := numericMinor(nan, 2); err == nil {
		t.Fatal("NaN accepted")
	}
	if _, err := numericMinor([]byte{0, 1, 0, 0, 0, 0, 0, 0}, 2); err == nil {
		t.Fatal("short numeric accepted")
	}
}

// checkNumeric compares numericMinor with the decimal package: the exact
// minor units when they exist and fit, an error otherwise.
func checkNumeric(t *testing.T, s string, exp int32) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return
	}
	got, err := numericMinor(encodeNumeric(t, d), exp)
	want := d.Shift(exp)
	fits := want.IsInteger() && want.BigInt().IsInt64()
	switch {
	case fits && (err != nil || got != want.IntPart()):
		t.Fatalf("numericMinor(%s, %d) = %d, %v; want %s", s, exp, got, err, want)
	case !fits && err == nil:
		t.Fatalf("numericMinor(%s, %d) = %d, want an error", s, exp, got)
	}
}

func FuzzNumericMinor(f *testing.F) {
	for _, c := range numericCases {
		f.Add(c.in, int8(c.exp))
	}
	f.Fuzz(func(t *testing.T, s string, exp int8) {
		if exp < 0 || exp > 4 || len(s) > 60 {
			return
		}
		if d, err := decimal.NewFromString(s); err != nil || d.Exponent() < -100 || d.Exponent() > 100 {
			return
		}
		checkNumeric(t, s, int32(exp))
	})
}

func TestTimestamptz(t *testing.T) {
	t.Parallel()
	for _, us := range []int64{0, -1, 1, 1e15, -1e15} {
		b := pgTime(timeFromPG(us))
		got, err := timestamptz(b)
		if err != nil || got.UnixMicro()-pgEpochMicros != us || got.Location().String() != "UTC" {
			t.Fatalf("timestamptz(%d) = %v, %v", us, got, err)
		}
	}
	inf := []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if _, err := timestamptz(inf); err == nil {
		t.Fatal("infinity accepted")
	}
	if got, err := timestamptz(nil); err != nil || !got.IsZero() {
		t.Fatalf("NULL = %v, %v", got, err)
	}
}

func timeFromPG(us int64) time.Time { return time.UnixMicro(us + pgEpochMicros).UTC() }
