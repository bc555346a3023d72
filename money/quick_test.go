package money

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// parseByDefinition is Parse without the quick path for short amounts.
func parseByDefinition(s, currency string) (Amount, error) {
	cur, err := NormalizeCurrency(currency)
	if err != nil {
		return Amount{}, err
	}
	if len(s) > MaxTextLen {
		return Amount{}, fmt.Errorf("%s: %d characters, longer than %d: %w", clip(s), len(s), MaxTextLen, ErrTooLong)
	}
	if !plainDecimal(s) {
		return Amount{}, fmt.Errorf("%s: %w", clip(s), ErrSyntax)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Amount{}, fmt.Errorf("%s: %w", clip(s), ErrSyntax)
	}
	return New(d, cur)
}

// TestParseQuickPath holds Parse, which reads short amounts without
// decimal.NewFromString, to its definition on random amounts: signs, dots
// at either end, leading zeros, 17 to 20 digits, more decimals than the
// currency has. The results must agree in value, exponent and
// coefficient (what every later operation and rendering sees), and errors
// in text.
func TestParseQuickPath(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(17, 18))
	curs := []string{"KES", "JPY", "KWD", "CLF", "usd"}
	quick := 0
	for range 100000 {
		var b strings.Builder
		switch r.IntN(5) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		n := r.IntN(22)
		dot := -1
		if r.IntN(3) > 0 {
			dot = r.IntN(n + 1)
		}
		for i := range n {
			if i == dot {
				b.WriteByte('.')
			}
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		if dot == n {
			b.WriteByte('.')
		}
		s, cur := b.String(), curs[r.IntN(len(curs))]
		if r.IntN(50) == 0 {
			s += "x"
		}
		got, gerr := Parse(s, cur)
		want, werr := parseByDefinition(s, cur)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || got.Currency != want.Currency ||
			got.Value.Exponent() != want.Value.Exponent() || got.Value.Coefficient().Cmp(want.Value.Coefficient()) != 0 ||
			got.Value.String() != want.Value.String() || got.Text() != want.Text() {
			t.Fatalf("Parse(%q, %s) = %v (exponent %d), %v; want %v (exponent %d), %v", s, cur, got, got.Value.Exponent(), gerr,
				want, want.Value.Exponent(), werr)
		}
		if plainDecimal(s) {
			if _, ok := quickDecimal(s, exponents[strings.ToUpper(cur)]); ok {
				quick++
			}
		}
	}
	if quick < 10000 {
		t.Fatalf("the quick path read only %d amounts", quick)
	}
}

// TestNormalizeCurrencyQuickPath holds NormalizeCurrency, which looks the
// usual spellings up, to its definition: trimmed, upper-cased, known.
func TestNormalizeCurrencyQuickPath(t *testing.T) {
	t.Parallel()
	byDefinition := func(code string) (string, error) {
		c := strings.ToUpper(strings.TrimSpace(code))
		if _, ok := exponents[c]; !ok {
			return "", &UnknownCurrencyError{Code: code}
		}
		return c, nil
	}
	codes := []string{"", " ", "usd", "USD", "Usd", " kes", "KES\n", "xyz", "us", "usdd", "ｕｓｄ", "\u0130"}
	for c := range exponents {
		codes = append(codes, c, strings.ToLower(c), " "+c, c[:2])
	}
	for _, c := range codes {
		got, gerr := NormalizeCurrency(c)
		want, werr := byDefinition(c)
		if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("NormalizeCurrency(%q) = %q, %v; want %q, %v", c, got, gerr, want, werr)
		}
	}
}
