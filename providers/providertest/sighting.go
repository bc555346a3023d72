package providertest

import (
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// CheckSighting fails tb unless s is a sighting a provider may emit: a
// transaction the ledger accepts (ledger.ValidateTxn: known type and
// status, amount and time within the limits), an amount of a known
// currency at that currency's scale, a time in UTC, a source channel and
// reference, and a settlement, when there is one, at its own currency's
// scale, not negative and in another currency than the amount presented.
// Each provider's tests add what is particular to it.
func CheckSighting(tb testing.TB, s providers.Sighting) {
	tb.Helper()
	x := s.Txn
	if err := ledger.ValidateTxn(x); err != nil {
		tb.Fatalf("emitted an invalid transaction %+v: %v", x, err)
	}
	exp, err := money.Exponent(x.Amount.Currency)
	if err != nil {
		tb.Fatalf("emitted currency %q: %v", x.Amount.Currency, err)
	}
	if !x.Amount.Value.Equal(x.Amount.Value.Truncate(exp)) {
		tb.Fatalf("emitted %s with more than %d decimals", x.Amount.Value, exp)
	}
	if x.OccurredAt.Location() != time.UTC {
		tb.Fatalf("emitted time %v is not UTC", x.OccurredAt)
	}
	if s.Source.Channel == "" || s.Source.Ref == "" {
		tb.Fatalf("emitted a sighting without a source: %+v", s.Source)
	}
	if st := x.Settlement; !st.IsZero() {
		exp, err := money.Exponent(st.Currency)
		if err != nil || !st.Value.Equal(st.Value.Truncate(exp)) || st.Value.IsNegative() || st.Currency == x.Amount.Currency {
			tb.Fatalf("emitted settlement %s %s (presented %s): %v", st.Value, st.Currency, x.Amount.Currency, err)
		}
	}
}
