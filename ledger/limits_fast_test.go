package ledger

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// checkAmountByDefinition is CheckAmount without the quick path: the
// maximum computed for the call and compared by absolute value.
func checkAmountByDefinition(a money.Amount) error {
	if a.IsZero() {
		return nil
	}
	max := maxAmount(a.Currency)
	if max.IsZero() {
		return &money.UnknownCurrencyError{Code: a.Currency}
	}
	if a.Value.Abs().GreaterThan(max.Value) {
		return fmt.Errorf("%s %s is above the maximum of %s: %w", a.Currency, SafeText(a.Value.String(), 40), max.Text(), ErrOutOfRange)
	}
	return nil
}

// checkTextByDefinition is CheckText without the quick path for ASCII.
func checkTextByDefinition(s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%d bytes, longer than %d: %w", len(s), max, ErrOutOfRange)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", Clip(s))
	}
	for i, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) {
			return fmt.Errorf("%s has control character %U at byte %d", Clip(s), r, i)
		}
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestCheckAmountQuickPath holds CheckAmount and MaxAmount, which use
// maxima computed once, to their definition on random amounts near and far
// from the maxima, in every exponent, with default and configured maxima.
func TestCheckAmountQuickPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	codes := money.Codes()
	compare := func(t *testing.T, a money.Amount) {
		t.Helper()
		if got, want := errText(CheckAmount(a)), errText(checkAmountByDefinition(a)); got != want {
			t.Fatalf("CheckAmount(%s %s, exponent %d) = %s, want %s", a.Currency, a.Value, a.Value.Exponent(), got, want)
		}
	}
	run := func(t *testing.T) {
		for _, cur := range append(codes, "XXX", "") {
			if got, want := MaxAmount(cur), maxAmount(cur); !got.Equal(want) || got.Value.Exponent() != want.Value.Exponent() {
				t.Fatalf("MaxAmount(%s) = %s, want %s", cur, got, want)
			}
		}
		for range 20000 {
			cur := codes[rng.IntN(len(codes))]
			if rng.IntN(50) == 0 {
				cur = "XXX" // no such currency
			}
			max := maxAmount(cur)
			var d decimal.Decimal
			switch rng.IntN(4) {
			case 0: // at the maximum, one below or one above, in some exponent
				d = max.Value.Add(decimal.New(int64(rng.IntN(3)-1), -int32(rng.IntN(6))))
			case 1: // small
				d = decimal.New(rng.Int64N(1_000_000), -int32(rng.IntN(6)))
			case 2: // any size, any exponent, positive or not
				d = decimal.New(rng.Int64(), int32(rng.IntN(12)-8))
			default: // the maximum rescaled, or a big coefficient
				d = decimal.NewFromBigInt(max.Value.Coefficient(), max.Value.Exponent())
				if rng.IntN(2) == 0 {
					d = decimal.New(max.Value.CoefficientInt64()/int64(1+rng.IntN(100)), -int32(rng.IntN(5)))
				}
			}
			if rng.IntN(2) == 0 {
				d = d.Neg()
			}
			compare(t, money.Amount{Value: d, Currency: cur})
		}
		for _, s := range []string{"10000000000000", "10000000000000.00", "10000000000000.01", "9999999999999.99", "-10000000000000.0",
			"-10000000000000.001", "1e13", "1.00000000000001e13", "0", "-0.00", "1000000", "1000000.01", "-1000000.01", "999999.999"} {
			for _, cur := range []string{"KES", "JPY", "BHD", "CLF", "USD"} {
				compare(t, money.Amount{Value: decimal.RequireFromString(s), Currency: cur})
			}
		}
	}
	for _, a := range []money.Amount{{Value: decimal.New(150000, -2), Currency: "KES"}, {Value: decimal.New(-15, 0), Currency: "KES"},
		{Value: decimal.New(1, -4), Currency: "CLF"}} {
		if !withinMax(a) {
			t.Fatalf("%s does not take the quick path", a)
		}
	}
	for _, a := range []money.Amount{{Value: decimal.New(1, -3), Currency: "KES"}, {Value: decimal.New(1, 1), Currency: "KES"},
		{Value: decimal.New(1, 0), Currency: "XXX"}, {Value: decimal.New(1, 20), Currency: "KES"}} {
		if withinMax(a) {
			t.Fatalf("%s takes the quick path", a)
		}
	}
	t.Run("default", run)
	t.Run("configured", func(t *testing.T) {
		if err := SetMaxAmounts(map[string]decimal.Decimal{"kes": decimal.RequireFromString("1000000"),
			"JPY": decimal.RequireFromString("123456789"), "BHD": decimal.RequireFromString("1234.567"),
			"USD": decimal.RequireFromString("0.01")}); err != nil {
			t.Fatal(err)
		}
		defer maxMinor.Store(nil)
		run(t)
	})
	// The default again: the maxima are computed again when they change.
	t.Run("default again", run)
}

// TestCheckTextQuickPath holds CheckText's quick path for printable ASCII
// to its definition on random strings of ASCII, controls, invalid bytes and
// other runes.
func TestCheckTextQuickPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "0", " ", "~", "-", "\x00", "\x1f", "\x7f", "\x80", "\xff", "é", "\u0085", "\u202e", "\u2066",
		"\u200f", "\u061c", "✓", "\t", "\n", "\xe2\x80", "\U0001F600"}
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(12) {
			if rng.IntN(3) == 0 {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			} else {
				b.WriteByte(byte(0x20 + rng.IntN(0x5f)))
			}
		}
		s, max := b.String(), 4+rng.IntN(20)
		if got, want := errText(CheckText(s, max)), errText(checkTextByDefinition(s, max)); got != want {
			t.Fatalf("CheckText(%q, %d) = %s, want %s", s, max, got, want)
		}
	}
	for c := range 256 {
		s := "k" + string(rune(c))
		if got, want := errText(CheckText(s, MaxIDLen)), errText(checkTextByDefinition(s, MaxIDLen)); got != want {
			t.Fatalf("CheckText(%q) = %s, want %s", s, got, want)
		}
	}
	if !errors.Is(CheckText(strings.Repeat("k", MaxIDLen+1), MaxIDLen), ErrOutOfRange) {
		t.Fatal("a long text accepted")
	}
}
