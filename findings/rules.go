package findings

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
)

// MaxNote bounds a note, in bytes.
const MaxNote = 4000

// The rules' refusals; each comes wrapped in a *ledger.FieldError naming
// the field at fault ("note", "intent"), so surfaces can tell them apart
// with errors.Is and name the field.
var (
	// ErrNoteRequired: every decision but acknowledge says what was done or
	// why.
	ErrNoteRequired = errors.New("is required: say what was done or why")
	// ErrNoteTooLong: a note is at most MaxNote bytes.
	ErrNoteTooLong = fmt.Errorf("longer than %d bytes", MaxNote)
	// ErrIntentRequired: a match names the intent the transaction pays.
	ErrIntentRequired = errors.New("is required: name the intent the transaction pays")
	// ErrIntentNotTaken: only a match takes an intent.
	ErrIntentNotTaken = errors.New("is taken by match only")
	// ErrRequestRequired: an approval or a rejection names the request.
	ErrRequestRequired = errors.New("is required: name the request awaiting approval")
)

// Refusals of accepting a suggestion: the pair the person saw is no longer
// the one to match.
var (
	// ErrSuggestionChanged: the finding no longer suggests the pair accepted
	// (a later run found a better one, or none).
	ErrSuggestionChanged = errors.New("the finding no longer suggests this match")
	// ErrResolved: the finding, or the other finding of the pair, is
	// resolved already.
	ErrResolved = errors.New("resolved already")
)

// Check applies the rules every decision meets, whichever surface it comes
// from, before anything is read or written; Decide applies them too, so a
// surface calls Check only to refuse a decision before it opens the books:
//
//   - the actor names someone, through a known surface (ledger.Actor.Validate);
//   - every decision but acknowledge and approve carries a note saying what
//     was done or why (accepting a suggestion writes its own when the
//     person gives none); a note is at most MaxNote bytes, spaces around it
//     trimmed;
//   - a match names an intent, and no other decision takes one;
//   - an approval or a rejection names its request, and no other decision
//     takes one; only a refund or a write-off takes an amount, only a
//     refund a payment.
//
// Which verbs apply to which kinds of finding is Remediable's rule; who may
// approve (anyone but the requester) and which amounts need approval
// (Approvals) are checked by Decide.
//
// Which status changes are allowed is the ledger's rule (ledger.TransitionTo),
// applied by the store compare-and-set in the decision's transaction.
func (d Decision) Check() error {
	_, err := d.normalize()
	return err
}

// normalize is d with its note and intent key trimmed, or the rule it
// breaks.
func (d Decision) normalize() (Decision, error) {
	if _, ok := ParseVerb(string(d.Verb)); !ok {
		return d, &ledger.FieldError{Field: "action", Err: fmt.Errorf("%q: want one of %s", d.Verb, verbNames())}
	}
	if err := d.Actor.Validate(); err != nil {
		return d, err
	}
	d.Note = strings.TrimSpace(d.Note)
	d.IntentKey = strings.TrimSpace(d.IntentKey)
	d.Amount = strings.TrimSpace(d.Amount)
	d.TxnID = strings.TrimSpace(d.TxnID)
	var err error
	switch {
	case len(d.Note) > MaxNote:
		err = &ledger.FieldError{Field: "note", Err: ErrNoteTooLong}
	case d.Note == "" && d.Verb != Acknowledge && d.Verb != Approve && d.Suggested == nil:
		err = &ledger.FieldError{Field: "note", Err: ErrNoteRequired}
	case d.Verb == Match && d.IntentKey == "":
		err = &ledger.FieldError{Field: "intent", Err: ErrIntentRequired}
	case d.Verb != Match && d.IntentKey != "":
		err = &ledger.FieldError{Field: "intent", Err: ErrIntentNotTaken}
	case d.Suggested != nil && (d.Verb != Match || d.Suggested.IntentKey != d.IntentKey):
		err = &ledger.FieldError{Field: "intent", Err: errors.New("a suggestion is accepted by a match of its intent")}
	case (d.Verb == Approve || d.Verb == Reject) && d.Remedy <= 0:
		err = &ledger.FieldError{Field: "request", Err: ErrRequestRequired}
	case d.Verb != Approve && d.Verb != Reject && d.Remedy != 0:
		err = &ledger.FieldError{Field: "request", Err: errors.New("is taken by approve and reject only")}
	case d.Verb != Refund && d.Verb != WriteOff && d.Amount != "":
		err = &ledger.FieldError{Field: "amount", Err: errors.New("is taken by refund and writeoff only")}
	case d.Verb != Refund && d.TxnID != "":
		err = &ledger.FieldError{Field: "txn", Err: errors.New("is taken by refund only")}
	}
	return d, err
}

// acceptedNote is the note of an accepted suggestion the person wrote
// nothing for.
func acceptedNote(s ledger.Suggestion) string {
	note := "suggested match accepted"
	if s.Reason != "" {
		note += " (" + s.Reason + ")"
	}
	return note
}
