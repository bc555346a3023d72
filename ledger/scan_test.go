package ledger_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

var minorCases = []struct {
	in   string
	exp  int32
	want int64
	err  string
}{
	{"1500", 2, 150000, ""}, {"12.5", 2, 1250, ""}, {"-4.50", 2, -450, ""}, {"+1", 0, 1, ""},
	{"1.2300000", 2, 123, ""}, {"0.001", 3, 1, ""}, {"12.345", 2, 0, "more decimal places"},
	{"", 2, 0, "not a decimal"}, {"1e3", 2, 0, "not a decimal"}, {"1,000", 2, 0, "not a decimal"},
	{"-", 2, 0, "not a decimal"}, {"1.2.3", 2, 0, "not a decimal"}, {" 1", 2, 0, "not a decimal"},
	{"92233720368547758.07", 2, 9223372036854775807, ""}, {"92233720368547758.08", 2, 0, "int64"},
	{"-92233720368547758.07", 2, -9223372036854775807, ""},
	{"99999999999999999999", 0, 0, "int64"}, {"1.000000000000000000000000", 2, 100, ""},
}

func TestParseMinor(t *testing.T) {
	t.Parallel()
	for _, c := range minorCases {
		got, err := ledger.ParseMinor([]byte(c.in), c.exp)
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseMinor(%q, %d) = %d, %v; want %d, %q", c.in, c.exp, got, err, c.want, c.err)
		}
	}
	if _, err := ledger.ParseMinor([]byte("1.001"), 2); !errors.Is(err, money.ErrTooPrecise) {
		t.Errorf("over-precise: %v", err)
	}
}

// FuzzParseMinor checks ParseMinor against the decimal package: whatever it
// accepts is the exact value, and it refuses what has no exact minor units.
func FuzzParseMinor(f *testing.F) {
	for _, c := range minorCases {
		f.Add(c.in, int8(c.exp))
	}
	f.Fuzz(func(t *testing.T, s string, exp int8) {
		if exp < 0 || exp > 4 {
			return
		}
		got, err := ledger.ParseMinor([]byte(s), int32(exp))
		if err != nil {
			return
		}
		d, derr := decimal.NewFromString(s)
		if derr != nil {
			t.Fatalf("ParseMinor(%q) = %d, but decimal refuses it: %v", s, got, derr)
		}
		if want := d.Shift(int32(exp)); !want.Equal(decimal.New(got, 0)) {
			t.Fatalf("ParseMinor(%q, %d) = %d, want %s", s, exp, got, want)
		}
	})
}

func TestMinorUnits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		coef       int64
		scale, exp int32
		want       int64
		tooPrecise bool
		outOfRange bool
	}{
		{15, -4, 2, 15000000, false, false}, {150000, 2, 2, 150000, false, false}, {1, 0, 3, 1000, false, false},
		{1250, 3, 2, 125, false, false}, {1251, 3, 2, 0, true, false}, {-5, 1, 0, 0, true, false},
		{922337203685477581, -1, 0, 0, false, true}, {0, -8, 2, 0, false, false},
	} {
		got, err := ledger.MinorUnits(c.coef, c.scale, c.exp)
		switch {
		case c.tooPrecise && !errors.Is(err, money.ErrTooPrecise),
			c.outOfRange && (err == nil || !strings.Contains(err.Error(), "int64")),
			!c.tooPrecise && !c.outOfRange && (err != nil || got != c.want):
			t.Errorf("MinorUnits(%d, %d, %d) = %d, %v; want %d", c.coef, c.scale, c.exp, got, err, c.want)
		}
	}
}

func TestCurrencies(t *testing.T) {
	var c ledger.Currencies
	for _, code := range []string{"KES", "KES", "USD", "KES", "JPY"} {
		got, exp, err := c.Lookup([]byte(code))
		want, _ := money.Exponent(code)
		if err != nil || got != code || exp != want {
			t.Fatalf("Lookup(%s) = %s, %d, %v", code, got, exp, err)
		}
	}
	if _, _, err := c.Lookup([]byte("XXZ")); err == nil {
		t.Fatal("unknown currency accepted")
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = c.Lookup([]byte("USD")) }); n != 0 {
		t.Fatalf("Lookup allocates %.0f times", n)
	}
}
