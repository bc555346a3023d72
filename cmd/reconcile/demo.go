package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/demo"
)

func newDemoCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "A self-contained demonstration on a fresh embedded database",
		Long: `Run a day of payments end to end with fake M-Pesa and Stripe servers on loopback: intents
charged through the queue (with a worker that dies mid-charge and a provider without idempotency
keys), M-Pesa callbacks (some duplicated, one late), a portal statement, a Stripe pull, the
reconcile runs, their findings and the Slack message they would send. No server, network or
secrets needed; it takes a few seconds and gives the same findings every time.

It uses a fresh SQLite file, reconcile-demo.db (replaced each run). With --database-url
postgres://... it runs on PostgreSQL in a schema of its own, reconcile_demo (replaced each run).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			chosen := cmd.Flags().Changed("database-url") || os.Getenv("RECONCILE_DATABASE_URL") != ""
			store, shown, err := demo.FreshStore(ctx, demo.Target(chosen, a.cfg.DatabaseURL))
			if err != nil {
				return err
			}
			defer store.Close()
			fmt.Fprintf(a.stdout, "reconcile demo on %s\n", database.Redact(shown))
			dir, err := os.MkdirTemp("", "reconcile-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			_, err = demo.Run(ctx, demo.Options{Store: store, Out: a.stdout, TempDir: dir, DatabaseURL: demo.NextURL(shown), Command: demo.SelfCommand()})
			return err
		},
	}
}
