package money

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Amount is a decimal value in a currency. The zero Amount has no currency and
// is not valid; construct amounts with Parse, New or FromMinor.
type Amount struct {
	Value    decimal.Decimal
	Currency string
}

// ErrTooPrecise reports an amount with more decimals than its currency allows.
var ErrTooPrecise = errors.New("more decimal places than the currency allows")

// ErrSyntax reports text that is not a plain decimal number.
var ErrSyntax = errors.New("not a decimal number")

// ErrTooLong reports amount text longer than MaxTextLen.
var ErrTooLong = errors.New("amount text too long")

// MaxTextLen bounds the text of an amount: 40 characters hold any real
// amount with room to spare, and a 100,000-digit "amount" is refused before
// it is parsed.
const MaxTextLen = 40

// clip quotes s for an error message, cut when long.
func clip(s string) string {
	const max = 48
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
}

// Parse reads a plain decimal string ("1500", "12.50", "-4000.00") in currency.
// It accepts an optional leading sign and at most the currency's number of
// decimals; exponents, thousands separators, spaces and empty input are errors.
func Parse(s, currency string) (Amount, error) {
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
	if d, ok := quickDecimal(s, exponents[cur]); ok {
		return Amount{Value: d, Currency: cur}, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Amount{}, fmt.Errorf("%s: %w", clip(s), ErrSyntax)
	}
	return New(d, cur)
}

// New checks that d fits cur's exponent and returns it as an Amount.
func New(d decimal.Decimal, currency string) (Amount, error) {
	cur, err := NormalizeCurrency(currency)
	if err != nil {
		return Amount{}, err
	}
	exp := exponents[cur]
	if !d.Equal(d.Truncate(exp)) {
		return Amount{}, fmt.Errorf("%s in %s (at most %d): %w", clipNum(d.String()), cur, exp, ErrTooPrecise)
	}
	return Amount{Value: d.Truncate(exp), Currency: cur}, nil
}

// FromMinor converts integer minor units (Stripe's amounts) to an Amount.
func FromMinor(minor int64, currency string) (Amount, error) {
	cur, err := NormalizeCurrency(currency)
	if err != nil {
		return Amount{}, err
	}
	return Amount{Value: decimal.New(minor, -exponents[cur]), Currency: cur}, nil
}

// Minor returns the amount in integer minor units. It fails when the value does
// not fit in an int64.
func (a Amount) Minor() (int64, error) {
	exp, err := Exponent(a.Currency)
	if err != nil {
		return 0, err
	}
	m := a.Value.Shift(exp)
	if !m.IsInteger() || !m.BigInt().IsInt64() {
		return 0, fmt.Errorf("money: %s %s does not fit in int64 minor units", a.Value, a.Currency)
	}
	return m.IntPart(), nil
}

// IsZero reports whether the amount has no currency (the zero Amount).
func (a Amount) IsZero() bool { return a.Currency == "" }

// Equal reports whether a and b have the same currency and value.
func (a Amount) Equal(b Amount) bool {
	return a.Currency == b.Currency && a.Value.Equal(b.Value)
}

// String renders the amount at its currency's exponent, e.g. "KES 1500.00".
func (a Amount) String() string {
	if a.Currency == "" {
		return "-"
	}
	return a.Currency + " " + a.Text()
}

// Text renders the value at the currency's exponent, e.g. "1500.00".
func (a Amount) Text() string {
	exp, ok := exponents[a.Currency]
	if !ok {
		return a.Value.String()
	}
	return a.Value.StringFixed(exp)
}

// Display renders the amount as people read it on every surface (CLI,
// console, Slack): "KES 1,500.00"; the zero Amount is "-".
func (a Amount) Display() string {
	if a.Currency == "" {
		return "-"
	}
	return a.Currency + " " + a.Format()
}

// Format renders the value with thousands separators, e.g. "1,500.00".
func (a Amount) Format() string {
	intPart, frac, hasFrac := strings.Cut(a.Text(), ".")
	if hasFrac {
		return Group(intPart) + "." + frac
	}
	return Group(intPart)
}

// Group puts thousands separators into a string of digits with an optional
// leading minus: "-1131340" -> "-1,131,340".
func Group(digits string) string {
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func plainDecimal(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i = 1
	}
	digits, dot := 0, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// quickDecimal reads s, a plainDecimal, when it has at most 18 digits and
// at most exp decimals: the value decimal.NewFromString returns (the
// digits as coefficient, minus the decimals as exponent), which New then
// keeps as it is. Otherwise it returns false.
func quickDecimal(s string, exp int32) (decimal.Decimal, bool) { return QuickDecimal(s, exp) }

// QuickDecimal reads s, a decimal number whose form the caller has checked
// (an optional sign, digits, at most one dot, and thousands commas in
// their places, which it skips), when it has at most 18 digits and at most
// exp decimals. The value is the one Parse gives the same digits without
// the commas: the digits as coefficient, minus the decimals as exponent.
// Otherwise it returns false, and the caller takes the general path.
func QuickDecimal(s string, exp int32) (decimal.Decimal, bool) {
	i, neg := 0, false
	if s[0] == '-' || s[0] == '+' {
		i, neg = 1, s[0] == '-'
	}
	var c int64
	digits, decimals, dot := 0, int32(0), false
	for ; i < len(s); i++ {
		switch s[i] {
		case ',':
			continue
		case '.':
			dot = true
			continue
		}
		if digits++; digits > 18 {
			return decimal.Decimal{}, false
		}
		c = c*10 + int64(s[i]-'0')
		if dot {
			decimals++
		}
	}
	if decimals > exp {
		return decimal.Decimal{}, false
	}
	if neg {
		c = -c
	}
	return decimal.New(c, -decimals), true
}

// clipNum shortens a long number for an error message.
func clipNum(s string) string {
	const max = 48
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s… (%d digits)", s[:max], len(s))
}
