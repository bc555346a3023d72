package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/wiring"
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

// decisionCmd is the command of one verb: ID, --note, --actor and what
// the verb takes besides: --intent for a match, --amount for a refund or
// a write-off, --txn for a refund, --request to approve or reject.
func decisionCmd(a *app, verb findings.Verb, use, short, long, noteHelp string) *cobra.Command {
	var note, actor, intent, amount, txn string
	var request int64
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.decide(cmd, findings.Decision{Verb: verb, FindingID: args[0], Note: note, IntentKey: intent,
				Amount: amount, TxnID: txn, Remedy: request}, actor)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&note, "note", "", noteHelp)
	switch verb {
	case findings.Match:
		fl.StringVar(&intent, "intent", "", "the intent the transaction pays (required)")
	case findings.Refund, findings.WriteOff:
		fl.StringVar(&amount, "amount", "", "how much, in the finding's currency (default: see above)")
	case findings.Approve, findings.Reject:
		fl.Int64Var(&request, "request", 0, "the request's number, as `findings show` lists it (required)")
	}
	if verb == findings.Refund {
		fl.StringVar(&txn, "txn", "", "the payment to give back (default: see above)")
	}
	addActorFlag(cmd, &actor)
	return cmd
}

// decide applies d for the command line's actor and prints what it did
// (findings.WriteOutcome); a request that expired is printed before the
// error saying so.
func (a *app) decide(cmd *cobra.Command, d findings.Decision, actor string) error {
	who, err := cliActor(actor)
	if err != nil {
		return err
	}
	d.Actor = who
	if err := d.Check(); err != nil {
		return decisionError(d.Verb, d.FindingID, err)
	}
	return a.with(cmd.Context(), wiring.Existing, func(ctx context.Context, deps *wiring.Parts) error {
		out, err := deps.Findings.Decide(ctx, d)
		return decisionError(d.Verb, d.FindingID, findings.WriteOutcome(a.stdout, d.Verb, out, err))
	})
}

// decisionError explains a refused decision: a rule or the books refusing
// it is a usage error (exit 2) naming the flag at fault; a finding that
// does not exist, has moved on, or a request that is not awaiting approval
// or expired, is an error (exit 1).
func decisionError(verb findings.Verb, id string, err error) error {
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &fe):
		flag := map[string]string{"note": "--note ", "amount": "--amount ", "txn": "--txn ", "request": "--request ", "actor": "--actor "}[fe.Field]
		if errors.Is(err, findings.ErrIntentRequired) {
			flag = "--intent "
		}
		return usagef("findings %s %s: %s%v", verb, id, flag, fe.Err)
	case errors.Is(err, ledger.ErrNotFound):
		return notFound("finding", id, "findings list")
	case errors.Is(err, ledger.ErrConflict), errors.Is(err, findings.ErrRequestExpired), errors.Is(err, findings.ErrNotWaiting):
		return fmt.Errorf("findings %s %s: refused: %w", verb, id, err)
	}
	return err
}

// remedyCmds are the findings commands that fix a finding (refund,
// writeoff, retry, cancel) and that decide a request awaiting a second
// person (approve, reject): thin adapters of the findings service, like
// decisionCmds.
func remedyCmds(a *app) []*cobra.Command {
	return []*cobra.Command{
		decisionCmd(a, findings.Refund, "refund ID --note TEXT [--amount A] [--txn TXN]",
			"Refund the excess of a duplicate_charge or an overpaid finding",
			`Give back the money a duplicate_charge or an overpaid finding shows taken too many times: a
refund intent (refund:ID:TXN) of the payment that is too many, sent by the refund jobs of
`+"`reconcile serve`"+` when the provider can send refunds (else recorded for the refund made at the
provider by hand). For a duplicate charge it is the duplicate, not the charge that pays the intent,
for its whole amount; for an overpayment, the last payment, for the excess. --txn picks another
payment of the finding and --amount asks for less.

The finding is not resolved now: a run resolves it when it sees the money given back, and says so
in its history. Above approvals.thresholds the refund waits for another operator to approve it
(`+"`findings approve`"+`). A second refund of the same payment is refused.`, "what is done and why (required)"),
		decisionCmd(a, findings.WriteOff, "writeoff ID --note TEXT [--amount A]",
			"Write off a small difference: resolve the finding with the amount and the reason",
			`Resolve an amount_mismatch, an underpaid or a fee finding by writing its difference off: the
amount (its money at risk, or --amount, at most that), the reason (--note) and who are recorded,
and write-offs are summed in the close report. Above approvals.thresholds it waits for another
operator to approve it.`, "what is done and why (required)"),
		decisionCmd(a, findings.Retry, "retry ID --note TEXT",
			"Queue the charge of a stuck_intent again, where its provider allows it",
			`Queue the charge job of a stuck intent again: a pending intent (its job gave up or never ran),
a processing one whose worker died (the job resumes from the recorded attempt), or an unknown one
whose provider honours idempotency keys or can be asked about the attempt by the request id it
recorded. An M-Pesa prompt whose request id was never recorded is never sent again: a statement
or a pull settles it. A run resolves the finding once the outcome is known.`, "what is done and why (required)"),
		decisionCmd(a, findings.Cancel, "cancel ID --note TEXT",
			"Cancel a stuck_intent that never reached its provider, resolving the finding",
			`Fail a stuck pending intent none of whose attempts reached the provider (its charge.failed event
is sent) and resolve the finding. An intent that may have reached its provider (processing,
unknown) is refused: money may have moved.`, "what is done and why (required)"),
		decisionCmd(a, findings.Approve, "approve ID --request N [--note TEXT]",
			"Approve a refund or write-off awaiting a second person, carrying it out",
			`Approve request N of finding ID (a refund or a write-off above approvals.thresholds): it is
carried out now, with who approved it and when in the history. The person who asked cannot approve
it; an expired request is marked expired and does nothing.`, "why (optional)"),
		decisionCmd(a, findings.Reject, "reject ID --request N --note TEXT",
			"Reject a request awaiting a second person: nothing is done",
			`Reject request N of finding ID: nothing is done, and the rejection, with who and why, is kept in
the history.`, "why (required)"),
	}
}
