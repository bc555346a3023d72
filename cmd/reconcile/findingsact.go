package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/wiring"
)

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
			return a.with(cmd.Context(), storeCreate, func(ctx context.Context, deps *wiring.Parts) error {
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
