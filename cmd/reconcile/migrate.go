package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/wiring"
)

func newMigrateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations (idempotent)",
		Long: `Apply the ledger's migrations and River's queue tables to the configured database.
Running it again when everything is applied says so and changes nothing. On PostgreSQL a
session lock keeps replicas that migrate at the same time from interleaving.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.with(cmd.Context(), wiring.Migrate, func(ctx context.Context, d *wiring.Parts) error {
				applied, err := database.Migrate(ctx, d.Store)
				if err != nil {
					return err
				}
				return applied.WriteText(a.stdout, database.Redact(a.cfg.DatabaseURL))
			})
		},
	}
}
