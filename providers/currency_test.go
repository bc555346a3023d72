package providers_test

import (
	"errors"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

func TestCheckIntentCurrency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider, currency string
		kind               ledger.IntentKind
		err                string
	}{
		{"mpesa", "KES", "", ""},
		{" MPesa ", "kes", "", ""},
		{"mpesa", "USD", "", "field currency: M-Pesa moves only KES, not USD"},
		{"mpesa", "USD", ledger.IntentCharge, "field currency: M-Pesa moves only KES, not USD"},
		{"mpesa", "", "", "field currency: M-Pesa moves only KES"},
		{"mpesa", "USD", ledger.IntentRefund, ""}, // checked against its charge
		{"stripe", "USD", "", ""},
		{"stripe", "JPY", "", ""},
		{"acme-bank", "EUR", "", ""},
	} {
		p := ledger.IntentParams{Provider: tc.provider, Kind: tc.kind, Amount: money.Amount{Currency: tc.currency}}
		err := providers.CheckIntentCurrency(p)
		var fe *ledger.FieldError
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s %s: %v", tc.provider, tc.currency, err)
		case tc.err != "" && (!errors.As(err, &fe) || fe.Field != "currency" || err.Error() != tc.err):
			t.Errorf("%s %s: %v, want %s", tc.provider, tc.currency, err, tc.err)
		}
	}
}
