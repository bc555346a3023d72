package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger/intentcsv"
)

func newImportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import intents, provider statements or captured callbacks",
	}
	cmd.AddCommand(newImportIntentsCmd(a))
	return cmd
}

func newImportIntentsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "intents FILE.csv",
		Short: "Import intents from another system (backfill, tests)",
		Long: `Import intents from a CSV file with a header row. Required columns:
  key,provider,amount,currency,status,created_at
Optional columns:
  reference,provider_refs (;-separated),customer,updated_at
Times are RFC 3339 with a zone. An unknown column is an error.

The whole file is imported in one transaction, or nothing is: every bad row is reported with
its line and column and kept in quarantine. Importing the same file again changes nothing.
Imported intents are history: importing never charges anyone.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			res, err := intentcsv.Import(ctx, s, args[0], f, a.clock())
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: %d row(s), %d intent(s) created, %d already present\n", args[0], res.Rows, res.Created, res.Existing)
			return nil
		},
	}
}
