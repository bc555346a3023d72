package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/internal/database"
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
			ctx := cmd.Context()
			d, err := a.resolve(ctx, storeMigrate)
			if err != nil {
				return err
			}
			applied, err := database.Migrate(ctx, d.store)
			if err != nil {
				return err
			}
			target := database.Redact(a.cfg.DatabaseURL)
			if applied.Empty() {
				fmt.Fprintf(a.stdout, "%s: nothing to do, the schema is up to date\n", target)
				return nil
			}
			for _, m := range applied.Ledger {
				fmt.Fprintf(a.stdout, "applied ledger %s\n", m)
			}
			for _, m := range applied.River {
				fmt.Fprintf(a.stdout, "applied river %s\n", m)
			}
			fmt.Fprintf(a.stdout, "%s: %d migration(s) applied\n", target, len(applied.Ledger)+len(applied.River))
			return nil
		},
	}
}
