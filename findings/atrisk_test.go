package findings_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestAtRiskAgrees: the metric and TotalsAtRisk (the console's and the
// API's totals) count the same findings, the unresolved ones: an
// acknowledged finding is still at risk, a resolved one is not.
func TestAtRiskAgrees(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, store, sd, _ := setup(t, newURL)
			m := findings.NewMetrics(store, []string{"mpesa"}, map[string]string{"mpesa": "KES"}, nil)
			check := func(step, want string) {
				t.Helper()
				if err := m.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				all, err := store.ListFindings(ctx, ledger.FindingFilter{})
				if err != nil {
					t.Fatal(err)
				}
				total := "0"
				if ts := findings.TotalsAtRisk(all); len(ts) == 1 && ts[0].Amount.Currency == "KES" {
					total = ts[0].Amount.Value.String()
				} else if len(ts) != 0 {
					t.Fatalf("%s: totals %+v", step, ts)
				}
				got := testutil.ToFloat64(m.AtRisk.WithLabelValues("mpesa", "KES"))
				if total != want || got != mustFloat(t, want) {
					t.Fatalf("%s: totals %s, metric %v; want %s", step, total, got, want)
				}
			}
			// The duplicate (KES 1,500) is resolved; the unknown charge
			// (KES 250) is open.
			check("open", "250")
			actor := ledger.Actor{Name: "erin", Surface: ledger.SurfaceCLI}
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Acknowledge, FindingID: sd.Unknown, Actor: actor}); err != nil {
				t.Fatal(err)
			}
			check("acknowledged", "250")
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Resolve, FindingID: sd.Unknown, Actor: actor, Note: "our own test charge"}); err != nil {
				t.Fatal(err)
			}
			check("resolved", "0")
		})
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
