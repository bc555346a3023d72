package reconciler_test

import (
	"context"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

// TestOneBadPulledRecordDoesNotStopTheRun: a pulled record the books refuse
// (an absurd amount) is quarantined, once however often the window is
// pulled, the rest of the pull is kept, and the window is reconciled as
// usual, on both engines.
func TestOneBadPulledRecordDoesNotStopTheRun(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			day := scenario.Mpesa(5, date, 30)
			if len(day.Late) == 0 {
				t.Fatal("the scenario has no late evidence to pull")
			}
			bad := day.Late[0]
			bad.Txn.ID = "SBADAMOUNT"
			bad.Txn.Amount.Value = decimal.RequireFromString("1000000000000000000000000000000")
			bad.Source.Ref = "pull:SBADAMOUNT"
			p := &puller{sightings: append([]providers.Sighting{bad}, day.Late...)}
			b := setup(t, e.New, day, reconciler.Config{Pullers: map[string]providers.Puller{"mpesa": p}})
			out := b.run(t, reconciler.Params{})
			want := slices.DeleteFunc(slices.Clone(day.Expected), func(x scenario.Expected) bool { return eqExpected(x, day.Remedied) })
			if !slices.EqualFunc(scenario.Of(out.Findings), want, eqExpected) || out.PullError != "" {
				t.Fatalf("findings after pull: %v (pull error %q)", scenario.Of(out.Findings), out.PullError)
			}
			q, err := b.store.ListQuarantine(context.Background(), "mpesa_pull", 10)
			if err != nil || len(q) != 1 || q[0].Field != "amount" {
				t.Fatalf("quarantine %+v %v", q, err)
			}
			if _, err := b.store.GetProviderTxn(context.Background(), "mpesa", "SBADAMOUNT"); err == nil {
				t.Fatal("the refused record reached the books")
			}
			// The window pulled again meets the same record: kept once.
			if again := b.run(t, reconciler.Params{}); again.PullError != "" {
				t.Fatalf("second run: pull error %q", again.PullError)
			}
			if q, err := b.store.ListQuarantine(context.Background(), "mpesa_pull", 10); err != nil || len(q) != 1 {
				t.Fatalf("quarantine after a second pull: %+v %v", q, err)
			}
		})
	}
}
