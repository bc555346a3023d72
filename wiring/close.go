package wiring

import (
	"context"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/report"
)

// MonthClose builds the close report of q.Period (report.BuildClose) over
// every provider findings know (findings.CloseZones), or over q.Provider
// alone when it is set, each account of a provider in a section of its
// own, as of the parts' clock. Only q's period, provider and account are
// read.
func (p *Parts) MonthClose(ctx context.Context, q report.CloseParams) (report.Close, error) {
	zones, err := findings.CloseZones(ctx, p.Store, p.Zones, q.Provider)
	if err != nil {
		return report.Close{}, err
	}
	q.Providers, q.Accounts, q.Now = zones, config.AccountsOf(p.Providers), p.Clock()
	return report.BuildClose(ctx, p.Store, q)
}
