package providers

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// ChargeRequest is one try at charging an intent.
type ChargeRequest struct {
	// IntentKey is the intent's stable key; providers that honour
	// idempotency keys receive it as the key.
	IntentKey string
	Amount    money.Amount
	Customer  string
	// Reference is what the payer sees (M-Pesa AccountReference, at most 12
	// characters).
	Reference   string
	Description string
	Metadata    map[string]string
	// Attempt numbers the tries at this intent, from 1.
	Attempt int
}

// ChargeStatus is what the provider says about a charge.
type ChargeStatus string

// Charge statuses. Pending means accepted and not final (an STK prompt on
// the customer's phone); unknown means the provider cannot say.
const (
	StatusSucceeded ChargeStatus = "succeeded"
	StatusFailed    ChargeStatus = "failed"
	StatusPending   ChargeStatus = "pending"
	StatusUnknown   ChargeStatus = "unknown"
)

// ChargeResult is the provider's answer about a charge.
type ChargeResult struct {
	// ProviderRef is the request-level id to record on the attempt (Stripe
	// PaymentIntent id, M-Pesa CheckoutRequestID).
	ProviderRef string
	Status      ChargeStatus
	// TxnID is the money-level id when known (Stripe charge id, M-Pesa
	// receipt number).
	TxnID string
	// Amount is what the provider says it charged, when it says.
	Amount money.Amount
	// Code and Reason explain a failure in the provider's terms.
	Code   string
	Reason string
	At     time.Time
}

// Charger starts a charge at a provider.
type Charger interface {
	Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error)
}

// RequestChecker is implemented by chargers that can tell, before anything
// is recorded or sent, that a request can never be accepted (M-Pesa: not
// whole shillings, not a Kenyan mobile number). The error wraps a
// *ledger.FieldError naming the field at fault.
type RequestChecker interface {
	CheckRequest(req ChargeRequest) error
}

// KeyHonourer is implemented by chargers whose provider honours idempotency
// keys: sending the same key again replays the first result instead of
// charging again.
type KeyHonourer interface {
	HonoursIdempotencyKeys() bool
}

// StatusQuerier asks the provider for the outcome of an earlier attempt by
// its provider reference.
type StatusQuerier interface {
	QueryStatus(ctx context.Context, providerRef string) (ChargeResult, error)
}

// ChargeFinder looks a charge up by intent key, for attempts whose provider
// reference was never recorded or whose idempotency key may have expired.
// found is false when the provider has no charge for the key.
type ChargeFinder interface {
	FindCharge(ctx context.Context, intentKey string) (res ChargeResult, found bool, err error)
}

// KeyRetention is implemented by chargers whose provider forgets
// idempotency keys after a while (Stripe: 24 hours); an attempt older than
// this is looked up before its key is sent again.
type KeyRetention interface {
	IdempotencyKeyRetention() time.Duration
}
