package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/wiring"
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
	var provider, account string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "statement --provider P [--account A] FILE",
		Short: "Import a provider or bank statement file (M-Pesa portal CSV, Stripe itemized report CSV, camt.053, MT940, BAI2, a configured CSV layout)",
		Long: `Import a statement as provider evidence:
  --provider mpesa   the M-Pesa organisation portal export (CSV; preamble rows, BOM and CRLF are fine)
  --provider stripe  Stripe's itemized balance reports (balance_change_from_activity.itemized.*,
                     payout_reconciliation.itemized.*, ending_balance_reconciliation.itemized.*;
                     CSV, amounts in major units; see docs/stripe.md)
  --provider NAME    a CSV layout configured under statements: in the config
  --provider bank:NAME
                     a bank account configured under banks: its statement in the account's format
                     (camt.053/camt.054, MT940, BAI2 or a CSV layout); a statement of another account
                     or currency, or one whose entries do not add up from its opening to its closing
                     balance, is refused whole and kept in quarantine

--account names the provider account the statement is of (an M-Pesa paybill or till listed under
providers.mpesa.accounts, by its short code); its transactions are that account's and are
reconciled in its runs. Without it the statement is the default account's.

An M-Pesa portal statement is refused when its running balance shows a missing row (a row's
balance does not follow from the row before it); its settlements to the bank are recorded as
payouts with the rows they swept. A Stripe report's rows record the payout that paid them out
(automatic_payout_id).

The file is imported in one transaction or not at all: every bad line is reported with its line
and field and kept in quarantine. Rows already known (through a callback, the API or an earlier
export) add a source, never a second transaction; importing the same file again changes nothing.
A row that contradicts the books (another amount, type, final status or day for a known
transaction id) is quarantined and counted; the transaction first recorded is kept. The file is
read as a stream in batches, so memory does not grow with its size; on a terminal, progress
(lines, lines/s, share of the file read) is shown on stderr.

--dry-run reads the file as the import would and writes nothing: it prints the lines read and
refused, how many transactions the books hold already (or hold with another amount), counts by
type and status, the totals per currency and the largest amounts.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			setup, err := a.setup(provider)
			if err != nil {
				return err
			}
			wiring.BoundHeap(a.cfg)
			if setup.Statement == nil {
				return usagef("--provider %s has no statement format", provider)
			}
			acct, err := config.ParseAccount(setup, account)
			if err != nil {
				return usagef("--account: %v", err)
			}
			return a.with(cmd.Context(), wiring.ModeOf(dryRun), func(ctx context.Context, d *wiring.Parts) error {
				im := d.StatementImporter(provider, acct, setup, os.Stderr)
				if dryRun {
					return im.DryRun(ctx, a.stdout, d.Store, args[0])
				}
				c, err := im.Import(ctx, args[0])
				if err != nil {
					return err
				}
				fmt.Fprint(a.stdout, c.Summary(args[0]))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "mpesa, stripe, a configured statement layout or bank:NAME (required)")
	cmd.Flags().StringVar(&account, "account", "", `the provider account the statement is of: a short code, or "default"`)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "read and check the file against the books, print counts, totals per currency "+
		"and the largest amounts, and write nothing")
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
imported and the bad lines are quarantined with their line numbers. The lines are then delivered
in one transaction, with the effect each would have over HTTP: the file is imported whole or not
at all, and importing it again changes nothing (a delivered line is a duplicate).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			setup, err := a.setup(provider)
			if err != nil {
				return err
			}
			wiring.BoundHeap(a.cfg)
			if setup.Callbacks == nil {
				return usagef("--provider %s has no callbacks", provider)
			}
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, d *wiring.Parts) error {
				im := d.CallbacksImporter(provider, setup, os.Stderr)
				res, err := im.Import(ctx, args[0])
				if err != nil {
					return err
				}
				return res.WriteText(a.stdout)
			})
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "mpesa or stripe (required)")
	_ = cmd.MarkFlagRequired("provider")
	return cmd
}

func newImportIntentsCmd(a *app) *cobra.Command {
	var chargeThem, dryRun bool
	cmd := &cobra.Command{
		Use:   "intents [--charge] FILE.csv",
		Short: "Import intents from another system (backfill, tests); charges nothing unless --charge",
		Long: `Import intents from a CSV file with a header row. Required columns:
  key,provider,amount,currency,status,created_at
Optional columns:
  reference,provider_refs (;-separated),customer,updated_at,
  kind (charge, expected or refund),refund_of (a refund's charge key),
  due_at,tolerance (an expected payment's),
  account (the provider account: a short code under providers.mpesa.accounts; empty or
  "default" for the default one)
Times are RFC 3339 with a zone. An unknown column is an error. A row that names no
kind is a charge when it names provider_refs, else its provider's intent_kind
(M-Pesa: expected, a paybill invoice the customer pays in as many parts as they
choose).

The whole file is imported in one transaction, or nothing is: every bad row is reported with
its line and column and kept in quarantine. Importing the same file again changes nothing.
Intents in a final state (succeeded, failed, unknown) are history.

Nothing is charged unless --charge is given: a backfill must not send payment prompts to
customers. Without it a pending intent is imported and stays pending, and the output says how
many. With --charge, every pending intent of the file that is still pending gets its charge job
in the same transaction, as if created through the API; its provider must have a charger
configured. A pending refund (kind refund) likewise gets its refund job with --charge only,
and its provider must be able to send refunds. Importing the same file again with --charge
charges (and refunds) those imported without it.

--dry-run reads the file as the import would and writes nothing: it prints the rows read and
refused, how many intents are new, already in the books or there with other parameters (refused
on import), counts by kind and state, the totals per currency and the largest amounts. An import
in the wrong unit (cents for shillings) shows in its totals; see docs/operations.md to undo one
that went in.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dryRun && chargeThem {
				return usagef("--dry-run charges nothing: leave --charge out")
			}
			return a.with(cmd.Context(), wiring.ModeOf(dryRun), func(ctx context.Context, d *wiring.Parts) error {
				im := d.IntentsImporter(chargeThem, os.Stderr)
				if dryRun {
					return im.DryRun(ctx, a.stdout, d.Store, args[0])
				}
				// On PostgreSQL the import keeps a set of the file's keys, which
				// grows with the file, so its heap has no fixed bound.
				if d.Embedded() {
					wiring.BoundHeap(a.cfg)
				}
				res, err := im.Import(ctx, args[0])
				if err != nil {
					return err
				}
				return res.WriteText(a.stdout)
			})
		},
	}
	cmd.Flags().BoolVar(&chargeThem, "charge", false, "enqueue the charge of every pending intent of the file (sends real payment requests)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "read and check the file against the books, print counts, totals per currency "+
		"and the largest amounts, and write nothing")
	return cmd
}
