package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/statement"
	"github.com/reconcilehq/reconcile/report"
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
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "statement --provider P FILE",
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
			a.boundHeap()
			if setup.Statement == nil {
				return usagef("--provider %s has no statement format", provider)
			}
			ctx := cmd.Context()
			if dryRun {
				return a.dryRunStatement(ctx, provider, setup, args[0])
			}
			d, err := a.resolve(ctx, storeCreate)
			if err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			var size int64
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				size = st.Size()
			}
			in := &report.CountingReader{R: f}
			progress := report.NewProgress(os.Stderr, a.clock)
			im := &statement.Importer{Store: d.store, Clock: a.clock, Progress: func(lines int) {
				progress.UpdateFile("import", lines, in.N, size)
			}}
			c, err := im.Import(ctx, statement.File{Name: args[0], Reader: in, Parser: setup.Statement,
				Source: provider + "_statement"})
			progress.Done()
			if err != nil {
				return err
			}
			fmt.Fprint(a.stdout, c.Summary(args[0]))
			return nil
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "mpesa, stripe, a configured statement layout or bank:NAME (required)")
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
			a.boundHeap()
			if setup.Callbacks == nil {
				return usagef("--provider %s has no callbacks", provider)
			}
			ctx := cmd.Context()
			d, err := a.resolve(ctx, storeCreate)
			if err != nil {
				return err
			}
			proc := a.processor(d)
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			var size int64
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				size = st.Size()
			}
			in := &report.CountingReader{R: f, Seeker: f}
			progress := report.NewProgress(os.Stderr, a.clock)
			c, err := proc.ImportFile(ctx, intake.FileImport{Provider: provider, Parser: setup.Callbacks, Name: args[0], Data: in,
				Progress: func(stage string, lines int) { progress.UpdateFile(stage, lines, in.N, size) }})
			progress.Done()
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

// processor is the callback intake, applying STK results through the charge
// service.
func (a *app) processor(d *deps) *intake.Processor {
	return &intake.Processor{Store: d.store, Applier: a.charges(d), Clock: a.clock, Logger: a.logger}
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
  due_at,tolerance (an expected payment's)
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
			ctx := cmd.Context()
			if dryRun {
				if chargeThem {
					return usagef("--dry-run charges nothing: leave --charge out")
				}
				return a.dryRunIntents(ctx, args[0])
			}
			d, err := a.resolve(ctx, storeCreate)
			if err != nil {
				return err
			}
			// On PostgreSQL the import keeps a set of the file's keys, which
			// grows with the file, so its heap has no fixed bound.
			if a.embedded() {
				a.boundHeap()
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			in := &report.CountingFile{File: f}
			opt := &intentcsv.Options{Kinds: intentcsv.Kinds{}}
			for name, p := range d.providers {
				opt.Kinds[name] = p.IntentKind
			}
			progressDone := func() {}
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				// Lines, lines/s and how much of the file is read, on a
				// terminal only.
				progress := report.NewProgress(os.Stderr, a.clock)
				progressDone = progress.Done
				opt.Progress = func(rows int) {
					progress.Update(fmt.Sprintf("import %d%%", in.N.Load()*100/max(st.Size(), 1)), rows)
				}
			}
			// Intents of a provider the configuration does not know are
			// refused, as the API refuses them.
			setups := d.providers
			opt.Check = func(r intentcsv.Row) error { return checkProvider(setups, r.Intent.Provider) }
			enqueued, enqueuedRefunds := 0, 0
			if chargeThem {
				svc := a.charges(d)
				opt.Check = func(r intentcsv.Row) error {
					if err := checkProvider(setups, r.Intent.Provider); err != nil {
						return err
					}
					if r.Intent.State != ledger.StatePending {
						return nil
					}
					if r.Intent.Kind == ledger.IntentRefund {
						if svc.CanRefund(r.Intent.Provider) {
							return nil
						}
						return fmt.Errorf("%s line %d: --charge: provider %q cannot send refunds as configured: %s",
							args[0], r.Line, r.Intent.Provider, config.RefunderSetting(r.Intent.Provider))
					}
					if svc.CanCharge(r.Intent.Provider) {
						return nil
					}
					return fmt.Errorf("%s line %d: --charge: no charger is configured for provider %q: %s",
						args[0], r.Line, r.Intent.Provider, config.ChargerSetting(r.Intent.Provider))
				}
				opt.Pending = func(ctx context.Context, tx ledger.Tx, keys []string) error {
					n, err := svc.EnqueueChargesTx(ctx, tx, keys)
					enqueued += n
					return err
				}
				opt.PendingRefunds = func(ctx context.Context, tx ledger.Tx, keys []string) error {
					n, err := svc.EnqueueRefundsTx(ctx, tx, keys)
					enqueuedRefunds += n
					return err
				}
			}
			res, err := intentcsv.Import(ctx, d.store, args[0], in, a.clock(), opt)
			progressDone()
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: %d row(s), %d intent(s) created, %d already present\n", args[0], res.Rows, res.Created, res.Existing)
			switch {
			case chargeThem:
				fmt.Fprintf(a.stdout, "%d pending intent(s): %d charge job(s) enqueued, %d already queued\n",
					res.Pending, enqueued, res.Pending-enqueued)
			case res.Pending > 0:
				fmt.Fprintf(a.stdout, "%d pending intent(s) imported and not charged: no charge jobs were enqueued. "+
					"To charge them, import the file again with --charge.\n", res.Pending)
			}
			switch {
			case chargeThem && res.PendingRefunds > 0:
				fmt.Fprintf(a.stdout, "%d pending refund(s): %d refund job(s) enqueued, %d already queued\n",
					res.PendingRefunds, enqueuedRefunds, res.PendingRefunds-enqueuedRefunds)
			case res.PendingRefunds > 0:
				fmt.Fprintf(a.stdout, "%d pending refund(s) imported and not sent: no refund jobs were enqueued. "+
					"To send them, import the file again with --charge.\n", res.PendingRefunds)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&chargeThem, "charge", false, "enqueue the charge of every pending intent of the file (sends real payment requests)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "read and check the file against the books, print counts, totals per currency "+
		"and the largest amounts, and write nothing")
	return cmd
}

// checkProvider refuses a provider the configuration does not know.
func checkProvider(setups map[string]config.Provider, provider string) error {
	if _, ok := setups[strings.ToLower(strings.TrimSpace(provider))]; ok {
		return nil
	}
	return &ledger.FieldError{Field: "provider", Err: fmt.Errorf("%s is not a configured provider (configured: %s)",
		ledger.Clip(provider), strings.Join(sortedNames(setups), ", "))}
}

// importHeapLimit is the soft heap limit of file imports: they stream in
// batches and need far less, and the collector otherwise lets the heap
// grow to twice what is live before collecting.
const importHeapLimit = 192 << 20

// importGCPercent lets the heap of an import into SQLite grow to nine
// times what is live between collections, up to importHeapLimit. What an
// import keeps live is a few batches, often under 10 MiB: at the default
// of 100 the collector ran about 40 times a second, and every cycle
// preempted the goroutine running the embedded engine in mid-statement (a
// 1M-row SQLite intents import takes about a third less CPU at 800). On
// PostgreSQL the engine runs elsewhere: the setting gains nothing there and
// costs resident memory.
const importGCPercent = 800

// boundHeap sets importHeapLimit unless GOMEMLIMIT says otherwise and, for
// an import into SQLite, importGCPercent unless GOGC says otherwise.
func (a *app) boundHeap() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(importHeapLimit)
	}
	if os.Getenv("GOGC") == "" && a.embedded() {
		debug.SetGCPercent(importGCPercent)
	}
}

// embedded reports whether the database is SQLite, whose engine runs in
// this process.
func (a *app) embedded() bool {
	engine, err := database.Engine(a.cfg.DatabaseURL)
	return err == nil && engine == ledger.EngineSQLite
}
