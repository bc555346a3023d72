package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/statement"
)

func newImportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import intents, provider statements or captured callbacks",
	}
	cmd.AddCommand(newImportIntentsCmd(a), newImportStatementCmd(a), newImportCallbacksCmd(a))
	return cmd
}

func newImportStatementCmd(a *app) *cobra.Command {
	var provider string
	cmd := &cobra.Command{
		Use:   "statement --provider P FILE",
		Short: "Import a provider statement file (M-Pesa portal CSV, Stripe payout report CSV, a configured CSV layout)",
		Long: `Import a statement as provider evidence:
  --provider mpesa   the M-Pesa organisation portal export (CSV; preamble rows, BOM and CRLF are fine)
  --provider stripe  Stripe's payout_reconciliation.itemized.5 report (CSV, amounts in major units)
  --provider NAME    a CSV layout configured under statements: in the config

The file is imported in one transaction or not at all: every bad line is reported with its line
and field and kept in quarantine. Rows already known (through a callback, the API or an earlier
export) add a source, never a second transaction; importing the same file again changes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			setup, err := a.setup(provider)
			if err != nil {
				return err
			}
			if setup.Statement == nil {
				return usagef("--provider %s has no statement format", provider)
			}
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
			c, err := (&statement.Importer{Store: s, Clock: a.clock}).Import(ctx, statement.File{Name: args[0], Reader: f,
				Parser: setup.Statement, Source: provider + "_statement"})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: %d line(s): %d new transaction(s), %d new source(s), %d already known\n",
				args[0], c.Lines, c.NewTxns, c.NewSources, c.Duplicates)
			return nil
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "mpesa, stripe or a configured statement layout (required)")
	_ = cmd.MarkFlagRequired("provider")
	return cmd
}

func newImportCallbacksCmd(a *app) *cobra.Command {
	var provider string
	cmd := &cobra.Command{
		Use:   "callbacks --provider P FILE",
		Short: "Replay captured callback bodies, one JSON document per line",
		Long: `Replay callback bodies captured elsewhere (a proxy log, another system) through the same code
as the HTTP endpoints: each is stored, then interpreted; M-Pesa STK results settle their intents.
Kinds are detected by shape (STK callback, C2B confirmation, B2C, reversal and transaction-status
results for M-Pesa; events for Stripe). Every line is checked first: if any is bad, nothing is
imported and the bad lines are quarantined with their line numbers. Lines are then delivered one
by one, each in its own transaction as over HTTP; if the database fails midway, running the same
file again completes it (a delivered line is a duplicate and changes nothing).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			setup, err := a.setup(provider)
			if err != nil {
				return err
			}
			if setup.Callbacks == nil {
				return usagef("--provider %s has no callbacks", provider)
			}
			ctx := cmd.Context()
			proc, err := a.processor(ctx)
			if err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			c, err := proc.ImportFile(ctx, intake.FileImport{Provider: provider, Parser: setup.Callbacks, Name: args[0], Data: f})
			if err != nil {
				return err
			}
			var kinds []string
			for _, k := range sortedNames(c.Kinds) {
				kinds = append(kinds, fmt.Sprintf("%d %s", c.Kinds[k], k))
			}
			fmt.Fprintf(a.stdout, "%s: %d callback(s) (%s): %d new transaction(s), %d new source(s), %d delivered before\n",
				args[0], c.Lines, strings.Join(kinds, ", "), c.NewTxns, c.NewSources, c.Duplicates)
			return nil
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "mpesa or stripe (required)")
	_ = cmd.MarkFlagRequired("provider")
	return cmd
}

// setup returns a configured provider or a usage error naming the known ones.
func (a *app) setup(provider string) (providerSetup, error) {
	setups := a.providerSetups()
	s, ok := setups[provider]
	if !ok {
		return s, usagef("--provider %q: want one of %s", provider, strings.Join(sortedNames(setups), ", "))
	}
	return s, nil
}

// processor is the callback intake, applying STK results through the charge
// service.
func (a *app) processor(ctx context.Context) (*intake.Processor, error) {
	svc, _, err := a.chargesWithQueue(ctx)
	if err != nil {
		return nil, err
	}
	return &intake.Processor{Store: a.store, Applier: svc, Clock: a.clock, Logger: a.logger}, nil
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
Intents in a final state (succeeded, failed, unknown) are history. A pending intent gets its
charge job in the same transaction, as if created through the API; its provider must have a
charger configured.`,
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
			svc, _, err := a.chargesWithQueue(ctx)
			if err != nil {
				return err
			}
			res, err := intentcsv.Import(ctx, s, args[0], f, a.clock(), configuredOnly(a.providerSetups(), svc.CreateIntentTx))
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: %d row(s), %d intent(s) created, %d already present\n", args[0], res.Rows, res.Created, res.Existing)
			return nil
		},
	}
}
