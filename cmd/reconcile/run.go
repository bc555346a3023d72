package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/reconciler"
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
	start, end, err := schedule.RunWindow(o.from, o.to, setup.Zone)
	if err != nil {
		return err
	}
	if err := setup.CheckPull(o.provider, o.noPull || o.dryRun); err != nil {
		return err
	}
	accounts, err := wiring.RunAccounts(setup, o.account)
	if err != nil {
		return err
	}
	return a.with(ctx, wiring.ModeOf(o.dryRun), func(ctx context.Context, d *wiring.Parts) error {
		open, err := d.RunWindow(ctx, wiring.Window{Setup: setup, Accounts: accounts, Format: formatOf(o.format),
			Params: reconciler.Params{Provider: o.provider, From: start, To: end, DryRun: o.dryRun, NoPull: o.noPull},
			Out:    a.stdout, Err: a.stderr, Progress: os.Stderr})
		if err != nil {
			return err
		}
		if o.failOnFindings && open > 0 {
			return &exitErr{code: exitFindings}
		}
		return nil
	})
}
