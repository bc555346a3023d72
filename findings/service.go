package findings

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// Verb is a decision a person takes on a finding.
type Verb string

// Verbs. To add one: a constant here, its rule in Check, its write in
// Decide, and each surface maps its button, route or command to it.
const (
	// Acknowledge: someone is looking at it (open or acknowledged).
	Acknowledge Verb = "ack"
	// Resolve it by hand (open or acknowledged); its follow-up is announced.
	Resolve Verb = "resolve"
	// Reopen a resolved finding.
	Reopen Verb = "reopen"
	// Note adds a note to its history without changing its status.
	Note Verb = "note"
	// Match links an unknown_charge's transaction to an intent, resolving
	// it and the intent's missing_at_provider.
	Match Verb = "match"
	// Unmatch undoes a manual match, reopening both findings.
	Unmatch Verb = "unmatch"
	// Refund gives back the excess of a duplicate_charge or an overpaid: a
	// refund intent for the payment that is too many (the duplicate, not
	// the original; the last payment of an overpayment), sent by the refund
	// jobs. The finding stays open until a run sees the money go back.
	Refund Verb = "refund"
	// WriteOff resolves an amount_mismatch, an underpaid or a fee finding
	// with the difference written off (at most its money at risk).
	WriteOff Verb = "writeoff"
	// Retry queues a stuck_intent's charge again, where its provider
	// allows it.
	Retry Verb = "retry"
	// Cancel fails a stuck_intent that never reached its provider and
	// resolves the finding.
	Cancel Verb = "cancel"
	// Approve carries out a request awaiting a second person (a refund or a
	// write-off above its currency's threshold); never its requester's.
	Approve Verb = "approve"
	// Reject refuses such a request: nothing is done.
	Reject Verb = "reject"
)

var verbs = []Verb{Acknowledge, Resolve, Reopen, Note, Match, Unmatch, Refund, WriteOff, Retry, Cancel, Approve, Reject}

// remedies are the verbs that fix a finding through a remedy.
var remedies = []Verb{Refund, WriteOff, Retry, Cancel}

// IsRemedy reports whether v fixes a finding through a remedy (refund,
// writeoff, retry, cancel).
func IsRemedy(v Verb) bool { return slices.Contains(remedies, v) }

// ParseVerb validates s as a Verb.
func ParseVerb(s string) (Verb, bool) {
	for _, v := range verbs {
		if string(v) == s {
			return v, true
		}
	}
	return "", false
}

func verbNames() string {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// Decision is one person's decision on one finding, from any surface.
type Decision struct {
	Verb      Verb
	FindingID string
	// Actor is who decides, and through which surface (cli, web, api,
	// slack).
	Actor ledger.Actor
	Note  string
	// IntentKey is the intent a Match links the finding's transaction to.
	IntentKey string
	// Suggested, for a Match, is the suggestion the person accepted: the
	// match is applied only while the finding still suggests exactly it (the
	// intent, the transaction and the other finding) and neither finding of
	// the pair is resolved; otherwise ErrSuggestionChanged or ErrResolved.
	Suggested *ledger.Suggestion
	// Once, when set, is the decision's identity (a Slack action's): it is
	// claimed in the transaction that applies the decision, so a repeat of
	// it, on any replica, changes nothing and says so (Outcome.Repeat).
	Once string
	// Amount is how much a Refund or a WriteOff moves, in the finding's
	// currency ("20.00"); empty for the default (the duplicate's amount,
	// the excess, the money at risk).
	Amount string
	// TxnID is the payment a Refund gives back; empty for the default.
	TxnID string
	// Remedy is the request an Approve or a Reject decides.
	Remedy int64
}

// Outcome is what a decision did: what the surface shows, and what the
// follow-ups need (the findings to redraw, the link made).
type Outcome struct {
	// Finding is the finding decided on as it now stands; when the store
	// refused the change (ledger.ErrConflict), as it stood.
	Finding ledger.Finding
	// Changed are the findings the decision wrote to, the one decided on
	// first (a match or unmatch also writes to the intent's
	// missing_at_provider).
	Changed []ledger.Finding
	// Resolved are the findings it resolved; each was announced in the
	// decision's transaction.
	Resolved []ledger.Finding
	// Link is the manual link a Match made or an Unmatch removed.
	Link *ledger.ManualLink
	// Repeat is true when Once had been claimed before: nothing changed.
	Repeat bool
	// Remedy is the remedy a remedy verb recorded (awaiting approval, or
	// applied), or the request an Approve or a Reject decided.
	Remedy *ledger.Remedy
	// Intent is the intent a remedy acted on: the refund intent created,
	// the intent retried or cancelled.
	Intent *ledger.Intent
}

// Waiting reports whether the decision left a request awaiting a second
// person's approval.
func (out Outcome) Waiting() bool {
	return out.Remedy != nil && out.Remedy.Status == ledger.RemedyAwaitingApproval
}

// Announcer plans the follow-up of a finding a person resolved, in the
// resolving transaction (the Slack message in the finding's thread).
type Announcer func(ctx context.Context, tx ledger.Tx, f ledger.Finding) error

// Service applies people's decisions on findings: every surface (the
// command line, the console, the API, Slack) decides through it, so the
// rules are the same everywhere and each decision writes its change and
// its history event in one transaction.
type Service struct {
	store       ledger.Transactor
	announce    Announcer
	announceReq RemedyAnnouncer
	payments    Payments
	approvals   Approvals
	clock       func() time.Time
}

// Options tune a Service.
type Options struct {
	// Announce, when set, plans the follow-up of every finding a decision
	// resolves.
	Announce Announcer
	// AnnounceRemedy, when set, plans what people hear of a request
	// awaiting approval and of its approval, rejection or expiry.
	AnnounceRemedy RemedyAnnouncer
	// Payments creates refunds and retries or cancels stuck intents; nil
	// refuses those verbs (ErrNoPayments).
	Payments Payments
	// Approvals say which refunds and write-offs need a second person.
	Approvals Approvals
	// Clock stamps the history (nil: time.Now).
	Clock func() time.Time
}

// NewService returns the service deciding over store.
func NewService(store ledger.Transactor, opt Options) *Service {
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	if opt.Approvals.ExpireAfter <= 0 {
		opt.Approvals.ExpireAfter = DefaultApprovalExpiry
	}
	return &Service{store: store, announce: opt.Announce, announceReq: opt.AnnounceRemedy, payments: opt.Payments,
		approvals: opt.Approvals, clock: opt.Clock}
}

// Approvals returns the service's approval rules.
func (s *Service) Approvals() Approvals { return s.approvals }

// Decide applies d: it checks the rules, then in one transaction claims
// d.Once (when set), writes the change with its history event and
// announces what it resolved. Refusals: a *ledger.FieldError for a rule
// (wrapping ErrNoteRequired, ErrNoteTooLong, ErrIntentRequired, ...);
// ledger.ErrNotFound for no such finding; ledger.ErrConflict when the
// finding's status does not allow the change (Outcome.Finding says which it
// is) or the transaction is already linked; ErrSuggestionChanged or
// ErrResolved for a suggestion that no longer stands.
func (s *Service) Decide(ctx context.Context, d Decision) (Outcome, error) {
	var out Outcome
	d, err := d.normalize()
	if err != nil {
		return out, err
	}
	now := s.clock().UTC()
	// A refusal recorded in the books (an expired request marked so) is
	// returned after its transaction commits.
	var after error
	err = s.store.InTx(ctx, func(tx ledger.Tx) error {
		out, after = Outcome{}, nil
		if d.Once != "" {
			fresh, err := tx.ClaimInteraction(ctx, d.Once, now)
			if err != nil {
				return err
			}
			if !fresh {
				out.Repeat = true
				out.Finding, err = tx.GetFinding(ctx, d.FindingID)
				return err
			}
		}
		return s.apply(ctx, tx, d, now, &out, &after)
	})
	if err == nil {
		err = after
	}
	return out, err
}

// apply writes d in tx.
func (s *Service) apply(ctx context.Context, tx ledger.Tx, d Decision, now time.Time, out *Outcome, after *error) error {
	resolved := func(ctx context.Context, tx ledger.Tx, f ledger.Finding) error {
		out.Resolved = append(out.Resolved, f)
		if s.announce == nil {
			return nil
		}
		return s.announce(ctx, tx, f)
	}
	switch d.Verb {
	case Acknowledge, Resolve, Reopen:
		to := map[Verb]ledger.FindingStatus{Acknowledge: ledger.FindingAcknowledged, Resolve: ledger.FindingResolved,
			Reopen: ledger.FindingOpen}[d.Verb]
		f, err := tx.UpdateFinding(ctx, ledger.FindingUpdate{ID: d.FindingID, To: to, Note: d.Note, Now: now, Actor: d.Actor})
		out.Finding = f
		if err != nil {
			return err
		}
		out.Changed = []ledger.Finding{f}
		if to == ledger.FindingResolved {
			return resolved(ctx, tx, f)
		}
		return nil
	case Note:
		f, err := tx.NoteFinding(ctx, ledger.FindingNote{ID: d.FindingID, Actor: d.Actor, Note: d.Note, Now: now})
		out.Finding = f
		if err != nil {
			return err
		}
		out.Changed = []ledger.Finding{f}
		return nil
	case Match:
		unknown := d.FindingID
		if d.Suggested != nil {
			var err error
			if unknown, err = s.stillSuggested(ctx, tx, &d, out); err != nil {
				return err
			}
		}
		m, err := ledger.MatchInTx(ctx, tx, ledger.MatchParams{FindingID: unknown, IntentKey: d.IntentKey, Actor: d.Actor,
			Note: d.Note, Now: now, OnResolved: resolved})
		if err != nil {
			return err
		}
		out.took(d.FindingID, m)
		return nil
	case Unmatch:
		m, err := ledger.UnmatchInTx(ctx, tx, ledger.UnmatchParams{FindingID: d.FindingID, Actor: d.Actor, Note: d.Note, Now: now})
		if err != nil {
			return err
		}
		out.took(d.FindingID, m)
		return nil
	case Refund, WriteOff, Retry, Cancel:
		return s.remedy(ctx, tx, d, now, out)
	case Approve, Reject:
		return s.decideRequest(ctx, tx, d, now, out, after)
	}
	return fmt.Errorf("findings: %s: no such decision", d.Verb)
}

// took records what a match or unmatch did, the finding decided on first.
func (out *Outcome) took(id string, m ledger.MatchOutcome) {
	link := m.Link
	out.Link = &link
	for _, f := range m.Findings {
		if f.ID == id {
			out.Finding = f
			out.Changed = append([]ledger.Finding{f}, out.Changed...)
		} else {
			out.Changed = append(out.Changed, f)
		}
	}
}

// stillSuggested checks that the finding decided on still suggests the
// pair d accepts and that neither finding of it is resolved, and returns
// the unknown_charge of the pair; it fills in the note when the person
// wrote none.
func (s *Service) stillSuggested(ctx context.Context, tx ledger.Tx, d *Decision, out *Outcome) (string, error) {
	f, err := tx.GetFinding(ctx, d.FindingID)
	if err != nil {
		return "", err
	}
	out.Finding = f
	if f.Status == ledger.FindingResolved {
		return "", ErrResolved
	}
	sg, want := f.Suggestion, d.Suggested
	if sg.IntentKey != want.IntentKey || sg.TxnID != want.TxnID || sg.FindingID != want.FindingID {
		return "", ErrSuggestionChanged
	}
	pair, err := tx.GetFinding(ctx, sg.FindingID)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return "", ErrSuggestionChanged
	case err != nil:
		return "", err
	case pair.Status == ledger.FindingResolved:
		return "", fmt.Errorf("finding %s, the other half of the pair, is %w", pair.ID, ErrResolved)
	}
	if d.Note == "" {
		d.Note = acceptedNote(sg)
	}
	if f.Kind == ledger.KindUnknownCharge {
		return f.ID, nil
	}
	return pair.ID, nil
}
