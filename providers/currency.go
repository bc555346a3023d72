package providers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
)

// fixedCurrency is a provider that moves money in some currencies only.
type fixedCurrency struct {
	// name is the provider's name in messages.
	name       string
	currencies []string
}

// fixedCurrencies lists, by provider name, the providers whose money is in
// fixed currencies: M-Pesa moves Kenyan shillings only. A provider not
// listed (Stripe, a configured CSV statement) takes any ISO 4217 currency.
var fixedCurrencies = map[string]fixedCurrency{
	"mpesa": {name: "M-Pesa", currencies: []string{"KES"}},
}

// CheckIntentCurrency refuses a charge intent in a currency its provider
// never moves (an M-Pesa intent in USD), whatever the intent's state: no
// evidence could ever match it. It is the one rule every path an intent
// enters by applies (the intents API, the charge service, the intents CSV
// import), so that none takes what another refuses. A refund is left to
// the check against its charge, whose currency it must have. Provider and
// currency are compared as the ledger normalises them (lower-case name,
// upper-case code). The error is a *ledger.FieldError on "currency".
func CheckIntentCurrency(p ledger.IntentParams) error {
	if p.IsRefund() {
		return nil
	}
	fc, ok := fixedCurrencies[strings.ToLower(strings.TrimSpace(p.Provider))]
	cur := strings.ToUpper(strings.TrimSpace(p.Amount.Currency))
	if !ok || slices.Contains(fc.currencies, cur) {
		return nil
	}
	msg := fmt.Sprintf("%s moves only %s", fc.name, strings.Join(fc.currencies, ", "))
	if cur != "" {
		msg += ", not " + ledger.SafeText(cur, 16)
	}
	return &ledger.FieldError{Field: "currency", Err: errors.New(msg)}
}
