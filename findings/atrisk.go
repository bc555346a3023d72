package findings

import (
	"maps"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// AtRiskStatuses are the statuses whose money at risk is counted: the
// unresolved findings, open or acknowledged. The console's and the API's
// totals and the reconcile_open_at_risk metric all count these, so they
// agree; a resolved finding puts nothing at risk any more.
var AtRiskStatuses = []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged}

// CountsAtRisk reports whether f's money at risk is counted: it is
// unresolved and puts money at risk.
func CountsAtRisk(f ledger.Finding) bool {
	return slices.Contains(AtRiskStatuses, f.Status) && !f.AtRisk.IsZero()
}

// RiskTotal is the money at risk in one currency and how many findings put
// it there.
type RiskTotal struct {
	Amount   money.Amount
	Findings int
}

// TotalsAtRisk sums the money at risk of the unresolved findings of fs per
// currency, currencies sorted.
func TotalsAtRisk(fs []ledger.Finding) []RiskTotal {
	sums := map[string]decimal.Decimal{}
	n := map[string]int{}
	for _, f := range fs {
		if !CountsAtRisk(f) {
			continue
		}
		sums[f.AtRisk.Currency] = sums[f.AtRisk.Currency].Add(f.AtRisk.Value)
		n[f.AtRisk.Currency]++
	}
	out := make([]RiskTotal, 0, len(sums))
	for _, cur := range slices.Sorted(maps.Keys(sums)) {
		out = append(out, RiskTotal{Amount: money.Amount{Value: sums[cur], Currency: cur}, Findings: n[cur]})
	}
	return out
}
