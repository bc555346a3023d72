package charge

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// People retry or cancel a stuck intent from its finding (the findings
// service's retry and cancel). Both run in the caller's transaction, with
// the remedy and the finding's history, and go through the same claim as
// every job, so a worker that holds the intent is never overtaken.

// errNotNow wraps the refusals of a retry or a cancel: the intent's state,
// or its provider, does not allow it. It reads as a *ledger.FieldError on
// "state".
func errNotNow(key, format string, args ...any) error {
	return ledger.Wrap("retry or cancel", key, &ledger.FieldError{Field: "state", Err: fmt.Errorf(format, args...)})
}

// RetryTx queues intent key's job again (a charge job, or a refund job for
// a refund intent), in tx, when nothing could charge twice:
//
//   - pending (never sent, or every try refused before the provider acted):
//     queued as it is;
//   - processing, once its lease has run out (the worker died): queued, and
//     the claim resumes from the recorded attempt (it asks the provider, or
//     sends the same idempotency key again);
//   - unknown, only when its provider honours idempotency keys, or can be
//     asked about the attempt by the reference it recorded: the intent goes
//     back to processing with its lease expired and the job resumes the
//     same way. An M-Pesa prompt whose request id was never recorded cannot
//     be asked about, and is never sent again: evidence settles it.
//
// Anything else is refused with a *ledger.FieldError on "state". tag
// numbers the retry (the remedy's id), so that a retry is a new job even
// while River keeps the finished one.
func (s *Service) RetryTx(ctx context.Context, tx ledger.Tx, key string, tag int64) (ledger.Intent, error) {
	if s.queue == nil {
		return ledger.Intent{}, errors.New("charge: no queue (call UseQueue)")
	}
	in, err := tx.GetIntent(ctx, key)
	if err != nil {
		return in, err
	}
	if in.IsExpected() {
		return in, errNotNow(key, "an expected payment is paid by the customer, never charged")
	}
	charger, ok := s.chargerOf(in.IntentParams)
	if !ok {
		return in, errNotNow(key, "no charger is configured for provider %q", in.Provider)
	}
	if in.IsRefund() && !s.CanRefund(in.Provider) {
		return in, errNotNow(key, "provider %q cannot send refunds here", in.Provider)
	}
	now := s.clock()
	switch in.State {
	case ledger.StatePending:
	case ledger.StateProcessing:
		if now.Before(in.LeaseExpiresAt) {
			return in, errNotNow(key, "a worker holds it until %s", in.LeaseExpiresAt.UTC().Format("2006-01-02 15:04:05 MST"))
		}
	case ledger.StateUnknown:
		if why := s.cannotResume(ctx, tx, in, charger); why != "" {
			return in, errNotNow(key, "its outcome is unknown and %s: a statement or a pull settles it", why)
		}
		if in, err = tx.TransitionIntent(ctx, ledger.TransitionParams{Key: key, From: []ledger.State{ledger.StateUnknown},
			To: ledger.StateProcessing, Now: now}); err != nil {
			return in, err
		}
	default:
		return in, errNotNow(key, "it is %s already", in.State)
	}
	var args river.JobArgs = ChargeArgs{IntentKey: key, Retry: tag}
	if in.IsRefund() {
		args = RefundArgs{IntentKey: key, Retry: tag}
	}
	if _, err := s.queue.InsertTx(ctx, tx, args, s.chargeOpts()); err != nil {
		return in, fmt.Errorf("charge: enqueue retry of %s: %w", key, err)
	}
	return in, nil
}

// cannotResume says why an unknown intent cannot be tried again safely, or
// "" when it can: its provider honours idempotency keys, or it can be
// asked about the last attempt by the reference that attempt recorded.
func (s *Service) cannotResume(ctx context.Context, tx ledger.Tx, in ledger.Intent, charger providers.Charger) string {
	if kh, ok := charger.(providers.KeyHonourer); ok && kh.HonoursIdempotencyKeys() {
		return ""
	}
	attempts, err := tx.ListAttempts(ctx, in.Key)
	if err != nil {
		return "its attempts cannot be read"
	}
	last, ok := lastUnsettled(attempts)
	if !ok || last.ProviderRef == "" {
		return fmt.Sprintf("%s takes no idempotency key and no request id was recorded to ask about", in.Provider)
	}
	_, asks := charger.(providers.StatusQuerier)
	if in.IsRefund() {
		_, asks = charger.(providers.RefundStatusQuerier)
	}
	if !asks {
		return fmt.Sprintf("%s takes no idempotency key and cannot be asked about an attempt", in.Provider)
	}
	return ""
}

// CancelTx fails the pending intent key in tx, with its outgoing event
// (charge.failed, refund.failed), when nothing of it ever reached its
// provider: every attempt was refused before the provider acted, or there
// was none. Its queued job, if any, then finds it final and completes. A
// processing or unknown intent may have moved money and is refused, as is
// a final one (a *ledger.FieldError on "state").
func (s *Service) CancelTx(ctx context.Context, tx ledger.Tx, key string) (ledger.Intent, error) {
	in, err := tx.GetIntent(ctx, key)
	if err != nil {
		return in, err
	}
	if in.State != ledger.StatePending {
		return in, errNotNow(key, "it is %s: only a pending intent, never sent, is cancelled (money may have moved otherwise)", in.State)
	}
	attempts, err := tx.ListAttempts(ctx, key)
	if err != nil {
		return in, err
	}
	for _, a := range attempts {
		if a.Outcome != ledger.OutcomeFailed && a.Outcome != ledger.OutcomeImported {
			return in, errNotNow(key, "attempt %d is %s: it may have reached the provider", a.Number, a.Outcome)
		}
	}
	now := s.clock()
	out, err := tx.TransitionIntent(ctx, ledger.TransitionParams{Key: key, From: []ledger.State{ledger.StatePending},
		To: ledger.StateFailed, Now: now})
	if err != nil {
		return out, err
	}
	ev, err := s.event(out, ledger.StateFailed, now)
	if err != nil {
		return out, err
	}
	if _, created, err := tx.InsertEvent(ctx, *ev); err != nil {
		return out, err
	} else if created {
		if err := s.deliver(ctx, tx, ev.ID); err != nil {
			return out, err
		}
	}
	s.countOutcome(out, ledger.StateFailed)
	return out, nil
}
