package wiring

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/schedule"
)

// Window is an on-demand run of one provider's window, over one account or
// all of them, and where its reports go.
type Window struct {
	// Params are the window's; Account is set for each account in turn.
	Params reconciler.Params
	// Setup is the provider's configuration; Accounts the accounts to run
	// (RunAccounts).
	Setup    config.Provider
	Accounts []string
	// Format is the reports' format. Out takes the reports; a dry run's
	// Slack preview goes there too in text, to Err otherwise (machine
	// readable output stays clean). Progress shows the progress line when
	// it is a terminal.
	Format   report.Format
	Out, Err io.Writer
	Progress *os.File
}

// RunAccounts returns the accounts a run reconciles: the one account
// names, or every account of the provider, the default first. An unknown
// account is a *schedule.FlagError naming --account.
func RunAccounts(setup config.Provider, account string) ([]string, error) {
	if account == "" {
		return append([]string{""}, setup.Accounts...), nil
	}
	acct, err := config.ParseAccount(setup, account)
	if err != nil {
		return nil, schedule.Flagf("account", "--account: %v", err)
	}
	return []string{acct}, nil
}

// RunWindow reconciles w's window of each of its accounts in turn, one run
// each, writes each run's report and, for a dry run, the Slack messages a
// real run would send, and returns how many findings the runs left open.
func (p *Parts) RunWindow(ctx context.Context, w Window) (int, error) {
	rec, err := p.Reconciler(p.Queue, p.QueuedCharges())
	if err != nil {
		return 0, err
	}
	open := 0
	for _, acct := range w.Accounts {
		params := w.Params
		params.Account = acct
		out, err := p.runAccount(ctx, rec, w, params)
		if err != nil {
			return open, err
		}
		open += out.OpenFindings()
	}
	return open, nil
}

// runAccount runs one account's window and writes its report.
func (p *Parts) runAccount(ctx context.Context, rec *reconciler.Reconciler, w Window, params reconciler.Params) (*reconciler.Outcome, error) {
	progress := report.NewProgress(w.Progress, p.Clock)
	params.Progress = progress.Update
	out, err := rec.Run(ctx, params)
	progress.Done()
	if err != nil {
		return nil, err
	}
	r := report.FromOutcome(out)
	r.Zone = w.Setup.Zone
	r.Evidence = w.Setup.Evidence(params.Provider, params.DryRun, params.NoPull)
	if err := report.WriteRun(w.Out, w.Format, r); err != nil {
		return nil, err
	}
	if params.DryRun {
		if err := p.previewDryRun(w, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// previewDryRun shows the Slack messages a real run would send.
func (p *Parts) previewDryRun(w Window, out *reconciler.Outcome) error {
	dst := w.Out
	if w.Format != report.Text {
		dst = w.Err
	}
	fmt.Fprintln(dst, "\nSlack messages this run would send:")
	return alerts.PreviewFindings(dst, p.PreviewAlerts(), out.Run, out.Findings)
}
