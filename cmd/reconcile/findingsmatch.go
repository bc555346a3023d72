package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger"
)

// Manual matching: a person says that the provider transaction of an
// unknown_charge is the payment of an intent (usually the one its
// suggestion names). The link is kept in the books and every later run
// links them first; unmatch undoes it.

func newFindingsMatchCmd(a *app) *cobra.Command {
	var key, note, actor string
	cmd := &cobra.Command{
		Use:   "match UNKNOWN_ID --intent KEY",
		Short: "Link the provider charge of an unknown_charge to an intent, resolving both findings",
		Long: `Link the provider transaction of an unknown_charge finding to an intent by hand: the payer
typed the account number wrong, and the charge is that intent's payment. The link is recorded in
the books with who made it, the note and the time; the unknown_charge and the intent's
missing_at_provider are resolved, each with a "matched" event in its history; every later run
links the transaction to the intent first, so neither reopens.

Refused when the finding is not an unknown_charge, the intent is of another provider or
currency, or the transaction is already linked (by a provider reference an attempt recorded,
or by another manual link). A finding's suggestion names the intent to use.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(key) == "" {
				return usagef("match needs --intent KEY")
			}
			ctx := cmd.Context()
			s, who, err := a.acting(ctx, actor)
			if err != nil {
				return err
			}
			out, err := ledger.MatchManually(ctx, s, ledger.MatchParams{FindingID: args[0], IntentKey: key, Actor: who, Note: note, Now: a.clock(),
				OnResolved: a.announceResolution})
			if err != nil {
				return matchError(args[0], "match", err)
			}
			fmt.Fprintf(a.stdout, "matched provider txn %s with intent %s\n", out.Link.TxnID, out.Link.IntentKey)
			for _, f := range out.Findings {
				fmt.Fprintf(a.stdout, "%s %s: %s\n", f.ID, f.Kind, f.Status)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "intent", "", "the intent the transaction pays (required)")
	cmd.Flags().StringVar(&note, "note", "", "why, kept in the history")
	addActorFlag(cmd, &actor)
	return cmd
}

func newFindingsUnmatchCmd(a *app) *cobra.Command {
	var note, actor string
	cmd := &cobra.Command{
		Use:   "unmatch UNKNOWN_ID",
		Short: "Undo a manual match: delete the link and reopen both findings",
		Long: `Undo "findings match": the manual link of the unknown_charge's provider transaction is
deleted, and the unknown_charge and the intent's missing_at_provider are reopened, each with an
"unmatched" event in its history. The next run judges them again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, who, err := a.acting(ctx, actor)
			if err != nil {
				return err
			}
			out, err := ledger.UnmatchManually(ctx, s, ledger.UnmatchParams{FindingID: args[0], Actor: who, Note: note, Now: a.clock()})
			if err != nil {
				return matchError(args[0], "unmatch", err)
			}
			fmt.Fprintf(a.stdout, "unmatched provider txn %s from intent %s\n", out.Link.TxnID, out.Link.IntentKey)
			for _, f := range out.Findings {
				fmt.Fprintf(a.stdout, "%s %s: %s\n", f.ID, f.Kind, f.Status)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "why, kept in the history")
	addActorFlag(cmd, &actor)
	return cmd
}

// matchError explains a refused match or unmatch.
func matchError(id, verb string, err error) error {
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &fe):
		return usagef("findings %s %s: %v", verb, id, fe.Err)
	case errors.Is(err, ledger.ErrNotFound):
		return notFound("finding", id, "findings list")
	case errors.Is(err, ledger.ErrConflict):
		return fmt.Errorf("findings %s %s: refused: %w", verb, id, err)
	}
	return err
}
