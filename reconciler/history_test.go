package reconciler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

// TestRunHistory checks what a run writes into the findings' history: an
// opened event per new finding naming the run; nothing when a re-run sees
// the same; an auto_resolved event naming the run that stopped seeing one.
func TestRunHistory(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			day := scenario.Mpesa(3, date, 60)
			b := setup(t, e.New, day, reconciler.Config{})
			first := b.run(t, reconciler.Params{NoPull: true})
			b.clock.Add(time.Minute)
			b.run(t, reconciler.Params{NoPull: true})
			if err := scenario.Deliver(ctx, b.store, day.Late); err != nil {
				t.Fatal(err)
			}
			b.clock.Add(time.Minute)
			fixed := b.run(t, reconciler.Params{NoPull: true})
			if len(fixed.Resolved) != 1 {
				t.Fatalf("resolved %d findings, want 1", len(fixed.Resolved))
			}
			for _, f := range first.Findings {
				evs, err := b.store.FindingHistory(ctx, f.ID)
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("opened by run %d", first.Run.ID)
				if f.ID == fixed.Resolved[0].ID {
					// The late callback paid it: the note says when.
					want += fmt.Sprintf("|auto_resolved by run %d: paid 2024-02-06 07:15 UTC (+00:00), SBZ1AABSAB, the same day as the intent (seen by run %d)",
						fixed.Run.ID, fixed.Run.ID)
				}
				got := ""
				for i, ev := range evs {
					if i > 0 {
						got += "|"
					}
					got += string(ev.Action) + " by " + ev.Who()
					if ev.Note != "" {
						got += ": " + ev.Note
					}
					if ev.Surface != ledger.SurfaceRun {
						t.Errorf("event %+v not through the run surface", ev)
					}
				}
				if got != want {
					t.Errorf("history of %s (%s):\n got %s\nwant %s", f.ID, f.Kind, got, want)
				}
			}
			if fixed.Resolved[0].Resolver != fmt.Sprintf("run %d", fixed.Run.ID) {
				t.Errorf("resolver %q", fixed.Resolved[0].Resolver)
			}
		})
	}
}
