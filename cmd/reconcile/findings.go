package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
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
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
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

func newFindingsShowCmd(a *app) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a finding with its evidence and the history of every decision",
		Long: `Show a finding: its amounts and lifecycle, the intent with its attempts, the provider
transactions it names with every source they were seen through (raw payloads with phone numbers,
e-mail addresses and long digit runs masked), and its history: who opened, escalated,
acknowledged, noted, resolved or reopened it, through which surface, when, and the note.

--format csv prints the history only, one event a row.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := formatOf(format)
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, deps *wiring.Parts) error {
				d, err := findings.Load(ctx, deps.Reads(ctx), args[0])
				if errors.Is(err, ledger.ErrNotFound) {
					return notFound("finding", args[0], "findings list")
				}
				if err != nil {
					return err
				}
				v := d.View()
				return findings.Write(a.stdout, f, v, deps.Zones[v.Finding.Provider])
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, json or csv (csv: the history)")
	return cmd
}
