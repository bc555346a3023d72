package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/wiring"
)

// eraseKeyEnv names the variable that holds the secret erasure tokens are
// computed with (books.erase_key).
const eraseKeyEnv = "RECONCILE_BOOKS_ERASE_KEY"

func newBooksCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "books",
		Short: "Move the books to another database, prune old payloads, erase a person",
		Long: `Work on the books as a whole: copy them to another database (from the embedded SQLite file to
PostgreSQL, to grow), remove raw payloads older than a retention, and erase a person's phone
number or e-mail address everywhere. See docs/operations.md.`,
	}
	cmd.AddCommand(newBooksCopyCmd(a), newBooksVerifyCmd(a), newBooksPruneCmd(a), newBooksEraseCmd(a))
	return cmd
}

func newBooksCopyCmd(a *app) *cobra.Command {
	var (
		to    string
		quiet bool
	)
	cmd := &cobra.Command{
		Use:   "copy --to URL",
		Short: "Copy the books into a new database and verify the copy",
		Long: `Copy every table of the books (intents, attempts, provider transactions and their sources,
runs, findings, history, quarantine, callbacks, alerts, events, manual links, River's jobs) from
the configured database (--database-url) into the database --to names (postgres://... or
sqlite:PATH), in bulk, from one consistent snapshot. The source is only read; it must be fully
migrated by this binary. The target is migrated to the same version first and must hold no row
of the books. Identity sequences continue after the source's.

At the end each table is read back from the target and compared with the source: row counts,
the sum of every amount column, and a checksum of the primary keys. The table of checks goes to
standard output; progress to standard error (--quiet for none). Any difference exits 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := database.Engine(to); err != nil {
				return usagef("--to: %v", err)
			}
			if database.Same(a.cfg.DatabaseURL, to) {
				return usagef("--to %s is the database the books are copied from", database.Redact(to))
			}
			var progress io.Writer = a.stderr
			if quiet {
				progress = nil
			}
			return wiring.CompareBooks(cmd.Context(), a.cfg, to, "copy to", a.stdout, func(ctx context.Context, src, dst ledger.Store) (*books.CopyReport, error) {
				rep, err := books.Copy(ctx, src, dst, books.CopyOptions{Progress: progress, Clock: a.clock})
				if err == nil {
					a.logger.Info("books copied", "from", src.Engine(), "to", database.Redact(to), "tables", len(rep.Tables),
						"rows", rep.Rows(), "duration", rep.Took.Round(time.Millisecond).String())
				}
				return rep, err
			})
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the database to copy into: postgres://... or sqlite:PATH (required)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "print no progress on standard error")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func newBooksVerifyCmd(a *app) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "verify --to URL",
		Short: "Compare the books with a copy of them, table by table",
		Long: `Check a copy made by books copy against the configured database again, as the copy did when it
finished: row counts, the sum of every amount column and a checksum of the primary keys of each
table. Both databases are only read. A difference (the source took writes since, or the copy
was changed) exits 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := database.Engine(to); err != nil {
				return usagef("--to: %v", err)
			}
			return wiring.CompareBooks(cmd.Context(), a.cfg, to, "verify", a.stdout, books.Verify)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the copy: postgres://... or sqlite:PATH (required)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func newBooksPruneCmd(a *app) *cobra.Command {
	var (
		before    string
		olderThan time.Duration
		dryRun    bool
		batch     int
	)
	cmd := &cobra.Command{
		Use:   "prune (--before DATE | --older-than DURATION) [--dry-run]",
		Short: "Remove raw payloads the books no longer need",
		Long: `Remove, from rows older than the cut, the raw payloads the books no longer need: the bodies
of provider transactions' sources (except those of transactions an open or acknowledged finding
names), the bodies of callbacks already interpreted, the raw input of quarantined items that
were dismissed or replayed, and the detail, suggestion and notes (history included) of findings
resolved before the cut. Amounts, ids, times and links stay: the books still reconcile to the
same findings. It works in batches of --batch rows, one transaction each; --dry-run counts what
would go and changes nothing.

--before takes a date (YYYY-MM-DD, UTC) or an RFC 3339 time; --older-than a duration back from
now (2160h for 90 days).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cut, err := books.PruneCut(before, olderThan, a.cfg.Books.Retention, a.clock())
			if err != nil {
				return err
			}
			if batch <= 0 {
				return usagef("--batch must be positive")
			}
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				start := a.clock()
				rep, err := books.Prune(ctx, d.Store, books.PruneOptions{Before: cut, DryRun: dryRun, Batch: batch})
				if err != nil {
					return err
				}
				if err := rep.WriteText(a.stdout); err != nil {
					return err
				}
				a.logger.Info("books pruned", "before", cut, "dry_run", dryRun, "rows", rep.Rows(),
					"duration", a.clock().Sub(start).Round(time.Millisecond).String())
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "prune payloads older than this date (YYYY-MM-DD, UTC) or RFC 3339 time")
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "prune payloads older than this long ago (e.g. 2160h)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "count what would go; change nothing")
	cmd.Flags().IntVar(&batch, "batch", books.DefaultPruneBatch, "rows looked at per transaction")
	return cmd
}

func newBooksEraseCmd(a *app) *cobra.Command {
	var (
		customer, actor, reason string
		dryRun                  bool
	)
	cmd := &cobra.Command{
		Use:   "erase --customer MSISDN|EMAIL --actor NAME [--reason TEXT]",
		Short: "Replace a person's phone number or e-mail address everywhere with a one-way token",
		Long: `Replace every form of a person's phone number (254712345678, +254..., 0712..., spaced, and
their SHA-256) or e-mail address, in every text, bytes and JSON column of every table, with a
token: "erased:" and the first 16 hex digits of HMAC-SHA256 under the secret in
` + eraseKeyEnv + ` (at least 16 bytes; keep it, and keep it the same: the same person then gets the same
token, so what named them still links up). Amounts, times and ids stay. The books are searched
again before the change is committed, and the erasure is recorded (who asked, why, when, and how
many values of each column changed) under the token. --dry-run counts and changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key := a.cfg.Books.EraseKey
			if err := books.CheckEraseKey(key, eraseKeyEnv); err != nil {
				return err
			}
			if strings.TrimSpace(actor) == "" {
				return usagef("--actor: say who asks for the erasure")
			}
			if _, err := books.ParseSubject(customer); err != nil {
				return usagef("--customer: %v", err)
			}
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				er, err := books.Erase(ctx, d.Store, books.EraseParams{Customer: customer, Actor: actor, Reason: reason,
					Key: []byte(key), Now: a.clock(), DryRun: dryRun})
				if err != nil {
					return err
				}
				if err := er.WriteText(a.stdout); err != nil {
					return err
				}
				a.logger.Info("books erased", "token", er.Token, "actor", actor, "dry_run", dryRun, "values", er.Values(),
					"columns", len(er.Changed), "renamed_findings", er.Renamed)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&customer, "customer", "", "the person's phone number (MSISDN) or e-mail address (required)")
	cmd.Flags().StringVar(&actor, "actor", "", "who asks for the erasure (required)")
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept with the record (a form of the person in it is replaced too)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "count what would change; change and record nothing")
	_ = cmd.MarkFlagRequired("customer")
	_ = cmd.MarkFlagRequired("actor")
	return cmd
}
