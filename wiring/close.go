package wiring

import (
	"context"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/report"
)

// MonthClose builds the close report of period (report.BuildClose) over
// every provider findings know (findings.CloseZones), or over provider
// alone when it is set, as of the parts' clock.
func (p *Parts) MonthClose(ctx context.Context, period, provider string) (report.Close, error) {
	zones, err := findings.CloseZones(ctx, p.Store, p.Zones, provider)
	if err != nil {
		return report.Close{}, err
	}
	return report.BuildClose(ctx, p.Store, report.CloseParams{Period: period, Providers: zones, Provider: provider, Now: p.Clock()})
}
