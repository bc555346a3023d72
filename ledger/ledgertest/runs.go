package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func exerciseRuns(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	from, to := T0.Truncate(24*time.Hour), T0.Truncate(24*time.Hour).Add(24*time.Hour)
	claim := ledger.RunClaim{Provider: "mpesa", From: from, To: to, Owner: "a", Lease: 10 * time.Minute, Now: T0}
	r, err := s.ClaimRun(ctx, claim)
	if err != nil || r.State != ledger.RunRunning || r.Attempt != 1 || r.Key != ledger.RunKey("mpesa", from, to) {
		t.Fatalf("claim = %+v, %v", r, err)
	}
	b := claim
	b.Owner, b.Now = "b", T0.Add(time.Minute)
	if _, err := s.ClaimRun(ctx, b); !errors.Is(err, ledger.ErrNotClaimable) {
		t.Fatalf("second claim while running: %v", err)
	}
	if _, err := s.FinishRun(ctx, ledger.RunFinish{ID: r.ID, Owner: "b", State: ledger.RunFinished, Now: T0}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("finish by non-owner: %v", err)
	}
	// A renewed lease keeps the run past its first expiry.
	renewed, err := s.RenewRun(ctx, ledger.RunRenew{ID: r.ID, Owner: "a", Lease: claim.Lease, Now: T0.Add(9 * time.Minute)})
	if err != nil || !renewed.LeaseExpiresAt.Equal(T0.Add(19*time.Minute)) || renewed.Owner != "a" {
		t.Fatalf("renew = %+v, %v", renewed, err)
	}
	late := b
	late.Now = T0.Add(15 * time.Minute)
	if _, err := s.ClaimRun(ctx, late); !errors.Is(err, ledger.ErrNotClaimable) {
		t.Fatalf("claim after the first lease, before the renewed one: %v", err)
	}
	if _, err := s.RenewRun(ctx, ledger.RunRenew{ID: r.ID, Owner: "b", Lease: claim.Lease, Now: T0}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("renew by non-owner: %v", err)
	}
	counts := ledger.RunCounts{Intents: 3, Transactions: 4, Matched: 2, Findings: 1}
	r, err = s.FinishRun(ctx, ledger.RunFinish{ID: r.ID, Owner: "a", State: ledger.RunFinished, Counts: counts, Now: T0.Add(time.Minute)})
	if err != nil || r.State != ledger.RunFinished || r.Counts != counts || !r.FinishedAt.Equal(T0.Add(time.Minute)) {
		t.Fatalf("finish = %+v, %v", r, err)
	}
	// A finished window may be run again: same run, next attempt.
	r2, err := s.ClaimRun(ctx, b)
	if err != nil || r2.ID != r.ID || r2.Attempt != 2 || r2.Owner != "b" {
		t.Fatalf("re-run = %+v, %v", r2, err)
	}
	// b dies; after its lease c takes over.
	c := claim
	c.Owner, c.Now = "c", b.Now.Add(b.Lease)
	r3, err := s.ClaimRun(ctx, c)
	if err != nil || r3.Attempt != 3 || r3.Owner != "c" {
		t.Fatalf("takeover = %+v, %v", r3, err)
	}
	if _, err := s.FinishRun(ctx, ledger.RunFinish{ID: r.ID, Owner: "b", State: ledger.RunFinished, Now: c.Now}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("finish by the dead owner: %v", err)
	}
	if _, err := s.RenewRun(ctx, ledger.RunRenew{ID: r.ID, Owner: "b", Lease: b.Lease, Now: c.Now}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("renew by the dead owner: %v", err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil || got.Owner != "c" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	byKey, err := s.GetRunByKey(ctx, ledger.RunKey("mpesa", from, to))
	if err != nil || byKey.ID != r.ID {
		t.Fatalf("get by key = %+v, %v", byKey, err)
	}
	if _, err := s.GetRunByKey(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	runs, err := s.ListRuns(ctx, "mpesa", 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("list = %+v, %v", runs, err)
	}
	if _, err := s.GetRun(ctx, 999); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("missing run: %v", err)
	}
}
