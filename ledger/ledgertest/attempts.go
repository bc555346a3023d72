package ledgertest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func exerciseAttempts(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	mustCreate(t, s, params(t, "k1", "10"))
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k1", Owner: "w1", Lease: time.Minute, Now: T0})
	if err != nil {
		t.Fatal(err)
	}
	a1, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "k1", ClaimToken: in.ClaimToken, Now: T0})
	if err != nil || a1.Number != 1 || a1.Outcome != ledger.OutcomeStarted {
		t.Fatalf("start 1 = %+v, %v", a1, err)
	}
	a1, err = s.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a1.ID, ProviderRef: "ws_CO_1", Outcome: ledger.OutcomeUnknown, Error: "timeout", Now: T0.Add(time.Second)})
	if err != nil || a1.ProviderRef != "ws_CO_1" || a1.Outcome != ledger.OutcomeUnknown || !a1.FinishedAt.Equal(T0.Add(time.Second)) {
		t.Fatalf("update = %+v, %v", a1, err)
	}
	// A worker whose claim was taken over cannot record attempts.
	in2, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k1", Owner: "w2", Lease: time.Minute, Now: T0.Add(2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "k1", ClaimToken: in.ClaimToken, Now: T0}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("fenced start: %v", err)
	}
	a2, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "k1", ClaimToken: in2.ClaimToken, ProviderRef: "ws_CO_2", Now: T0})
	if err != nil || a2.Number != 2 {
		t.Fatalf("start 2 = %+v, %v", a2, err)
	}
	list, err := s.ListAttempts(ctx, "k1")
	if err != nil || len(list) != 2 || list[0].ID != a1.ID || list[1].ID != a2.ID {
		t.Fatalf("list = %+v, %v", list, err)
	}
	found, err := s.FindAttempt(ctx, "mpesa", "ws_CO_2")
	if err != nil || found.ID != a2.ID {
		t.Fatalf("find = %+v, %v", found, err)
	}
	if _, err := s.FindAttempt(ctx, "stripe", "ws_CO_2"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("find under other provider: %v", err)
	}
	var refs []string
	err = s.ListIntents(ctx, ledger.IntentFilter{Provider: "mpesa", From: T0.Add(-time.Hour), To: T0.Add(time.Hour)}, func(in ledger.Intent) error {
		refs = in.ProviderRefs
		return nil
	})
	if err != nil || !slices.Equal(refs, []string{"ws_CO_1", "ws_CO_2"}) {
		t.Fatalf("provider refs = %v, %v", refs, err)
	}
	if _, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "missing", Now: T0}); err == nil {
		t.Fatal("attempt for a missing intent accepted")
	}
	exerciseAttemptStart(t, s)
}

// exerciseAttemptStart checks that an attempt never starts before its
// intent was created, whatever clock the caller has, and so that a scan of
// the intent's window, which reads attempts started since the window
// opened, finds it.
func exerciseAttemptStart(t *testing.T, s ledger.Store) {
	ctx := context.Background()
	created := T0.Add(24 * time.Hour)
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: params(t, "k-late", "10"), CreatedAt: created}); err != nil {
		t.Fatal(err)
	}
	early := created.Add(-3 * time.Hour)
	a, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "k-late", ProviderRef: "ws_CO_early", Now: early})
	if err != nil || !a.StartedAt.Equal(created) {
		t.Fatalf("attempt started at %s for an intent created at %s (%v): want the creation time", a.StartedAt, created, err)
	}
	mustCreate(t, s, params(t, "k-claimed-early", "10"))
	_, a, err = s.ClaimAndStart(ctx, ledger.ClaimParams{Key: "k-claimed-early", Owner: "w", Lease: time.Minute, Now: T0.Add(-time.Hour)})
	if err != nil || !a.StartedAt.Equal(T0) {
		t.Fatalf("claimed attempt started at %s for an intent created at %s (%v): want the creation time", a.StartedAt, T0, err)
	}
	var refs []string
	err = s.ScanProviderRefs(ctx, ledger.IntentFilter{Provider: "mpesa", From: created, To: created.Add(time.Hour)}, func(key, ref []byte) error {
		refs = append(refs, string(key)+" "+string(ref))
		return nil
	})
	if err != nil || !slices.Equal(refs, []string{"k-late ws_CO_early"}) {
		t.Fatalf("window's refs = %v, %v; want the attempt started before the window", refs, err)
	}
}
