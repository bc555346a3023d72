package stripe

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// stripeExponents lists the currencies whose minor unit in Stripe's API
// differs from ISO 4217. Stripe keeps ISK as a two-decimal currency (an
// amount of 500 is 5 krónur) and treats MGA as zero-decimal.
var stripeExponents = map[string]int32{"ISK": 2, "MGA": 0}

// errNegative reports a negative amount where Stripe only sends magnitudes.
var errNegative = errors.New("is negative")

// apiExponent returns the number of minor-unit digits Stripe's API uses for
// a normalised currency code.
func apiExponent(cur string) (int32, error) {
	if e, ok := stripeExponents[cur]; ok {
		return e, nil
	}
	return money.Exponent(cur)
}

// fromMinor converts an amount in Stripe's integer minor units to an Amount.
// The result must fit the currency's ISO exponent: ISK 5.50 (minor 550) is
// refused, never rounded.
func fromMinor(minor int64, currency string) (money.Amount, error) {
	cur, err := money.NormalizeCurrency(currency)
	if err != nil {
		return money.Amount{}, err
	}
	exp, err := apiExponent(cur)
	if err != nil {
		return money.Amount{}, err
	}
	return money.New(decimal.New(minor, -exp), cur)
}

// toMinor converts an Amount to Stripe's integer minor units and lower-case
// currency code.
func toMinor(a money.Amount) (int64, string, error) {
	if a.IsZero() {
		return 0, "", errors.New("amount has no currency")
	}
	exp, err := apiExponent(a.Currency)
	if err != nil {
		return 0, "", err
	}
	m := a.Value.Shift(exp)
	if !m.IsInteger() || !m.BigInt().IsInt64() {
		return 0, "", fmt.Errorf("%s does not fit Stripe's minor units", a)
	}
	return m.IntPart(), strings.ToLower(a.Currency), nil
}
