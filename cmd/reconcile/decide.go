package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// decisionCmds are the findings commands that record a person's decision:
// each is a thin adapter of the findings service, which applies the same
// rules as the console, the API and Slack.
func decisionCmds(a *app) []*cobra.Command {
	return []*cobra.Command{
		decisionCmd(a, findings.Acknowledge, "ack ID [--note TEXT]", "Acknowledge a finding: someone is looking at it", "", "what was done or found (optional)"),
		decisionCmd(a, findings.Resolve, "resolve ID --note TEXT", "Resolve a finding by hand, with a note saying what was done", "", "what was done (required)"),
		decisionCmd(a, findings.Reopen, "reopen ID --note TEXT", "Reopen a resolved finding, with a note saying why", "", "why it is reopened (required)"),
		decisionCmd(a, findings.Note, "note ID --note TEXT", "Add a note to a finding's history without changing its status", "", "the note (required)"),
		decisionCmd(a, findings.Match, "match UNKNOWN_ID --intent KEY --note TEXT",
			"Link the provider charge of an unknown_charge to an intent, resolving both findings",
			`Link the provider transaction of an unknown_charge finding to an intent by hand: the payer
typed the account number wrong, and the charge is that intent's payment. The link is recorded in
the books with who made it, the note and the time; the unknown_charge and the intent's
missing_at_provider are resolved, each with a "matched" event in its history; every later run
links the transaction to the intent first, so neither reopens.

Refused when the finding is not an unknown_charge, the intent is of another provider or
currency, or the transaction is already linked (by a provider reference an attempt recorded,
or by another manual link). A finding's suggestion names the intent to use.`, "why, kept in the history (required)"),
		decisionCmd(a, findings.Unmatch, "unmatch UNKNOWN_ID --note TEXT", "Undo a manual match: delete the link and reopen both findings",
			`Undo "findings match": the manual link of the unknown_charge's provider transaction is
deleted, and the unknown_charge and the intent's missing_at_provider are reopened, each with an
"unmatched" event in its history. The next run judges them again.`, "why, kept in the history (required)"),
	}
}

// decisionCmd is the command of one verb: ID, --note, --actor and, for a
// match, --intent.
func decisionCmd(a *app, verb findings.Verb, use, short, long, noteHelp string) *cobra.Command {
	var note, actor, intent string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			who, err := cliActor(actor)
			if err != nil {
				return err
			}
			d := findings.Decision{Verb: verb, FindingID: args[0], Actor: who, Note: note, IntentKey: intent}
			if err := d.Check(); err != nil {
				return decisionError(verb, args[0], err)
			}
			ctx := cmd.Context()
			deps, err := a.resolve(ctx, storeExisting)
			if err != nil {
				return err
			}
			out, err := deps.Findings.Decide(ctx, d)
			if err != nil {
				return decisionError(verb, args[0], err)
			}
			return findings.WriteDecision(a.stdout, verb, out)
		},
	}
	cmd.Flags().StringVar(&note, "note", "", noteHelp)
	if verb == findings.Match {
		cmd.Flags().StringVar(&intent, "intent", "", "the intent the transaction pays (required)")
	}
	addActorFlag(cmd, &actor)
	return cmd
}

// decisionError explains a refused decision: a rule or the books refusing
// it is a usage error (exit 2), a finding that does not exist or has moved
// on an error (exit 1).
func decisionError(verb findings.Verb, id string, err error) error {
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &fe):
		flag := ""
		switch {
		case fe.Field == "note":
			flag = "--note "
		case errors.Is(err, findings.ErrIntentRequired):
			flag = "--intent "
		}
		return usagef("findings %s %s: %s%v", verb, id, flag, fe.Err)
	case errors.Is(err, ledger.ErrNotFound):
		return notFound("finding", id, "findings list")
	case errors.Is(err, ledger.ErrConflict):
		return fmt.Errorf("findings %s %s: refused: %w", verb, id, err)
	}
	return err
}
