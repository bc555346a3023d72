package charge

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

var _ providers.OutcomeApplier = (*Service)(nil)

// ApplyOutcome applies a provider's verdict on one of our attempts (an STK
// callback, or a reversal result for a refund) to its intent inside the caller's transaction: success or
// failure settles a pending, processing or unknown intent; a verdict that
// contradicts a final state is kept as evidence and changes nothing (the
// reconciler reports it). A verdict for an attempt we never made is evidence
// only.
func (s *Service) ApplyOutcome(ctx context.Context, tx ledger.Tx, provider string, o providers.AttemptOutcome) error {
	a, err := tx.FindAttempt(ctx, provider, o.ProviderRef)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := s.clock()
	var (
		outcome ledger.Outcome
		to      ledger.State
	)
	switch o.Status {
	case providers.StatusSucceeded:
		outcome, to = ledger.OutcomeSucceeded, ledger.StateSucceeded
	case providers.StatusFailed:
		outcome, to = ledger.OutcomeFailed, ledger.StateFailed
	case providers.StatusPending:
		if a.Outcome != ledger.OutcomeStarted {
			return nil // a pending verdict never replaces a later one
		}
		_, err := tx.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a.ID, Outcome: ledger.OutcomePending})
		return err
	default:
		return nil
	}
	in, err := tx.GetIntent(ctx, a.IntentKey)
	if err != nil {
		return err
	}
	if in.State.Final() {
		if string(in.State) != string(outcome) {
			s.logger.Warn("provider verdict contradicts a final intent; kept as evidence", "intent", in.Key,
				"state", in.State, "verdict", o.Status, "provider_ref", ledger.MaskMSISDNs(o.ProviderRef))
		} else {
			s.metrics.SkippedDuplicates.WithLabelValues("verdict").Inc()
		}
		return nil
	}
	if outcome == ledger.OutcomeSucceeded && o.Amount.Currency != "" &&
		(o.Amount.Currency != in.Amount.Currency || !o.Amount.Value.Equal(in.Amount.Value)) {
		// Money moved, but not the amount asked for (a reversal of the whole
		// payment for a partial refund): not this intent's success. The
		// transaction is kept as evidence and the run reports the mismatch.
		s.logger.Warn("provider verdict is for another amount; kept as evidence", "intent", in.Key,
			"amount", in.Amount.String(), "verdict_amount", o.Amount.String(), "provider_ref", ledger.MaskMSISDNs(o.ProviderRef))
		return nil
	}
	reason := o.Reason
	if o.Code != "" && outcome == ledger.OutcomeFailed {
		reason = o.Code + ": " + o.Reason
	}
	if _, err := tx.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a.ID, Outcome: outcome, Error: reason, Now: now}); err != nil {
		return err
	}
	in, err = tx.TransitionIntent(ctx, ledger.TransitionParams{Key: in.Key, To: to, Now: now,
		From: []ledger.State{ledger.StatePending, ledger.StateProcessing, ledger.StateUnknown}})
	if err != nil {
		return err
	}
	s.countOutcome(in, to)
	return s.emit(ctx, tx, in, now)
}

// Settle moves an unknown intent to succeeded on the evidence of txn (a
// provider transaction showing the money was taken, or for a refund given
// back), inside the caller's transaction, with its event (charge.succeeded
// or refund.succeeded). The reconciler calls it.
func (s *Service) Settle(ctx context.Context, tx ledger.Tx, in ledger.Intent, txn ledger.ProviderTxn, now time.Time) error {
	in, err := tx.TransitionIntent(ctx, ledger.TransitionParams{Key: in.Key, From: []ledger.State{ledger.StateUnknown},
		To: ledger.StateSucceeded, Now: now})
	if errors.Is(err, ledger.ErrConflict) {
		return nil // settled meanwhile
	}
	if err != nil {
		return err
	}
	s.countOutcome(in, ledger.StateSucceeded)
	s.logger.Info("unknown intent settled by evidence", "intent", in.Key, "provider_txn", txn.ID)
	return s.emit(ctx, tx, in, now)
}

// eventPayload is the body of an outgoing event.
type eventPayload struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Data      eventData `json:"data"`
}

type eventData struct {
	IntentKey string `json:"intent_key"`
	// RefundOf is, in refund.* events, the key of the refunded charge.
	RefundOf  string `json:"refund_of,omitempty"`
	Provider  string `json:"provider"`
	Amount    string `json:"amount"`
	Currency  string `json:"currency"`
	Reference string `json:"reference"`
	State     string `json:"state"`
}

// emit writes the event announcing in's new state and enqueues its delivery
// to every endpoint, in tx.
func (s *Service) emit(ctx context.Context, tx ledger.Tx, in ledger.Intent, now time.Time) error {
	ev, err := s.event(in, in.State, now)
	if err != nil || ev == nil {
		return err
	}
	_, created, err := tx.InsertEvent(ctx, *ev)
	if err != nil || !created {
		return err
	}
	return s.deliver(ctx, tx, ev.ID)
}

// event is the announcement of in reaching state; nil for states that are
// not announced.
func (s *Service) event(in ledger.Intent, state ledger.State, now time.Time) (*ledger.Event, error) {
	var typ string
	switch refund := in.IsRefund(); state {
	case ledger.StateSucceeded:
		typ = pick(refund, ledger.EventRefundSucceeded, ledger.EventChargeSucceeded)
	case ledger.StateFailed:
		typ = pick(refund, ledger.EventRefundFailed, ledger.EventChargeFailed)
	case ledger.StateUnknown:
		typ = pick(refund, ledger.EventRefundUnknown, ledger.EventChargeUnknown)
	default:
		return nil, nil
	}
	id := ledger.EventID(typ, in.Key)
	body, err := json.Marshal(eventPayload{ID: id, Type: typ, CreatedAt: now.UTC().Truncate(time.Millisecond), Data: eventData{
		IntentKey: in.Key, RefundOf: in.RefundOf, Provider: in.Provider, Amount: in.Amount.Text(), Currency: in.Amount.Currency,
		Reference: in.Reference, State: string(state)}})
	if err != nil {
		return nil, err
	}
	return &ledger.Event{ID: id, Type: typ, IntentKey: in.Key, Payload: body, CreatedAt: now}, nil
}

func pick(refund bool, ifRefund, ifCharge string) string {
	if refund {
		return ifRefund
	}
	return ifCharge
}

// deliver enqueues the delivery of event id to every endpoint, in tx.
func (s *Service) deliver(ctx context.Context, tx ledger.Tx, id string) error {
	if s.queue == nil {
		return nil
	}
	for _, ep := range s.cfg.Endpoints {
		if _, err := s.queue.InsertTx(ctx, tx, DeliverEventArgs{EventID: id, Endpoint: ep}, deliverOpts()); err != nil {
			return err
		}
	}
	return nil
}
