package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

func newFindingsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "findings",
		Short: "List, acknowledge and resolve findings",
		Long: `Findings are the discrepancies reconcile runs found: duplicate charges, charges missing at
the provider, unknown charges, amount/currency/status mismatches, stuck intents, unrecorded and
duplicate refunds; the INTENT column marks a refund intent "(refund)". Each has a
stable id and a lifecycle: open -> acknowledged -> resolved. A run resolves findings it no
longer sees; a person resolves the rest with a note.`,
	}
	cmd.AddCommand(newFindingsListCmd(a), newFindingsShowCmd(a))
	cmd.AddCommand(decisionCmds(a)...)
	cmd.AddCommand(remedyCmds(a)...)
	return cmd
}

func newFindingsListCmd(a *app) *cobra.Command {
	var (
		provider, account, format string
		from, to                  string
		statuses, kinds           []string
		limit                     int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List findings, newest first (open and acknowledged by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := wiring.FindingsFilter(a.cfg, a.clock, wiring.FindingsQuery{Provider: provider, Account: account,
				AccountSet: cmd.Flags().Changed("account"), Statuses: statuses, Kinds: kinds, Limit: limit})
			if err != nil {
				return err
			}
			fmtOut := formatOf(format)
			return a.with(cmd.Context(), storeExisting, func(ctx context.Context, d *wiring.Parts) error {
				if f.From, f.To, err = findings.ListWindow(ctx, d.Store, d.Zones, provider, from, to); err != nil {
					return err
				}
				list, err := d.Reads(ctx).ListFindings(ctx, f)
				if err != nil {
					return err
				}
				return report.WriteFindingsIn(a.stdout, fmtOut, list, d.Zones)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&provider, "provider", "", "only this provider")
	fl.StringVar(&account, "account", "", `only this account of --provider: a short code, or "default"`)
	fl.StringSliceVar(&statuses, "status", []string{"open", "acknowledged"}, "statuses to list (open, acknowledged, resolved), or all")
	fl.StringSliceVar(&kinds, "kind", nil, "only these kinds ("+findings.KindNames()+")")
	fl.StringVar(&format, "format", "text", "text, json or csv")
	fl.IntVar(&limit, "limit", 1000, "at most this many")
	fl.StringVar(&from, "from", "", "only findings whose evidence time is at or after this (RFC 3339 or YYYY-MM-DD in the provider's zone)")
	fl.StringVar(&to, "to", "", "only findings whose evidence time is before this (RFC 3339 or YYYY-MM-DD in the provider's zone)")
	return cmd
}
