package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

func newQuarantineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "Inspect rejected input kept for audit",
		Long: `Input reconcile refused (a bad row of an imported file, a callback body it could not read, a
body from an address outside the allowlist) is kept in the quarantine with the file, line, field
and reason. Nothing is dropped silently. An item stays kept until someone dismisses it (with a
note) or replays it; both are recorded with who and when.`,
	}
	var (
		source, format string
		limit          int
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List quarantined input, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := formatOf(format)
			return a.with(cmd.Context(), storeExisting, func(ctx context.Context, d *wiring.Parts) error {
				items, err := d.Store.ListQuarantine(ctx, source, limit)
				if err != nil {
					return err
				}
				return report.WriteQuarantine(a.stdout, f, items)
			})
		},
	}
	list.Flags().StringVar(&source, "source", "", "only this input path (intents_csv, mpesa_statement, mpesa_callback, ...)")
	list.Flags().IntVar(&limit, "limit", 100, "at most this many")
	list.Flags().StringVar(&format, "format", "text", "text, json or csv (json and csv include the raw input)")
	cmd.AddCommand(list)
	cmd.AddCommand(quarantineActCmds(a)...)
	return cmd
}
