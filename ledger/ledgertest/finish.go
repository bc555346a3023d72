package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func exerciseClaimAndFinish(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	mustCreate(t, s, params(t, "k1", "10"))
	lease := time.Minute
	in, a, err := s.ClaimAndStart(ctx, ledger.ClaimParams{Key: "k1", Owner: "w1", Lease: lease, Now: T0})
	if err != nil || in.ClaimToken != 1 || in.State != ledger.StateProcessing || a.Number != 1 || a.ID == 0 ||
		a.Outcome != ledger.OutcomeStarted || !a.StartedAt.Equal(T0) {
		t.Fatalf("first claim = %+v, %+v, %v", in, a, err)
	}
	if _, _, err := s.ClaimAndStart(ctx, ledger.ClaimParams{Key: "k1", Owner: "w2", Lease: lease, Now: T0}); !errors.Is(err, ledger.ErrNotClaimable) {
		t.Fatalf("claim during lease: %v", err)
	}
	// A later claim (a takeover) records no attempt: the worker resumes.
	in2, a2, err := s.ClaimAndStart(ctx, ledger.ClaimParams{Key: "k1", Owner: "w2", Lease: lease, Now: T0.Add(lease)})
	if err != nil || in2.ClaimToken != 2 || a2.ID != 0 {
		t.Fatalf("takeover = %+v, %+v, %v", in2, a2, err)
	}
	if _, _, err := s.ClaimAndStart(ctx, ledger.ClaimParams{Key: "nope", Owner: "w", Lease: lease, Now: T0}); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}

	ev := &ledger.Event{ID: ledger.EventID(ledger.EventChargeSucceeded, "k1"), Type: ledger.EventChargeSucceeded, IntentKey: "k1",
		Payload: []byte(`{"id":"x"}`), CreatedAt: T0}
	finish := ledger.FinishParams{
		Attempt:    ledger.AttemptUpdate{ID: a.ID, ProviderRef: "ch_1", Outcome: ledger.OutcomeSucceeded, Now: T0.Add(time.Second)},
		Transition: ledger.TransitionParams{Key: "k1", From: []ledger.State{ledger.StateProcessing}, To: ledger.StateSucceeded, ClaimToken: 1, Now: T0.Add(time.Second)},
		Event:      ev,
	}
	// The stale claim loses: nothing is written.
	if _, _, err := s.FinishAttempt(ctx, finish); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("finish by a stale claim: %v", err)
	}
	if _, err := s.GetEvent(ctx, ev.ID); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("a lost finish stored its event: %v", err)
	}
	err = s.InTx(ctx, func(tx ledger.Tx) error {
		f := finish
		f.Transition.ClaimToken = 2
		got, created, err := tx.FinishAttempt(ctx, f)
		if err != nil || !created || got.State != ledger.StateSucceeded {
			t.Errorf("finish = %+v, %v, %v", got, created, err)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	atts, _ := s.ListAttempts(ctx, "k1")
	if len(atts) != 1 || atts[0].Outcome != ledger.OutcomeSucceeded || atts[0].ProviderRef != "ch_1" || !atts[0].FinishedAt.Equal(T0.Add(time.Second)) {
		t.Fatalf("attempts = %+v", atts)
	}
	if got, err := s.GetEvent(ctx, ev.ID); err != nil || string(got.Payload) != `{"id":"x"}` {
		t.Fatalf("event = %+v, %v", got, err)
	}
	// Without an event, outside a transaction.
	mustCreate(t, s, params(t, "k2", "10"))
	_, b, err := s.ClaimAndStart(ctx, ledger.ClaimParams{Key: "k2", Owner: "w1", Lease: lease, Now: T0})
	if err != nil {
		t.Fatal(err)
	}
	got, created, err := s.FinishAttempt(ctx, ledger.FinishParams{
		Attempt:    ledger.AttemptUpdate{ID: b.ID, Outcome: ledger.OutcomeFailed, Error: "declined", Now: T0},
		Transition: ledger.TransitionParams{Key: "k2", From: []ledger.State{ledger.StateProcessing}, To: ledger.StateFailed, ClaimToken: 1, Now: T0}})
	if err != nil || created || got.State != ledger.StateFailed {
		t.Fatalf("finish without event = %+v, %v, %v", got, created, err)
	}
}
