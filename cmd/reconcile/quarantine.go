package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

func newQuarantineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "Inspect rejected input kept for audit",
		Long: `Input reconcile refused (a bad row of an imported file, a callback body it could not read, a
body from an address outside the allowlist) is kept in the quarantine with the file, line, field
and reason. Nothing is dropped silently. An item stays kept until someone dismisses it (with a
note) or replays it; both are recorded with who and when.`,
	}
	var (
		source, format string
		limit          int
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List quarantined input, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := formatOf(format)
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				items, err := d.Store.ListQuarantine(ctx, source, limit)
				if err != nil {
					return err
				}
				return report.WriteQuarantine(a.stdout, f, items)
			})
		},
	}
	list.Flags().StringVar(&source, "source", "", "only this input path (intents_csv, mpesa_statement, mpesa_callback, ...)")
	list.Flags().IntVar(&limit, "limit", 100, "at most this many")
	list.Flags().StringVar(&format, "format", "text", "text, json or csv (json and csv include the raw input)")
	cmd.AddCommand(list)
	cmd.AddCommand(quarantineActCmds(a)...)
	return cmd
}

// quarantineActCmds are show, dismiss and replay.
func quarantineActCmds(a *app) []*cobra.Command {
	return []*cobra.Command{newQuarantineShowCmd(a), newQuarantineDismissCmd(a), newQuarantineReplayCmd(a)}
}

func newQuarantineShowCmd(a *app) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a quarantined item: its reason, its input (masked) and its history",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := formatOf(format)
			id, err := parseQuarantineID(args[0])
			if err != nil {
				return err
			}
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, d *wiring.Parts) error {
				return quarantineActionError(args[0], "show", findings.ShowQuarantineItem(ctx, a.stdout, f, d.Store, id))
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, json or csv (csv: the history)")
	return cmd
}

func parseQuarantineID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("quarantine id %q: want a positive number (see `reconcile quarantine list`)", s)
	}
	return id, nil
}

func quarantineActionError(id, verb string, err error) error {
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return notFound("quarantined item", id, "quarantine list")
	case errors.Is(err, ledger.ErrConflict):
		return fmt.Errorf("quarantine %s %s: %w", verb, id, err)
	}
	return err
}

func newQuarantineDismissCmd(a *app) *cobra.Command {
	var note, actor string
	cmd := &cobra.Command{
		Use:   "dismiss ID --note TEXT",
		Short: "Dismiss a quarantined item, with a note saying why it needs nothing more",
		Long: `Dismiss a quarantined item that needs nothing more (test traffic, a row fixed and imported
again). The item and its raw input stay; the dismissal is recorded with who, when and the note.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseQuarantineID(args[0])
			if err != nil {
				return err
			}
			if strings.TrimSpace(note) == "" {
				return usagef("dismiss needs --note saying why")
			}
			who, err := cliActor(actor)
			if err != nil {
				return err
			}
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, d *wiring.Parts) error {
				q, err := d.Store.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: id, To: ledger.QuarantineDismissed, Actor: who, Note: note, Now: a.clock()})
				if err != nil {
					return quarantineActionError(args[0], "dismiss", err)
				}
				fmt.Fprintf(a.stdout, "quarantine %d (%s): %s\n", q.ID, q.Source, q.Status)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "why it needs nothing more (required)")
	addActorFlag(cmd, &actor)
	return cmd
}

func newQuarantineReplayCmd(a *app) *cobra.Command {
	var note, actor string
	cmd := &cobra.Command{
		Use:   "replay ID",
		Short: "Submit a quarantined item's raw input again through the path it came from",
		Long: `Submit a quarantined callback body again through the same parser and intake as the HTTP
endpoint or callbacks import it came from, after what refused it was fixed (an upgrade, a
configuration change). It is checked first: if it is still refused, nothing is stored and the
reason is printed. Rows of intents and statement files cannot be replayed alone (they are read
with their file's header); fix the file and import it again, then dismiss the item.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseQuarantineID(args[0])
			if err != nil {
				return err
			}
			who, err := cliActor(actor)
			if err != nil {
				return err
			}
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, d *wiring.Parts) error {
				q, res, err := d.ReplayKept(ctx, id, who, note)
				if errors.Is(err, ledger.ErrNotFound) {
					return notFound("quarantined item", args[0], "quarantine list")
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "quarantine %d (%s): %s: %s\n", q.ID, q.Source, q.Status, res)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "what was fixed (optional)")
	addActorFlag(cmd, &actor)
	return cmd
}
