package charge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/queue"
)

// intentWorker runs the steps docs/design.md describes for one job kind:
// charge jobs charge their intent, refund jobs send their refund intent.
// Both go through the same steps, and every step that could be interrupted
// leaves a record the next delivery resumes from:
//   - the claim (with a lease) fences out any other worker;
//   - the attempt is recorded before the provider call;
//   - the outcome, the state change, the event and the job's completion
//     commit in one transaction.
type intentWorker[A intentArgs] struct {
	river.WorkerDefaults[A]
	svc *Service
}

// Timeout keeps one try inside the lease.
func (w *intentWorker[A]) Timeout(*river.Job[A]) time.Duration {
	return w.svc.cfg.Lease * 3 / 4
}

func (w *intentWorker[A]) Work(ctx context.Context, job *river.Job[A]) error {
	return w.svc.work(ctx, jobRef{id: job.ID, try: job.Attempt, args: job.Args,
		complete: func(ctx context.Context, tx ledger.Tx) error { return queue.CompleteTx(ctx, tx, job) }})
}

// jobRef is what the steps need of the River job they run in, whatever
// its kind.
type jobRef struct {
	id       int64
	try      int
	args     intentArgs
	complete func(ctx context.Context, tx ledger.Tx) error
}

// work runs one try of a charge or refund job: it waits for a refund's
// evidence, claims the intent, checks its kind and charger, then sends its
// first attempt, resumes an unsettled one, or starts afresh.
func (s *Service) work(ctx context.Context, job jobRef) error {
	key, kind := job.args.intentKey(), job.args.intentKind()
	var giveUp string
	if kind == ledger.IntentRefund {
		var err error
		if giveUp, err = s.awaitRefundEvidence(ctx, key); err != nil {
			return err
		}
	}
	in, first, claimed, err := s.claim(ctx, job, key, kind)
	if !claimed {
		return err
	}
	c := &call{svc: s, job: job, in: in}
	if got := in.Kind; got != kind && !(got == "" && kind == ledger.IntentCharge) {
		// A job of the other kind (never enqueued so): nothing is sent,
		// and the intent is left as its own job expects to find it.
		cause := fmt.Errorf("%s %s: the intent is a %s", kind, key, got)
		if in.IsRefund() {
			cause = fmt.Errorf("%s %s: the intent is a refund of %s, not a charge", kind, key, in.RefundOf)
		}
		return river.JobCancel(c.giveBack(ctx, first, cause))
	}
	charger, ok := s.chargerOf(in.IntentParams)
	if !ok {
		return river.JobCancel(c.giveBack(ctx, first, fmt.Errorf("%s %s: no charger is configured for provider %q", kind, key, in.Provider)))
	}
	c.charger = charger
	if in.IsRefund() {
		if done, err := c.prepareRefund(ctx, first, giveUp); done {
			return err
		}
	} else {
		c.act = s.chargeAction(in, charger)
	}
	if first.ID != 0 {
		return c.send(ctx, first)
	}
	attempts, err := s.store.ListAttempts(ctx, key)
	if err != nil {
		return err
	}
	if last, ok := lastUnsettled(attempts); ok {
		return c.resume(ctx, last, firstSent(attempts))
	}
	return c.fresh(ctx)
}

// awaitRefundEvidence holds back a refund its provider cannot send yet: it
// returns the snooze of a refund still waiting, unclaimed, and the reason
// to give up when the wait ran out ("" otherwise).
func (s *Service) awaitRefundEvidence(ctx context.Context, key string) (giveUp string, err error) {
	v, d, reason, err := s.awaitEvidence(ctx, key)
	switch {
	case err != nil:
		return "", err
	case v == waiting:
		return "", snoozeWaiting(d)
	case v == givenUp:
		return reason, nil
	}
	return "", nil
}

// claim claims the intent for this try. The claim and, on an intent's
// first claim, its first attempt commit together: one round trip to the
// disk before the provider call. When it reports claimed false, err is
// what the job returns: a cancel for an intent not in the books, the job's
// completion for a final one, a snooze until the lease of another delivery
// runs out.
func (s *Service) claim(ctx context.Context, job jobRef, key string, kind ledger.IntentKind) (in ledger.Intent, first ledger.Attempt, claimed bool, err error) {
	now := s.clock()
	owner := fmt.Sprintf("%s/job-%d/try-%d", s.cfg.Owner, job.id, job.try)
	in, first, err = s.store.ClaimAndStart(ctx, ledger.ClaimParams{Key: key, Owner: owner, Lease: s.cfg.Lease, Now: now})
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return in, first, false, river.JobCancel(fmt.Errorf("%s %s: %w", kind, key, err))
	case errors.Is(err, ledger.ErrNotClaimable):
		if in.State.Final() || in.State == ledger.StateUnknown {
			s.metrics.Claims.WithLabelValues("final").Inc()
			s.skip(job, in, "intent already "+string(in.State))
			return in, first, false, s.completeOnly(ctx, job)
		}
		// Another delivery holds the lease (a duplicate running now, or a
		// try that died and whose lease has not run out): come back when
		// it expires, and resume from what that try recorded.
		s.metrics.Claims.WithLabelValues("held").Inc()
		s.skip(job, in, "intent held by "+in.ClaimOwner)
		return in, first, false, river.JobSnooze(max(time.Second, in.LeaseExpiresAt.Sub(now)+time.Second))
	case err != nil:
		return in, first, false, err
	}
	s.metrics.Claims.WithLabelValues("won").Inc()
	return in, first, true, nil
}

// prepareRefund sets the refund's action for a claimed refund intent. It
// reports done, with what the job returns, when nothing is to be sent: a
// refund of a charge that never succeeded fails, one that cannot be sent
// is cancelled, a try that could not decide is given back, and a refund
// whose evidence never came is given up.
func (c *call) prepareRefund(ctx context.Context, first ledger.Attempt, giveUp string) (done bool, err error) {
	act, err := c.svc.refundAction(ctx, c.in, c.charger)
	var refused *refundRefused
	switch {
	case errors.As(err, &refused):
		// Nothing was ever sent for a refund of a charge that never
		// succeeded (a succeeded charge stays succeeded): it fails.
		a := first
		if a.ID == 0 {
			if a, err = c.unsettledOrNew(ctx); err != nil {
				return true, err
			}
		}
		return true, c.finish(ctx, a, ledger.StateFailed, providers.ChargeResult{}, refused.Error())
	case errors.Is(err, errCannotRefund):
		return true, river.JobCancel(c.giveBack(ctx, first, err))
	case err != nil:
		// Nothing was sent: the try is given back and River retries.
		return true, c.giveBack(ctx, first, err)
	}
	c.act = act
	if giveUp != "" {
		return true, c.giveUpWaiting(ctx, first, giveUp)
	}
	return false, nil
}

// giveBack undoes a claim that will send nothing: the claim's first attempt
// (if it recorded one) failed without reaching the provider; otherwise the
// lease is given back with the attempts as they were. It returns cause.
func (c *call) giveBack(ctx context.Context, first ledger.Attempt, cause error) error {
	var err error
	if first.ID != 0 {
		err = c.release(ctx, first, ledger.OutcomeFailed, cause)
	} else {
		err = c.retryLater(ctx, ledger.Attempt{}, cause)
	}
	if err != nil {
		// The claim stays until its lease runs out; the job says why.
		return fmt.Errorf("%w (giving the claim back failed too: %w)", cause, err)
	}
	return cause
}

// unsettledOrNew returns the attempt to close: the latest unsettled one, or
// a new one.
func (c *call) unsettledOrNew(ctx context.Context) (ledger.Attempt, error) {
	attempts, err := c.svc.store.ListAttempts(ctx, c.in.Key)
	if err != nil {
		return ledger.Attempt{}, err
	}
	if last, ok := lastUnsettled(attempts); ok {
		return last, nil
	}
	return c.svc.store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: c.in.Key, ClaimToken: c.in.ClaimToken, Now: c.svc.clock()})
}

// firstSent is when the intent key first went to the provider: its age is
// what the provider's key retention counts.
func firstSent(attempts []ledger.Attempt) time.Time {
	for _, a := range attempts {
		if a.Outcome != ledger.OutcomeImported {
			return a.StartedAt
		}
	}
	return time.Time{}
}

// lastUnsettled returns the latest attempt whose outcome was never learned.
func lastUnsettled(attempts []ledger.Attempt) (ledger.Attempt, bool) {
	for i := len(attempts) - 1; i >= 0; i-- {
		switch attempts[i].Outcome {
		case ledger.OutcomeImported:
			continue
		case ledger.OutcomeStarted, ledger.OutcomePending, ledger.OutcomeUnknown:
			return attempts[i], true
		}
		return ledger.Attempt{}, false
	}
	return ledger.Attempt{}, false
}

// afterProviderCall, when set, runs after a charge call to the provider
// returns and before its outcome is recorded. Only the package's tests set it
// (export_test.go, which is compiled into test binaries only), to crash a
// worker inside that window; nothing in the program assigns it.
var afterProviderCall func(intentKey string)

// beforeProviderCall, when set, runs after an attempt is recorded and before
// the provider is called, for the same tests: a worker crashed there has
// claimed and recorded a try that never reached the provider.
var beforeProviderCall func(intentKey string)

// call is one claimed try at an intent.
type call struct {
	svc     *Service
	job     jobRef
	in      ledger.Intent
	charger providers.Charger
	act     action
}

func (c *call) honoursKeys() bool {
	kh, ok := c.charger.(providers.KeyHonourer)
	return ok && kh.HonoursIdempotencyKeys()
}

// fresh records a new attempt, then calls the provider.
func (c *call) fresh(ctx context.Context) error {
	a, err := c.svc.store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: c.in.Key, ClaimToken: c.in.ClaimToken, Now: c.svc.clock()})
	if errors.Is(err, ledger.ErrConflict) {
		return river.JobSnooze(time.Second) // the lease was lost: someone else has it now
	}
	if err != nil {
		return err
	}
	return c.send(ctx, a)
}

// send makes the provider call of a recorded attempt (a charge or a refund)
// and records what it answered.
func (c *call) send(ctx context.Context, a ledger.Attempt) error {
	return c.sendAgain(ctx, a, false)
}

func (c *call) sendAgain(ctx context.Context, a ledger.Attempt, resumed bool) error {
	if beforeProviderCall != nil {
		beforeProviderCall(c.in.Key)
	}
	res, err := c.act.send(ctx, a.Number)
	if afterProviderCall != nil {
		afterProviderCall(c.in.Key)
	}
	c.svc.metrics.ProviderCalls.WithLabelValues(c.in.Provider, c.act.name, resultLabel(res, err)).Inc()
	return c.record(ctx, a, res, err, resumed)
}

// resume continues after a try whose outcome was never recorded. It never
// re-sends a charge or a refund to a provider that does not honour keys.
func (c *call) resume(ctx context.Context, last ledger.Attempt, firstSent time.Time) error {
	s := c.svc
	now := s.clock()
	if last.ProviderRef != "" && c.act.query != nil {
		// The provider knows the attempt by its reference: ask.
		res, err := c.act.query(ctx, last.ProviderRef)
		s.metrics.ProviderCalls.WithLabelValues(c.in.Provider, c.act.callName("status"), resultLabel(res, err)).Inc()
		switch {
		case err != nil && providers.KindOf(err) == providers.Permanent && !c.honoursKeys():
			return c.finish(ctx, last, ledger.StateUnknown, providers.ChargeResult{}, "status query refused: "+err.Error())
		case err != nil && !c.honoursKeys():
			return c.retryLater(ctx, last, err)
		case err == nil && res.Status != providers.StatusUnknown:
			if res.ProviderRef == "" {
				res.ProviderRef = last.ProviderRef
			}
			return c.record(ctx, last, res, nil, true)
		case !c.honoursKeys():
			return c.finish(ctx, last, ledger.StateUnknown, res, "the provider does not know the attempt")
		}
		// A provider that honours keys can be asked again with the key.
	}
	if !c.honoursKeys() {
		// The previous try may or may not have reached the provider, and
		// nothing can tell: sending again could move the money twice.
		return c.finish(ctx, last, ledger.StateUnknown, providers.ChargeResult{},
			"the previous attempt's outcome cannot be learned; evidence will settle it")
	}
	if kr, ok := c.charger.(providers.KeyRetention); ok && now.Sub(firstSent) >= kr.IdempotencyKeyRetention() {
		// The provider may have forgotten the key: look the payment up
		// before sending the key again.
		if c.act.find == nil {
			return c.finish(ctx, last, ledger.StateUnknown, providers.ChargeResult{},
				"the idempotency key has expired and the provider cannot be searched")
		}
		res, found, err := c.act.find(ctx)
		s.metrics.ProviderCalls.WithLabelValues(c.in.Provider, c.act.callName("find"), resultLabel(res, err)).Inc()
		if err != nil {
			return c.retryLater(ctx, last, err)
		}
		if found {
			return c.record(ctx, last, res, nil, true)
		}
	}
	s.logger.Info("resuming with the same idempotency key", "intent", c.in.Key, "kind", c.act.name, "attempt", last.Number)
	return c.sendAgain(ctx, last, true)
}

// record turns a provider answer into the intent's next state. resumed says
// the attempt had been sent before: a retryable refusal now does not mean
// the earlier send did nothing, so the attempt stays unsettled.
func (c *call) record(ctx context.Context, a ledger.Attempt, res providers.ChargeResult, err error, resumed bool) error {
	if err != nil {
		switch providers.KindOf(err) {
		case providers.Permanent:
			return c.finish(ctx, a, ledger.StateFailed, res, err.Error())
		case providers.Retryable:
			if resumed {
				return c.retryLater(ctx, a, err)
			}
			return c.release(ctx, a, ledger.OutcomeFailed, err)
		default:
			if c.honoursKeys() {
				// Sending the same key again is safe: it replays.
				return c.release(ctx, a, ledger.OutcomeUnknown, err)
			}
			return c.finish(ctx, a, ledger.StateUnknown, res, "ambiguous failure: "+err.Error())
		}
	}
	switch res.Status {
	case providers.StatusSucceeded:
		return c.finish(ctx, a, ledger.StateSucceeded, res, "")
	case providers.StatusFailed:
		return c.finish(ctx, a, ledger.StateFailed, res, res.Reason)
	case providers.StatusPending:
		return c.wait(ctx, a, res)
	default:
		return c.finish(ctx, a, ledger.StateUnknown, res, "the provider could not say")
	}
}

// recordCtx is for writing down what a provider call did: once the call is
// made, its outcome must be recorded even if the try's deadline has passed or
// shutdown cancelled it.
func recordCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

// finish records the outcome, moves the intent to state, writes its event and
// completes the job, all in one transaction.
func (c *call) finish(ctx context.Context, a ledger.Attempt, state ledger.State, res providers.ChargeResult, reason string) error {
	ctx, cancel := recordCtx(ctx)
	defer cancel()
	s := c.svc
	now := s.clock()
	ev, err := s.event(c.in, state, now)
	if err != nil {
		return err
	}
	err = s.store.InTx(ctx, func(tx ledger.Tx) error {
		_, created, err := tx.FinishAttempt(ctx, ledger.FinishParams{
			Attempt: ledger.AttemptUpdate{ID: a.ID, ProviderRef: res.ProviderRef, Outcome: ledger.Outcome(state), Error: reason, Now: now},
			Transition: ledger.TransitionParams{Key: c.in.Key, From: []ledger.State{ledger.StateProcessing}, To: state,
				ClaimToken: c.in.ClaimToken, Now: now},
			Event: ev})
		if err != nil {
			return err
		}
		if created {
			if err := s.deliver(ctx, tx, ev.ID); err != nil {
				return err
			}
		}
		return c.job.complete(ctx, tx)
	})
	if errors.Is(err, ledger.ErrConflict) {
		// The claim was taken over or a callback settled the intent first:
		// whoever holds it now decides. Try again after the lease.
		return river.JobSnooze(s.cfg.Lease)
	}
	if err != nil {
		return err
	}
	s.countOutcome(c.in, state)
	s.logger.Info(c.act.name+" finished", "intent", c.in.Key, "provider", c.in.Provider, "state", state,
		"attempt", a.Number, "provider_ref", ledger.MaskMSISDNs(res.ProviderRef), "reason", reason)
	return nil
}

// release records a try that did not charge (or that can be repeated
// safely), gives the lease back and lets River retry with backoff.
func (c *call) release(ctx context.Context, a ledger.Attempt, outcome ledger.Outcome, cause error) error {
	ctx, cancel := recordCtx(ctx)
	defer cancel()
	s := c.svc
	now := s.clock()
	err := s.store.InTx(ctx, func(tx ledger.Tx) error {
		if _, err := tx.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a.ID, Outcome: outcome, Error: cause.Error(), Now: now}); err != nil {
			return err
		}
		to := ledger.StateProcessing // keeps the unsettled attempt to resume from
		if outcome == ledger.OutcomeFailed {
			to = ledger.StatePending // nothing happened at the provider
		}
		_, err := tx.TransitionIntent(ctx, ledger.TransitionParams{Key: c.in.Key, From: []ledger.State{ledger.StateProcessing},
			To: to, ClaimToken: c.in.ClaimToken, Now: now})
		return err
	})
	if err != nil && !errors.Is(err, ledger.ErrConflict) {
		return err
	}
	return fmt.Errorf("%s %s attempt %d: %w", kindOf(c.in), c.in.Key, a.Number, cause)
}

// retryLater gives the lease back without touching the attempt: its outcome
// is still to be learned.
func (c *call) retryLater(ctx context.Context, a ledger.Attempt, cause error) error {
	ctx, cancel := recordCtx(ctx)
	defer cancel()
	s := c.svc
	_, err := s.store.TransitionIntent(ctx, ledger.TransitionParams{Key: c.in.Key, From: []ledger.State{ledger.StateProcessing},
		To: ledger.StateProcessing, ClaimToken: c.in.ClaimToken, Now: s.clock()})
	if err != nil && !errors.Is(err, ledger.ErrConflict) {
		return err
	}
	return fmt.Errorf("%s %s attempt %d: %w", kindOf(c.in), c.in.Key, a.Number, cause)
}

// wait records an accepted, not yet final charge and asks again later; a
// callback may settle it first. After PendingGiveUp the intent goes to
// unknown for the reconciler.
func (c *call) wait(ctx context.Context, a ledger.Attempt, res providers.ChargeResult) error {
	s := c.svc
	now := s.clock()
	if now.Sub(a.StartedAt) >= s.cfg.PendingGiveUp {
		return c.finish(ctx, a, ledger.StateUnknown, res, fmt.Sprintf("still pending after %s", s.cfg.PendingGiveUp))
	}
	ctx, cancel := recordCtx(ctx)
	defer cancel()
	err := s.store.InTx(ctx, func(tx ledger.Tx) error {
		if _, err := tx.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a.ID, ProviderRef: res.ProviderRef, Outcome: ledger.OutcomePending}); err != nil {
			return err
		}
		_, err := tx.TransitionIntent(ctx, ledger.TransitionParams{Key: c.in.Key, From: []ledger.State{ledger.StateProcessing},
			To: ledger.StateProcessing, ClaimToken: c.in.ClaimToken, Now: now})
		return err
	})
	if err != nil && !errors.Is(err, ledger.ErrConflict) {
		return err
	}
	return river.JobSnooze(s.cfg.PendingPoll)
}

// completeOnly completes a job that has nothing left to do.
func (s *Service) completeOnly(ctx context.Context, job jobRef) error {
	return s.store.InTx(ctx, func(tx ledger.Tx) error { return job.complete(ctx, tx) })
}

// skip logs and counts a delivery that changes nothing.
func (s *Service) skip(job jobRef, in ledger.Intent, why string) {
	s.metrics.SkippedDuplicates.WithLabelValues(string(job.args.intentKind()) + "_job").Inc()
	s.logger.Info("skipped duplicate delivery", "intent", in.Key, "job", job.id, "try", job.try, "reason", why)
}

func resultLabel(res providers.ChargeResult, err error) string {
	if err != nil {
		return providers.KindOf(err).String()
	}
	return string(res.Status)
}
