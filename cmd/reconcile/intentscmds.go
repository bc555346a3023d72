package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
)

// newIntentsCmd corrects imported intents: amend an amount, void an intent,
// show one with its corrections.
func newIntentsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "intents",
		Short: "Correct imported intents (amend an amount, void one) and show their corrections",
		Long: `Undo a bad import without touching the database by hand. An intent is corrected only while
nothing depends on it: a charge or an expected payment (not a refund) that reconcile never sent to
its provider (its only attempts are imported ones), that no person matched a transaction to by
hand, and that no refund gives money back for. Each correction is kept with who made it, when and
why (intents show), and the findings it explains are resolved by the next run of their window: an
amount_mismatch once the amount is right, a missing_at_provider or stuck_intent once the intent is
void. docs/operations.md tells the whole recovery of a file imported in cents instead of shillings.`,
	}
	cmd.AddCommand(newIntentsAmendCmd(a), newIntentsVoidCmd(a), newIntentsShowCmd(a))
	return cmd
}

func newIntentsAmendCmd(a *app) *cobra.Command {
	var amount, note, actor string
	cmd := &cobra.Command{
		Use:   "amend KEY --amount A --note TEXT",
		Short: "Correct the amount of an imported intent",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if amount == "" {
				return usagef("intents amend %s: --amount is required", args[0])
			}
			return a.changeIntent(cmd, ledger.ChangeParams{Key: args[0], Action: ledger.IntentAmended, Note: note}, amount, actor)
		},
	}
	cmd.Flags().StringVar(&amount, "amount", "", "the right amount, in the intent's currency, in major units (required)")
	cmd.Flags().StringVar(&note, "note", "", "what was wrong (required)")
	addActorFlag(cmd, &actor)
	return cmd
}

func newIntentsVoidCmd(a *app) *cobra.Command {
	var note, actor string
	cmd := &cobra.Command{
		Use:   "void KEY --note TEXT",
		Short: "Void an intent that should never have been imported",
		Long: `Void an intent: it becomes failed (it announces nothing), and runs call it neither missing nor
stuck; money that moves for it all the same is still reported.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.changeIntent(cmd, ledger.ChangeParams{Key: args[0], Action: ledger.IntentVoided, Note: note}, "", actor)
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "why it should not exist (required)")
	addActorFlag(cmd, &actor)
	return cmd
}

// changeIntent applies a correction for the command line's actor and says
// what it did.
func (a *app) changeIntent(cmd *cobra.Command, p ledger.ChangeParams, amount, actor string) error {
	who, err := cliActor(actor)
	if err != nil {
		return err
	}
	verb := map[ledger.IntentChangeAction]string{ledger.IntentAmended: "amend", ledger.IntentVoided: "void"}[p.Action]
	return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
		p.Actor, p.Now = who, a.clock()
		in, c, err := ledger.ChangeIntent(ctx, d.Store, p, amount)
		var fe *ledger.FieldError
		switch {
		case errors.As(err, &fe):
			return usagef("intents %s %s: --%s %v", verb, p.Key, map[string]string{"amount": "amount", "note": "note", "actor": "actor"}[fe.Field], fe.Err)
		case errors.Is(err, ledger.ErrNotFound):
			return notFound("intent", p.Key, "findings list")
		case err != nil:
			return fmt.Errorf("intents %s %s: %w", verb, p.Key, err)
		}
		return report.WriteIntentChange(a.stdout, in, c)
	})
}

func newIntentsShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show KEY",
		Short: "Show an intent and the corrections made to it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, d *wiring.Parts) error {
				err := report.ShowIntent(ctx, a.stdout, d.Store, args[0])
				if errors.Is(err, ledger.ErrNotFound) {
					return notFound("intent", args[0], "findings list")
				}
				return err
			})
		},
	}
}
