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
			cfg, enabled, err := a.cfg.Alerts.Planning()
			if err != nil {
				return err
			}
			if !enabled {
				cfg = a.previewConfig()
			}
			s, err := a.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			return alerts.Preview(cmd.Context(), s, runID, cfg, a.stdout)
		},
	}
	preview.Flags().Int64Var(&runID, "run", 0, "run id")
	cmd.AddCommand(preview)
	return cmd
}

// previewConfig shows what the messages look like when alerts are not
// configured yet.
func (a *app) previewConfig() alerts.Config {
	return alerts.Config{Mode: alerts.ModeWebhook, Channel: "finance-ops", Zones: a.zones(),
		Webhooks: map[string]string{"finance-ops": "https://hooks.slack.com/services/preview"}}.WithDefaults()
}
