package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

func newReportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Reports over the books: the month-end close",
	}
	cmd.AddCommand(newReportCloseCmd(a))
	return cmd
}

func newReportCloseCmd(a *app) *cobra.Command {
	var period, provider, account, format, note, actor string
	var closeIt, force bool
	cmd := &cobra.Command{
		Use:   "close --period YYYY-MM [--provider P [--account A]] [--format text|json|csv] [--close --note TEXT]",
		Short: "The month-end close report; --close records who closed the month and when",
		Long: `Print the close report of a month (each provider's month in its own zone): per provider and
currency, the intents created and the evidence of the month, counted and summed; how many
transactions the month's runs matched; the findings still open, by kind, with the money at risk;
what people did about the month's findings (resolved by hand, written off, refunded) and the
transactions they matched by hand, each with who; the findings of earlier closed months raised or
resolved since the previous close; and whether every day of the month that is over was run.
Each account of a provider (providers.*.accounts) has its own section; --account reports one.

--close records the close with who (--actor, or the operating system user), when, the note and
the report as it stands. It is refused while a day of the month is not over or was not run,
unless --force, and for a whole provider only (not with --account). A finding raised later for a closed month is flagged as such in the report and
in the console.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := ledger.ParsePeriod(period); err != nil {
				return usagef("--period %q: want a month, YYYY-MM", period)
			}
			f := formatOf(format)
			q := report.CloseParams{Period: period, Provider: provider, AccountSet: cmd.Flags().Changed("account")}
			if provider != "" {
				setup, err := a.setup(provider)
				if err != nil {
					return err
				}
				if q.AccountSet {
					if q.Account, err = config.ParseAccount(setup, account); err != nil {
						return usagef("--account: %v", err)
					}
				}
			}
			switch {
			case q.AccountSet && provider == "":
				return usagef("--account needs --provider: an account belongs to one provider")
			case q.AccountSet && closeIt:
				return usagef("report close --close: a month is closed for a whole provider; drop --account")
			}
			var (
				who ledger.Actor
				err error
			)
			if closeIt {
				if who, err = cliActor(actor); err != nil {
					return err
				}
				if strings.TrimSpace(note) == "" {
					return usagef("report close --close: --note is required: say what was checked")
				}
			}
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				c, err := d.MonthClose(ctx, q)
				if err != nil {
					return err
				}
				if closeIt {
					if c, err = recordClose(cmd, d, c, who, note, force); err != nil {
						return err
					}
				}
				return report.WriteClose(a.stdout, f, c)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&period, "period", "", "the month, YYYY-MM (required)")
	fl.StringVar(&provider, "provider", "", "only this provider (default: every provider)")
	fl.StringVar(&account, "account", "", `only this account of --provider: a short code or id, or "default"`)
	fl.StringVar(&format, "format", "text", "text, json or csv")
	fl.BoolVar(&closeIt, "close", false, "record that the month is closed, by --actor, with --note")
	fl.BoolVar(&force, "force", false, "with --close: close although a day of the month is not over or was not run")
	fl.StringVar(&note, "note", "", "with --close: what was checked (required)")
	addActorFlag(cmd, &actor)
	_ = cmd.MarkFlagRequired("period")
	return cmd
}

// recordClose records c as closed by who and returns the report with its
// close.
func recordClose(cmd *cobra.Command, d *wiring.Parts, c report.Close, who ledger.Actor, note string, force bool) (report.Close, error) {
	c, err := report.RecordClose(cmd.Context(), d.Store, c, report.CloseBy{Actor: who, Note: note, Force: force, Now: d.Clock()})
	var nr *report.NotReadyError
	switch {
	case errors.As(err, &nr):
		return c, usagef("report close --close: %v; run those days, or close with --force", err)
	case err != nil:
		return c, fmt.Errorf("report close: %w", err)
	}
	return c, nil
}
