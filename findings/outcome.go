package findings

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
)

// WriteDecision says what a decision (verb) did, for the person who took
// it: the link a match made or an unmatch removed, then each finding it
// wrote to with its status.
func WriteDecision(w io.Writer, verb Verb, out Outcome) error {
	var b strings.Builder
	switch l := out.Link; {
	case verb == Match:
		fmt.Fprintf(&b, "matched provider txn %s with intent %s\n", l.TxnID, l.IntentKey)
	case verb == Unmatch:
		fmt.Fprintf(&b, "unmatched provider txn %s from intent %s\n", l.TxnID, l.IntentKey)
	}
	for _, f := range out.Changed {
		suffix := ""
		if verb == Note {
			suffix = ", noted"
		}
		fmt.Fprintf(&b, "%s %s: %s%s\n", ledger.SafeLine(f.ID, 128), f.Kind, f.Status, suffix)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRemedy says what a remedy decision did, for the person who took it:
// the request and what became of it, the intent it acted on, and the
// finding as it now stands. An outcome without a remedy writes nothing.
func WriteRemedy(w io.Writer, out Outcome) error {
	r := out.Remedy
	if r == nil {
		return nil
	}
	var b strings.Builder
	switch r.Status {
	case ledger.RemedyAwaitingApproval:
		fmt.Fprintf(&b, "request %d: %s awaits approval by another operator until %s\n", r.ID, r.Describe(),
			r.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
	case ledger.RemedyRejected:
		fmt.Fprintf(&b, "request %d: %s rejected by %s; nothing was done\n", r.ID, r.Describe(), r.DecidedBy)
	case ledger.RemedyExpired:
		fmt.Fprintf(&b, "request %d: %s expired unapproved; nothing was done\n", r.ID, r.Describe())
	default:
		line := strconv.FormatInt(r.ID, 10) + ": " + r.Describe() + " applied"
		if r.DecidedBy != "" {
			line += " (asked by " + r.RequestedBy + ", approved by " + r.DecidedBy + ")"
		}
		fmt.Fprintf(&b, "request %s\n", line)
	}
	if in := out.Intent; in != nil {
		switch r.Kind {
		case ledger.RemedyRefund:
			fmt.Fprintf(&b, "refund %s of %s for %s: %s\n", in.Key, ledger.ShowAmount(in.Amount), r.TxnID, in.State)
		default:
			fmt.Fprintf(&b, "intent %s: %s\n", in.Key, in.State)
		}
	}
	f := out.Finding
	suffix := ""
	if r.Kind == ledger.RemedyRefund && r.Status == ledger.RemedyApplied && f.Status != ledger.FindingResolved {
		suffix = " (resolved when a run sees the money given back)"
	}
	fmt.Fprintf(&b, "%s %s: %s%s\n", ledger.SafeLine(f.ID, 128), f.Kind, f.Status, suffix)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteOutcome writes what deciding (verb) did, given what Service.Decide
// returned: a remedy, an approval or a rejection as its request stands
// (WriteRemedy), any other decision as WriteDecision says it. A decision
// that failed writes nothing and returns its error, except a request that
// expired, which is written before its error is returned.
func WriteOutcome(w io.Writer, verb Verb, out Outcome, err error) error {
	if out.Remedy != nil && errors.Is(err, ErrRequestExpired) {
		if werr := WriteRemedy(w, out); werr != nil {
			return werr
		}
	}
	switch {
	case err != nil:
		return err
	case IsRemedy(verb), verb == Approve, verb == Reject:
		return WriteRemedy(w, out)
	}
	return WriteDecision(w, verb, out)
}
