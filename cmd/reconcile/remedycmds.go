package main

import (
	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/findings"
)

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
