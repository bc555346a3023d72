package ledger

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// IntentKind says which way an intent moves money and who moves it: a
// charge is taken from the customer by us (an STK push, a card charge), once;
// an expected payment is paid by the customer (by paybill account number,
// bank transfer or payment link), in as many parts as they choose; a refund
// returns (part of) a charge or an expected payment.
type IntentKind string

// Intent kinds.
const (
	IntentCharge   IntentKind = "charge"
	IntentRefund   IntentKind = "refund"
	IntentExpected IntentKind = "expected"
)

// Metadata a refund intent may carry.
const (
	// MetaChargeTxn names the provider transaction a refund gives money
	// back for, when it is not the charge's own (the duplicate of a
	// duplicate charge, the last payment of an overpayment): the refund is
	// sent for that transaction.
	MetaChargeTxn = "charge_txn"
	// MetaFinding names the finding a refund was made to fix.
	MetaFinding = "finding"
	// MetaReason is the reason sent with the refund (Stripe's refund
	// reason, M-Pesa's remarks).
	MetaReason = "reason"
)

// ParseIntentKind validates s as an IntentKind; empty is a charge.
func ParseIntentKind(s string) (IntentKind, error) {
	switch k := IntentKind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return IntentCharge, nil
	case IntentCharge, IntentRefund, IntentExpected:
		return k, nil
	}
	return "", fmt.Errorf("unknown kind %q (want charge, expected or refund)", s)
}

func (k IntentKind) orCharge() IntentKind {
	if k == "" {
		return IntentCharge
	}
	return k
}

// IsRefund reports whether the intent returns money for a charge.
func (p IntentParams) IsRefund() bool { return p.Kind == IntentRefund }

// IsExpected reports whether the intent is a payment the customer makes,
// possibly in parts, rather than a charge we take.
func (p IntentParams) IsExpected() bool { return p.Kind == IntentExpected }

// Charged reports whether intents of kind k are charged by the charge
// worker: charges are; refunds are sent by refund jobs; expected payments
// are paid by the customer and never charged.
func (k IntentKind) Charged() bool { return k.orCharge() == IntentCharge }

func (p IntentParams) checkKind() error {
	if p.Kind != IntentExpected {
		switch {
		case !p.DueAt.IsZero():
			return &FieldError{Field: "due_at", Err: fmt.Errorf("is set on a %s (only an expected payment has a due date)", p.Kind)}
		case !p.Tolerance.IsZero():
			return &FieldError{Field: "tolerance", Err: fmt.Errorf("is set on a %s (only an expected payment has a tolerance)", p.Kind)}
		}
	}
	switch p.Kind {
	case IntentCharge, IntentExpected:
		if p.RefundOf != "" {
			return &FieldError{Field: "refund_of", Err: fmt.Errorf("is set on a %s (kind refund names the charge it returns)", p.Kind)}
		}
	case IntentRefund:
		switch {
		case p.RefundOf == "":
			return &FieldError{Field: "refund_of", Err: fmt.Errorf("is required for a refund: the key of the charge intent")}
		case p.RefundOf == strings.TrimSpace(p.Key):
			return &FieldError{Field: "refund_of", Err: fmt.Errorf("names the refund itself")}
		}
	default:
		_, err := ParseIntentKind(string(p.Kind))
		return &FieldError{Field: "kind", Err: err}
	}
	return nil
}

// Refundable is what the books hold about a charge when a refund of it is
// created: the charge (found false when no intent has its key) and the sum
// of its other refunds that did not fail.
type Refundable struct {
	Charge   Intent
	Found    bool
	Refunded decimal.Decimal
}

// Remaining is what may still be refunded of the charge.
func (r Refundable) Remaining() money.Amount {
	return money.Amount{Value: r.Charge.Amount.Value.Sub(r.Refunded), Currency: r.Charge.Amount.Currency}
}

// CheckImportedRefundSends refuses a pending refund in an import (one that
// will be sent) whose charge has not succeeded, as the API refuses it: there
// is nothing at the provider to give back yet. Refunds in a final state are
// history and pass.
func CheckImportedRefundSends(state State, charge Intent) error {
	if state != StatePending || charge.State == StateSucceeded {
		return nil
	}
	return &FieldError{Field: "refund_of", Err: fmt.Errorf("charge %q is %s: only a succeeded charge can be refunded", charge.Key, charge.State)}
}

// CheckRefund validates a new refund p (normalised) against the charge it
// names: the charge exists and is a charge of the same provider, the refund
// is in the charge's currency and at most what remains refundable. Every
// problem is a *FieldError. Stores call it with the charge locked, so that
// concurrent refunds of one charge never exceed it together.
func CheckRefund(p IntentParams, r Refundable) error {
	c := r.Charge
	switch {
	case !r.Found:
		return &FieldError{Field: "refund_of", Err: fmt.Errorf("no intent has key %q", p.RefundOf)}
	case c.Kind == IntentRefund:
		return &FieldError{Field: "refund_of", Err: fmt.Errorf("intent %q is a %s, not a charge", p.RefundOf, c.Kind)}
	case c.Provider != p.Provider:
		return &FieldError{Field: "provider", Err: fmt.Errorf("%s differs from the charge's provider %s", p.Provider, c.Provider)}
	case c.Amount.Currency != p.Amount.Currency:
		return &FieldError{Field: "currency", Err: fmt.Errorf("%s differs from the charge's currency %s", p.Amount.Currency, c.Amount.Currency)}
	}
	if rem := r.Remaining(); p.Amount.Value.GreaterThan(rem.Value) {
		return &FieldError{Field: "amount", Err: fmt.Errorf("%s exceeds what remains refundable of charge %q: %s of %s (%s already refunded)",
			p.Amount.Text(), p.RefundOf, rem.Text(), c.Amount.Text(), money.Amount{Value: r.Refunded, Currency: c.Amount.Currency}.Text())}
	}
	return nil
}

// CountsAsRefunded reports whether a refund in state s holds part of its
// charge: every refund that did not fail.
func CountsAsRefunded(s State) bool { return s != StateFailed }
