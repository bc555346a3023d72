package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/wiring"
)

func newAlertsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alerts",
		Short: "Inspect the Slack messages runs send",
	}
	var runID int64
	preview := &cobra.Command{
		Use:   "preview --run ID",
		Short: "Print the Block Kit JSON and text fallback a run's alerts would send, sending nothing",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runID <= 0 {
				return usagef("preview needs --run ID (see the run id in `reconcile run` output)")
			}
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				return alerts.Preview(ctx, d.Store, runID, d.PreviewAlerts(), a.stdout)
			})
		},
	}
	preview.Flags().Int64Var(&runID, "run", 0, "run id")
	cmd.AddCommand(preview)
	return cmd
}
