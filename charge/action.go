package charge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// action is what a job does at the provider for its intent: charge it or
// send its refund. The worker's steps (claim, attempt, call, record, resume)
// are the same for both; only these calls differ.
type action struct {
	// name is "charge" or "refund": the job kind, and the call in metrics
	// and logs.
	name string
	// send makes the call for attempt n (from 1) under the intent key.
	send func(ctx context.Context, n int) (providers.ChargeResult, error)
	// query asks about an earlier attempt by the provider reference it
	// recorded; nil when the provider cannot be asked.
	query func(ctx context.Context, providerRef string) (providers.ChargeResult, error)
	// find looks the charge or refund up by the intent key, for attempts
	// whose key the provider may have forgotten; nil when it cannot.
	find func(ctx context.Context) (providers.ChargeResult, bool, error)
}

// callName names a secondary call in metrics: "status" and "find" for
// charges (as they always were), "refund_status" and "refund_find" for
// refunds.
func (a action) callName(call string) string {
	if a.name == string(ledger.IntentCharge) {
		return call
	}
	return a.name + "_" + call
}

func kindOf(in ledger.Intent) ledger.IntentKind {
	if in.IsRefund() {
		return ledger.IntentRefund
	}
	return ledger.IntentCharge
}

// chargeAction charges in through charger.
func (s *Service) chargeAction(in ledger.Intent, charger providers.Charger) action {
	req := func(n int) providers.ChargeRequest {
		return providers.ChargeRequest{IntentKey: in.Key, Amount: in.Amount, Customer: in.Customer,
			Reference: in.Reference, Metadata: in.Metadata, Attempt: n}
	}
	a := action{name: string(ledger.IntentCharge),
		send: func(ctx context.Context, n int) (providers.ChargeResult, error) { return charger.Charge(ctx, req(n)) }}
	if q, ok := charger.(providers.StatusQuerier); ok {
		a.query = q.QueryStatus
	}
	if f, ok := charger.(providers.ChargeFinder); ok {
		a.find = func(ctx context.Context) (providers.ChargeResult, bool, error) { return f.FindCharge(ctx, in.Key) }
	}
	return a
}

// errCannotRefund says that a provider's charger sends no refunds.
var errCannotRefund = errors.New("its charger cannot send refunds")

// refundRefused says why a refund can never be sent: the charge it names
// has not succeeded.
type refundRefused struct{ msg string }

func (e *refundRefused) Error() string { return e.msg }

// refundAction sends the refund in through charger, with the charge's
// provider identifiers read from the books. The error is a *refundRefused
// when the charge has not succeeded, or says that the provider cannot
// refund.
func (s *Service) refundAction(ctx context.Context, in ledger.Intent, charger providers.Charger) (action, error) {
	refunder, ok := charger.(providers.Refunder)
	if !ok {
		return action{}, fmt.Errorf("refund %s: provider %q: %w", in.Key, in.Provider, errCannotRefund)
	}
	base, err := s.RefundRequest(ctx, in)
	if err != nil {
		return action{}, err
	}
	req := func(n int) providers.RefundRequest {
		r := base
		r.Attempt = n
		return r
	}
	a := action{name: string(ledger.IntentRefund),
		send: func(ctx context.Context, n int) (providers.ChargeResult, error) { return refunder.Refund(ctx, req(n)) }}
	if q, ok := charger.(providers.RefundStatusQuerier); ok {
		a.query = func(ctx context.Context, providerRef string) (providers.ChargeResult, error) {
			res, err := q.QueryRefundStatus(ctx, req(1), providerRef)
			if err == nil && res.Status == providers.StatusUnknown {
				// The question is sent and the answer comes by callback
				// (M-Pesa Transaction Status): the refund waits for it, as
				// an accepted one does, until PendingGiveUp turns it
				// unknown. It is never sent again meanwhile.
				res.Status = providers.StatusPending
			}
			return res, err
		}
	}
	if f, ok := charger.(providers.RefundFinder); ok {
		a.find = func(ctx context.Context) (providers.ChargeResult, bool, error) { return f.FindRefund(ctx, req(1)) }
	}
	return a, nil
}

// RefundRequest is the request a refund job sends for the refund intent in
// (attempt 1): the refund key, amount and metadata (its "reason" entry as
// the reason), and the charge as the charge's succeeded attempt and
// provider transaction name it. A charge that has not succeeded fails it
// with an error saying so.
func (s *Service) RefundRequest(ctx context.Context, in ledger.Intent) (providers.RefundRequest, error) {
	ch, err := s.store.GetIntent(ctx, in.RefundOf)
	if err != nil {
		return providers.RefundRequest{}, fmt.Errorf("refund %s: charge %s: %w", in.Key, in.RefundOf, err)
	}
	if !refundable(ch, in) {
		return providers.RefundRequest{}, &refundRefused{msg: fmt.Sprintf("charge %s is %s: only a succeeded charge can be refunded", ch.Key, ch.State)}
	}
	req := providers.RefundRequest{RefundKey: in.Key, ChargeKey: ch.Key, Amount: in.Amount, Reason: in.Metadata[ledger.MetaReason],
		Metadata: in.Metadata, Attempt: 1}
	if id := in.Metadata[ledger.MetaChargeTxn]; id != "" {
		// The refund names the payment it gives back (a duplicate, an
		// overpayment's last part): it is sent for that one, as the
		// provider knows it, not for the charge's first.
		t, err := s.store.GetProviderTxn(ctx, in.Provider, id)
		if err != nil {
			return providers.RefundRequest{}, fmt.Errorf("refund %s: charge transaction %s: %w", in.Key, id, err)
		}
		if t.Type != ledger.TxnCharge || t.Status != ledger.TxnSucceeded {
			return providers.RefundRequest{}, &refundRefused{msg: fmt.Sprintf("transaction %s is a %s %s, not a successful charge", id, t.Status, t.Type)}
		}
		req.ChargeRef, req.ChargeTxnID = t.ProviderRef, t.ID
		return req, nil
	}
	if req.ChargeRef, req.ChargeTxnID, err = s.chargeIDs(ctx, ch); err != nil {
		return providers.RefundRequest{}, err
	}
	return req, nil
}

// refundable reports whether refund may be sent for charge ch: the charge
// succeeded, or it is an expected payment (whose state does not say whether
// it was paid) and the refund names the payment it gives back.
func refundable(ch, refund ledger.Intent) bool {
	return ch.State == ledger.StateSucceeded || (ch.IsExpected() && refund.Metadata[ledger.MetaChargeTxn] != "")
}

// chargeIDs returns how the provider knows the succeeded charge ch: the
// request-level reference its succeeded attempt recorded (or, for a charge
// settled by evidence, the latest reference any attempt recorded), and the
// money-level id of the provider transaction that carries that reference,
// when the books hold it (M-Pesa: the receipt number of the STK payment).
// A charge with no such transaction (paid by paybill against its reference,
// or confirmed by a status query whose callback never came) is known by the
// one successful charge of its amount that echoes its reference, if exactly
// one does.
func (s *Service) chargeIDs(ctx context.Context, ch ledger.Intent) (ref, txnID string, err error) {
	attempts, err := s.store.ListAttempts(ctx, ch.Key)
	if err != nil {
		return "", "", fmt.Errorf("charge %s: attempts: %w", ch.Key, err)
	}
	for i := len(attempts) - 1; i >= 0; i-- {
		a := attempts[i]
		if a.ProviderRef == "" {
			continue
		}
		if a.Outcome == ledger.OutcomeSucceeded {
			ref = a.ProviderRef
			break
		}
		if ref == "" {
			ref = a.ProviderRef
		}
	}
	// The charge's transaction occurred between its creation and its
	// success, give or take the clocks of two systems.
	const slack = 2 * time.Hour
	var byRef []string
	err = s.store.ListProviderTxns(ctx, ledger.TxnFilter{Provider: ch.Provider, From: ch.CreatedAt.Add(-slack), To: ch.UpdatedAt.Add(slack)},
		func(t ledger.ProviderTxn) error {
			if t.Type != ledger.TxnCharge || t.Status != ledger.TxnSucceeded {
				return nil
			}
			if ref != "" && (t.ProviderRef == ref || t.ID == ref) {
				txnID = t.ID
				return errFound
			}
			if ch.Reference != "" && strings.EqualFold(strings.TrimSpace(t.Reference), ch.Reference) &&
				t.Amount.Currency == ch.Amount.Currency && t.Amount.Value.Equal(ch.Amount.Value) {
				byRef = append(byRef, t.ID)
			}
			return nil
		})
	if err != nil && !errors.Is(err, errFound) {
		return "", "", fmt.Errorf("charge %s: provider transactions: %w", ch.Key, err)
	}
	if txnID == "" && len(byRef) == 1 {
		txnID = byRef[0]
	}
	return ref, txnID, nil
}

// errFound stops a listing once the row sought is found.
var errFound = errors.New("found")
