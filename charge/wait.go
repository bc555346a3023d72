package charge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// A refund whose provider needs something the books do not hold yet (an
// M-Pesa reversal names the charge's receipt, and a charge confirmed only by
// the STK status query, its callback lost, has none) is not sent, not
// failed and not retried to exhaustion: its job snoozes (River does not
// count a snooze as a try) and looks again every ReceiptPoll, recording the
// wait in the books (ledger.RefundWait) for people to see. It is sent as
// soon as a pull, a callback or a statement brings the receipt, and fails,
// nothing sent, after ReceiptWait.

// waitVerdict is what the look before a refund job's claim decided.
type waitVerdict int

const (
	// proceed: nothing is missing (or the refund is not one to look at):
	// claim and send as usual.
	proceed waitVerdict = iota
	// waiting: the job snoozes.
	waiting
	// givenUp: it waited ReceiptWait; claim it and fail it.
	givenUp
)

// awaitEvidence looks, before the claim, whether the pending refund key can
// be sent: when its provider says it cannot yet (providers.ErrAwaitingEvidence),
// the wait is recorded and the job is to snooze for the returned duration.
func (s *Service) awaitEvidence(ctx context.Context, key string) (waitVerdict, time.Duration, string, error) {
	in, err := s.store.GetIntent(ctx, key)
	if err != nil || in.State != ledger.StatePending || !in.IsRefund() {
		return proceed, 0, "", nil // the claim says what is wrong, or there is nothing to send
	}
	c, _ := s.chargerOf(in.IntentParams)
	checker, ok := c.(providers.RefundChecker)
	if !ok {
		return proceed, 0, "", nil
	}
	req, err := s.RefundRequest(ctx, in)
	if err != nil {
		return proceed, 0, "", nil // the claimed try fails it or retries
	}
	cerr := checker.CheckRefund(req)
	if !errors.Is(cerr, providers.ErrAwaitingEvidence) {
		if err := s.store.EndRefundWait(ctx, key); err != nil {
			return proceed, 0, "", err
		}
		return proceed, 0, "", nil
	}
	now := s.clock().UTC()
	since := now
	if w, err := s.store.GetRefundWait(ctx, key); err == nil {
		since = w.Since
	} else if !errors.Is(err, ledger.ErrNotFound) {
		return proceed, 0, "", err
	}
	reason := waitReason(cerr)
	if now.Sub(since) >= s.cfg.ReceiptWait {
		return givenUp, 0, fmt.Sprintf("not sent: %s after waiting %s", reason, s.cfg.ReceiptWait), nil
	}
	w, err := s.store.WaitRefund(ctx, ledger.RefundWait{IntentKey: key, Reason: reason, CheckedAt: now, NextAt: now.Add(s.cfg.ReceiptPoll)})
	if err != nil {
		return proceed, 0, "", err
	}
	if w.Checks == 1 {
		s.logger.Info("refund waits for evidence", "intent", key, "provider", in.Provider, "reason", reason)
	}
	s.metrics.Claims.WithLabelValues("waiting").Inc()
	return waiting, s.cfg.ReceiptPoll, reason, nil
}

// waitReason is what a refund waits for, from its provider's refusal.
func waitReason(err error) string {
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return fe.Field + ": " + fe.Err.Error()
	}
	var pe *providers.Error
	if errors.As(err, &pe) && pe.Message != "" {
		return pe.Message
	}
	return err.Error()
}

// snoozeWaiting is the job's answer while its refund waits.
func snoozeWaiting(d time.Duration) error { return river.JobSnooze(d) }

// giveUpWaiting fails a claimed refund that waited ReceiptWait for
// evidence that never came: nothing was sent. Its wait ends with it.
func (c *call) giveUpWaiting(ctx context.Context, first ledger.Attempt, reason string) error {
	a := first
	if a.ID == 0 {
		var err error
		if a, err = c.unsettledOrNew(ctx); err != nil {
			return err
		}
	}
	if err := c.finish(ctx, a, ledger.StateFailed, providers.ChargeResult{}, reason); err != nil {
		return err
	}
	return c.svc.store.EndRefundWait(ctx, c.in.Key)
}
