package main

import (
	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/alerts"
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
			d, err := a.resolve(cmd.Context(), storeExisting)
			if err != nil {
				return err
			}
			return alerts.Preview(cmd.Context(), d.Store, runID, d.PreviewAlerts(), a.stdout)
		},
	}
	preview.Flags().Int64Var(&runID, "run", 0, "run id")
	cmd.AddCommand(preview)
	return cmd
}
