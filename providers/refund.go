package providers

import (
	"context"
	"errors"

	"github.com/reconcilehq/reconcile/money"
)

// RefundRequest is one try at returning money for a charge.
type RefundRequest struct {
	// RefundKey is the refund intent's stable key; providers that honour
	// idempotency keys receive it as the key, and it is written into the
	// refund's metadata so that the refund can be found again.
	RefundKey string
	// ChargeKey is the key of the charge intent the money goes back for.
	ChargeKey string
	// ChargeRef and ChargeTxnID identify the charge at the provider, as the
	// charge's succeeded attempt recorded them: the request-level id
	// (Stripe PaymentIntent id, M-Pesa CheckoutRequestID) and the
	// money-level id (Stripe charge id, M-Pesa receipt number).
	ChargeRef   string
	ChargeTxnID string
	// Amount is what to give back, in the charge's currency.
	Amount   money.Amount
	Reason   string
	Metadata map[string]string
	// Attempt numbers the tries at this refund, from 1.
	Attempt int
}

// Refunder asks a provider to give money back for a charge. The answer uses
// the charge statuses: ProviderRef is the request-level id to record on the
// attempt (Stripe refund id, M-Pesa reversal OriginatorConversationID) and
// TxnID the money-level id when known (Stripe refund id, M-Pesa reversal
// receipt). Pending means accepted with the verdict to come by callback.
type Refunder interface {
	Refund(ctx context.Context, req RefundRequest) (ChargeResult, error)
}

// RefundFinder looks a refund up by its refund key (Stripe: the refund's
// metadata), for attempts whose idempotency key may have expired. found is
// false when the provider has no refund for the key.
type RefundFinder interface {
	FindRefund(ctx context.Context, req RefundRequest) (res ChargeResult, found bool, err error)
}

// RefundStatusQuerier asks the provider about an earlier refund attempt by
// the provider reference it recorded. A provider whose answer comes later
// by callback (M-Pesa Transaction Status) returns StatusUnknown once the
// question is sent; the callback then settles the attempt.
type RefundStatusQuerier interface {
	QueryRefundStatus(ctx context.Context, req RefundRequest, providerRef string) (ChargeResult, error)
}

// RefundSwitch is implemented by a charger that can refund only once it is
// configured to (M-Pesa needs an initiator and its credential). While
// RefundsEnabled is false a refund intent is recorded without a job, as for
// a provider that cannot refund at all.
type RefundSwitch interface {
	RefundsEnabled() bool
}

// RefundChecker says, before anything is sent, whether a refund request
// could be sent: the checks the provider's Refund makes first. An error
// wrapping ErrAwaitingEvidence says it cannot be sent yet, not never.
type RefundChecker interface {
	CheckRefund(req RefundRequest) error
}

// ErrAwaitingEvidence marks a refund that cannot be sent yet because the
// books lack what the provider needs to send it (M-Pesa: the charge's
// receipt, when the charge's callback never came): its job waits and looks
// again rather than failing, and sends it once a pull, a callback or a
// statement brings what was missing.
var ErrAwaitingEvidence = errors.New("waiting for evidence")
