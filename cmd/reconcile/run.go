package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/schedule"
	"github.com/reconcilehq/reconcile/wiring"
)

func newRunCmd(a *app) *cobra.Command {
	var o runFlags
	cmd := &cobra.Command{
		Use:   "run --provider P [--account A] --from T [--to T]",
		Short: "Reconcile one provider and window on demand",
		Long: `Reconcile the window [from, to) of one provider: pull its evidence (Stripe's API, M-Pesa's
Pull Transactions API when enabled) unless --no-pull, match it to the books, then record findings,
resolve those no longer seen, settle unknown intents the evidence proves, and announce changes in
Slack.

A provider whose evidence must be pulled (Stripe) but cannot be, because its API key is not set,
is an error naming the setting; --no-pull matches only the evidence already stored (imported
reports, webhooks) instead. M-Pesa and configured CSV statements need no pull: their evidence
arrives as callbacks and statement imports.

--dry-run never pulls: it matches the evidence already stored, prints the findings and the Slack
messages a real run would send, and writes and sends nothing (no run, no findings, no alerts).
It needs an existing database.

A bank account (--provider bank:NAME, configured under banks) is reconciled three ways: the payouts
of the providers that pay into it (Stripe payouts, pulled by arrival date when Stripe's API key is
set, and M-Pesa settlements from portal statements) are matched to its statement's credits, and
what each payout carries is checked against the books; see docs/design.md, "Payouts and the bank".

A provider with several accounts (M-Pesa paybills and tills under providers.mpesa.accounts) is
reconciled one account at a time, each in a window and run of its own: --account names one (its
short code, or "default" for providers.mpesa.short_code); without it every account is run in turn.

Times are RFC 3339 or YYYY-MM-DD (midnight in the provider's zone: Africa/Nairobi for M-Pesa,
UTC for Stripe, the bank's zone for bank:NAME); --to defaults to one day after --from. Re-running a window updates the same
findings. Two processes never run the same window at once.

Exit codes: 0 done (findings are results, not failures); 3 done with open findings when
--fail-on-findings; 1 error; 2 usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runWindow(cmd.Context(), o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.provider, "provider", "", "provider to reconcile (required)")
	fl.StringVar(&o.account, "account", "", `the provider account to reconcile: a short code, or "default" (default every account in turn)`)
	fl.StringVar(&o.from, "from", "", "window start, RFC 3339 or YYYY-MM-DD (required)")
	fl.StringVar(&o.to, "to", "", "window end (exclusive), RFC 3339 or YYYY-MM-DD (default one day after --from)")
	fl.StringVar(&o.format, "format", "text", "text, json or csv")
	fl.BoolVar(&o.dryRun, "dry-run", false, "match the evidence already stored (no pull), print findings and Slack messages; write and send nothing")
	fl.BoolVar(&o.failOnFindings, "fail-on-findings", false, "exit 3 when the window has open findings")
	fl.BoolVar(&o.noPull, "no-pull", false, "match only the evidence already stored")
	for _, req := range []string{"provider", "from"} {
		_ = cmd.MarkFlagRequired(req)
	}
	return cmd
}

// runFlags are the flags of run.
type runFlags struct {
	provider, account, from, to, format string
	dryRun, failOnFindings, noPull      bool
}

// runWindow checks run's flags, then reconciles the window of each account
// they name and writes its report.
func (a *app) runWindow(ctx context.Context, o runFlags) error {
	setup, err := a.setup(o.provider)
	if err != nil {
		return err
	}
	f := formatOf(o.format)
	start, end, err := schedule.RunWindow(o.from, o.to, setup.Zone)
	if err != nil {
		return err
	}
	if !setup.Pulled && setup.PullSetting != "" && !o.noPull && !o.dryRun {
		return fmt.Errorf("run --provider %s: its evidence cannot be pulled: set %s, or pass --no-pull to match only "+
			"the evidence already stored (imported reports, webhooks)", o.provider, setup.PullSetting)
	}
	accounts, err := runAccounts(setup, o.account)
	if err != nil {
		return err
	}
	mode := storeCreate
	if o.dryRun {
		mode = storeExisting // a dry run writes nothing, not even a database
	}
	d, err := a.resolve(ctx, mode)
	if err != nil {
		return err
	}
	rec, err := d.Reconciler(d.Queue, d.QueuedCharges())
	if err != nil {
		return err
	}
	open := 0
	for _, acct := range accounts {
		out, err := a.runAccount(ctx, rec, d, setup, f, reconciler.Params{Provider: o.provider, Account: acct, From: start,
			To: end, DryRun: o.dryRun, NoPull: o.noPull})
		if err != nil {
			return err
		}
		open += out.OpenFindings()
	}
	if o.failOnFindings && open > 0 {
		return &exitErr{code: exitFindings}
	}
	return nil
}

// runAccounts returns the accounts a run reconciles: the one named, or
// every account of the provider, the default first.
func runAccounts(setup config.Provider, account string) ([]string, error) {
	if account == "" {
		return append([]string{""}, setup.Accounts...), nil
	}
	acct, err := config.ParseAccount(setup, account)
	if err != nil {
		return nil, usagef("--account: %v", err)
	}
	return []string{acct}, nil
}

// runAccount runs one account's window and writes its report.
func (a *app) runAccount(ctx context.Context, rec *reconciler.Reconciler, d *wiring.Parts, setup config.Provider, f report.Format,
	p reconciler.Params) (*reconciler.Outcome, error) {
	progress := report.NewProgress(os.Stderr, a.clock)
	p.Progress = progress.Update
	out, err := rec.Run(ctx, p)
	progress.Done()
	if err != nil {
		return nil, err
	}
	r := report.FromOutcome(out)
	r.Zone = setup.Zone
	r.Evidence = setup.Evidence(p.Provider, p.DryRun, p.NoPull)
	if err := report.WriteRun(a.stdout, f, r); err != nil {
		return nil, err
	}
	if p.DryRun {
		if err := a.previewDryRun(d, out, f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// previewDryRun shows the Slack messages a real run would send.
func (a *app) previewDryRun(d *wiring.Parts, out *reconciler.Outcome, f report.Format) error {
	w := a.stdout
	if f != report.Text {
		w = a.stderr // keep machine-readable output clean
	}
	fmt.Fprintln(w, "\nSlack messages this run would send:")
	return alerts.PreviewFindings(w, d.PreviewAlerts(), out.Run, out.Findings)
}
