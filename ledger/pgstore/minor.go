package pgstore

import (
	"math"

	"github.com/reconcilehq/reconcile/money"
)

// AmountMinor is minor_units(amount, currency) (migrations 0009 and 0012)
// in Go, for the rows written with COPY: the amount in integer minor units
// of its currency, when that is exact and within ±(2^63-1); ok is false
// otherwise (the column is then NULL). A currency the money package does
// not know has two decimals, as in the SQL function. The two must agree on
// every amount (TestAmountMinorAgrees compares them).
func AmountMinor(a money.Amount) (minor int64, ok bool) {
	exp, err := money.Exponent(a.Currency)
	if err != nil {
		exp = 2
	}
	d := a.Value
	if d.NumDigits() <= 18 {
		// The coefficient fits an int64 (|c| < 10^18): scale it
		// without allocating.
		c, k := d.CoefficientInt64(), d.Exponent()+exp
		switch {
		case k >= 0 && k <= 18:
			if p := pow10[k]; c <= math.MaxInt64/p && c >= -math.MaxInt64/p {
				return c * p, true
			}
			return 0, false
		case k < 0 && k >= -18:
			p := pow10[-k]
			if c%p != 0 {
				return 0, false
			}
			return c / p, true
		case k < 0:
			return 0, c == 0
		}
	}
	m := d.Shift(exp)
	if !m.IsInteger() {
		return 0, false
	}
	b := m.BigInt()
	if !b.IsInt64() || b.Int64() == math.MinInt64 {
		return 0, false
	}
	return b.Int64(), true
}

// pow10[k] is 10^k.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()
