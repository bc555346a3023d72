package findings

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Payments is what the remedies need of the charge service: creating a
// refund intent with its job, retrying and cancelling a stuck intent, each
// in the decision's transaction. *charge.Service has it.
type Payments interface {
	// CreateIntentTx creates the refund intent and queues its refund job
	// when its provider can send refunds.
	CreateIntentTx(ctx context.Context, tx ledger.Tx, n ledger.NewIntent) (ledger.Intent, bool, error)
	// CanRefund reports whether refunds of provider are sent from here
	// (else the refund intent is recorded for the refund made by hand).
	CanRefund(provider string) bool
	// RetryTx queues the intent's job again; CancelTx fails a pending
	// intent that never reached its provider. Both refuse, with a
	// *ledger.FieldError on "state", what the intent's state or provider
	// does not allow.
	RetryTx(ctx context.Context, tx ledger.Tx, key string, tag int64) (ledger.Intent, error)
	CancelTx(ctx context.Context, tx ledger.Tx, key string) (ledger.Intent, error)
}

// Approvals say which remedies need a second person: a refund or a
// write-off of more than its currency's threshold waits, as a request, for
// another operator to approve it, for at most ExpireAfter.
type Approvals struct {
	// Thresholds by currency (ISO 4217); a currency without one needs no
	// approval.
	Thresholds map[string]decimal.Decimal
	// ExpireAfter is how long a request waits; default DefaultApprovalExpiry.
	ExpireAfter time.Duration
}

// DefaultApprovalExpiry is how long a request waits for its approval when
// Approvals sets nothing.
const DefaultApprovalExpiry = 24 * time.Hour

// Needs reports whether a remedy of amount needs a second person.
func (a Approvals) Needs(amount money.Amount) bool {
	t, ok := a.Thresholds[amount.Currency]
	return ok && !amount.IsZero() && amount.Value.GreaterThan(t)
}

// RemedyAnnouncer plans what people hear of a remedy, in its transaction:
// a request that awaits approval (the Slack message with Approve and
// Reject), and what became of it.
type RemedyAnnouncer func(ctx context.Context, tx ledger.Tx, r ledger.Remedy, f ledger.Finding) error

// Refusals of remedies, each wrapped in a *ledger.FieldError naming the
// field at fault, or returned as they are.
var (
	// ErrKindNotRemedied: the verb does not apply to the finding's kind
	// (a refund of an amount_mismatch, a retry of a duplicate).
	ErrKindNotRemedied = errors.New("does not apply to this kind of finding")
	// ErrNoPayments: refunds, retries and cancels need the charge service,
	// which this surface was not given.
	ErrNoPayments = errors.New("refunds, retries and cancels are not available here")
	// ErrOwnRequest: the person who asked for a remedy cannot approve it.
	ErrOwnRequest = errors.New("the person who asked for it cannot approve it: another operator must")
	// ErrRequestExpired: a request nobody approved in time; it is marked
	// expired and changes nothing.
	ErrRequestExpired = errors.New("the request has expired: ask again")
	// ErrNotWaiting: the request was approved, rejected or expired already.
	ErrNotWaiting = errors.New("the request is not awaiting approval")
)

// writeOffKinds are the findings whose difference may be written off; any
// kind about fees is one too.
var writeOffKinds = []ledger.Kind{ledger.KindAmountMismatch, ledger.KindUnderpaid}

// Remediable reports whether verb applies to findings of kind: refund to
// duplicate_charge and overpaid, writeoff to amount_mismatch, underpaid and
// fee findings, retry and cancel to stuck_intent; the other verbs to every
// kind.
func Remediable(verb Verb, kind ledger.Kind) bool {
	switch verb {
	case Refund:
		return kind == ledger.KindDuplicateCharge || kind == ledger.KindOverpaid
	case WriteOff:
		return slices.Contains(writeOffKinds, kind) || strings.Contains(string(kind), "fee")
	case Retry, Cancel:
		return kind == ledger.KindStuckIntent
	}
	return true
}

// remedyKind is the remedy a verb records.
var remedyKind = map[Verb]ledger.RemedyKind{Refund: ledger.RemedyRefund, WriteOff: ledger.RemedyWriteOff,
	Retry: ledger.RemedyRetry, Cancel: ledger.RemedyCancel}

// remedy plans and applies (or, above the threshold, requests) the remedy
// of d on its finding, in tx.
func (s *Service) remedy(ctx context.Context, tx ledger.Tx, d Decision, now time.Time, out *Outcome) error {
	f, err := tx.GetFinding(ctx, d.FindingID)
	out.Finding = f
	if err != nil {
		return err
	}
	if !Remediable(d.Verb, f.Kind) {
		return &ledger.FieldError{Field: "action", Err: fmt.Errorf("%s %w (%s)", d.Verb, ErrKindNotRemedied, f.Kind)}
	}
	if f.Status == ledger.FindingResolved {
		return fmt.Errorf("findings: %s %s: %w: finding is %s", d.Verb, f.ID, ledger.ErrConflict, f.Status)
	}
	if d.Verb != WriteOff && s.payments == nil {
		return &ledger.FieldError{Field: "action", Err: ErrNoPayments}
	}
	r := ledger.Remedy{FindingID: f.ID, Kind: remedyKind[d.Verb], Status: ledger.RemedyApplied, Provider: f.Provider,
		IntentKey: f.IntentKey, Note: d.Note, RequestedBy: d.Actor.Name, RequestedVia: d.Actor.Surface, RequestedAt: now}
	switch d.Verb {
	case Refund:
		if r.TxnID, r.Amount, err = s.refundPlan(ctx, tx, f, d); err != nil {
			return err
		}
	case WriteOff:
		if r.Amount, err = writeOffAmount(f, d.Amount); err != nil {
			return err
		}
	case Retry, Cancel:
		if f.IntentKey == "" {
			return &ledger.FieldError{Field: "intent", Err: errors.New("the finding names no intent")}
		}
		if d.Amount != "" {
			return &ledger.FieldError{Field: "amount", Err: fmt.Errorf("a %s takes no amount", d.Verb)}
		}
	}
	if s.approvals.Needs(r.Amount) {
		r.Status, r.ExpiresAt = ledger.RemedyAwaitingApproval, now.Add(s.approvals.ExpireAfter)
		stored, err := tx.AddRemedy(ctx, r)
		if err != nil {
			return remedyConflict(r, err)
		}
		out.Remedy = &stored
		if err := s.event(ctx, tx, f.ID, ledger.ActionRequested, d.Actor, now, fmt.Sprintf("%s awaits approval by another operator until %s: %s",
			stored.Describe(), stored.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"), stored.Note)); err != nil {
			return err
		}
		out.Changed = []ledger.Finding{f}
		return s.announceRemedy(ctx, tx, stored, f)
	}
	stored, err := tx.AddRemedy(ctx, r)
	if err != nil {
		return remedyConflict(r, err)
	}
	return s.execute(ctx, tx, stored, f, d.Actor, now, out)
}

// decideRequest approves or rejects the request d.Remedy of d's finding.
// An expired request is marked so and changes nothing else; the refusal
// (ErrRequestExpired) is returned after that mark commits, through expired.
func (s *Service) decideRequest(ctx context.Context, tx ledger.Tx, d Decision, now time.Time, out *Outcome, expired *error) error {
	r, err := tx.GetRemedy(ctx, d.Remedy)
	if errors.Is(err, ledger.ErrNotFound) || (err == nil && r.FindingID != d.FindingID) {
		return &ledger.FieldError{Field: "request", Err: fmt.Errorf("finding %s has no request %d", d.FindingID, d.Remedy)}
	}
	if err != nil {
		return err
	}
	out.Remedy = &r
	f, err := tx.GetFinding(ctx, r.FindingID)
	out.Finding = f
	if err != nil {
		return err
	}
	if r.Status != ledger.RemedyAwaitingApproval {
		return fmt.Errorf("findings: %s request %d: %w (%w: it is %s)", d.Verb, r.ID, ErrNotWaiting, ledger.ErrConflict, r.Status)
	}
	if r.Expired(now) {
		r, err = tx.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: r.ID, From: []ledger.RemedyStatus{ledger.RemedyAwaitingApproval},
			To: ledger.RemedyExpired, Now: now})
		if err != nil {
			return err
		}
		out.Remedy = &r
		if err := s.event(ctx, tx, f.ID, ledger.ActionExpired, d.Actor, now, fmt.Sprintf("%s asked by %s expired on %s unapproved; nothing was done",
			r.Describe(), r.RequestedBy, r.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))); err != nil {
			return err
		}
		*expired = fmt.Errorf("findings: %s request %d: %w", d.Verb, r.ID, ErrRequestExpired)
		return s.announceRemedy(ctx, tx, r, f)
	}
	if d.Verb == Reject {
		r, err = tx.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: r.ID, From: []ledger.RemedyStatus{ledger.RemedyAwaitingApproval},
			To: ledger.RemedyRejected, By: d.Actor.Name, Via: d.Actor.Surface, Note: d.Note, Now: now})
		if err != nil {
			return err
		}
		out.Remedy = &r
		out.Changed = []ledger.Finding{f}
		if err := s.event(ctx, tx, f.ID, ledger.ActionRejected, d.Actor, now, fmt.Sprintf("%s asked by %s rejected; nothing was done: %s",
			r.Describe(), r.RequestedBy, d.Note)); err != nil {
			return err
		}
		return s.announceRemedy(ctx, tx, r, f)
	}
	if samePerson(r.RequestedBy, d.Actor.Name) {
		return &ledger.FieldError{Field: "actor", Err: ErrOwnRequest}
	}
	if f.Status == ledger.FindingResolved {
		return fmt.Errorf("findings: approve request %d: %w: finding is %s", r.ID, ledger.ErrConflict, f.Status)
	}
	r, err = tx.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: r.ID, From: []ledger.RemedyStatus{ledger.RemedyAwaitingApproval},
		To: ledger.RemedyApplied, By: d.Actor.Name, Via: d.Actor.Surface, Note: d.Note, Now: now})
	if err != nil {
		return err
	}
	note := fmt.Sprintf("%s asked by %s approved", r.Describe(), r.RequestedBy)
	if d.Note != "" {
		note += ": " + d.Note
	}
	if err := s.event(ctx, tx, f.ID, ledger.ActionApproved, d.Actor, now, note); err != nil {
		return err
	}
	// It is carried out as the requester asked, with the approver as who
	// carried it out.
	if err := s.execute(ctx, tx, r, f, d.Actor, now, out); err != nil {
		return err
	}
	return s.announceRemedy(ctx, tx, *out.Remedy, out.Finding)
}

// samePerson reports whether two actors' names are one person's.
func samePerson(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// execute carries out the applied remedy r on finding f, in tx, with its
// history: a refund intent created and queued (the finding stays open until
// a run sees the money go back), a write-off or a cancel resolving the
// finding, a retry queued.
func (s *Service) execute(ctx context.Context, tx ledger.Tx, r ledger.Remedy, f ledger.Finding, who ledger.Actor, now time.Time, out *Outcome) error {
	out.Remedy = &r
	out.Changed = []ledger.Finding{f}
	switch r.Kind {
	case ledger.RemedyRefund:
		in, err := s.createRefund(ctx, tx, r, f, now)
		if err != nil {
			return err
		}
		out.Intent = &in
		if r, err = tx.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: r.ID, From: []ledger.RemedyStatus{ledger.RemedyApplied},
			To: ledger.RemedyApplied, RefundKey: in.Key, Now: now}); err != nil {
			return err
		}
		out.Remedy = &r
		how := "queued to be sent to " + in.Provider
		if !s.payments.CanRefund(in.Provider) {
			how = "recorded for the refund made at " + in.Provider + " by hand"
		}
		return s.event(ctx, tx, f.ID, ledger.ActionRefundCreated, who, now, fmt.Sprintf(
			"refund %s of %s for %s %s; the finding is resolved when a run sees the money given back: %s",
			in.Key, ledger.ShowAmount(r.Amount), r.TxnID, how, r.Note))
	case ledger.RemedyWriteOff:
		if err := s.event(ctx, tx, f.ID, ledger.ActionWrittenOff, who, now, fmt.Sprintf("%s written off: %s",
			ledger.ShowAmount(r.Amount), r.Note)); err != nil {
			return err
		}
		return s.resolveBy(ctx, tx, f.ID, who, now, fmt.Sprintf("written off %s: %s", ledger.ShowAmount(r.Amount), r.Note), out)
	case ledger.RemedyRetry:
		in, err := s.payments.RetryTx(ctx, tx, r.IntentKey, r.ID)
		if err != nil {
			return err
		}
		out.Intent = &in
		return s.event(ctx, tx, f.ID, ledger.ActionRetried, who, now, fmt.Sprintf("%s %s (%s) queued again; a run resolves the finding once its outcome is known: %s",
			kindWord(in), in.Key, in.State, r.Note))
	case ledger.RemedyCancel:
		in, err := s.payments.CancelTx(ctx, tx, r.IntentKey)
		if err != nil {
			return err
		}
		out.Intent = &in
		if err := s.event(ctx, tx, f.ID, ledger.ActionCancelled, who, now, fmt.Sprintf("%s %s cancelled (now %s), nothing having reached %s: %s",
			kindWord(in), in.Key, in.State, in.Provider, r.Note)); err != nil {
			return err
		}
		return s.resolveBy(ctx, tx, f.ID, who, now, "cancelled: "+r.Note, out)
	}
	return fmt.Errorf("findings: remedy %d: no such kind %q", r.ID, r.Kind)
}

func kindWord(in ledger.Intent) string {
	if in.IsRefund() {
		return "refund"
	}
	return "charge"
}

// resolveBy resolves finding id by hand for who, announcing it.
func (s *Service) resolveBy(ctx context.Context, tx ledger.Tx, id string, who ledger.Actor, now time.Time, note string, out *Outcome) error {
	f, err := tx.UpdateFinding(ctx, ledger.FindingUpdate{ID: id, To: ledger.FindingResolved, Note: note, Now: now, Actor: who})
	out.Finding = f
	if err != nil {
		return err
	}
	out.Changed = []ledger.Finding{f}
	out.Resolved = append(out.Resolved, f)
	if s.announce == nil {
		return nil
	}
	return s.announce(ctx, tx, f)
}

// event appends a history event about finding id.
func (s *Service) event(ctx context.Context, tx ledger.Tx, id string, a ledger.Action, who ledger.Actor, now time.Time, note string) error {
	return tx.AddFindingEvent(ctx, ledger.HistoryEvent{SubjectKind: ledger.SubjectFinding, SubjectID: id, Action: a,
		Actor: who.Name, Surface: who.Surface, Note: note, At: now})
}

func (s *Service) announceRemedy(ctx context.Context, tx ledger.Tx, r ledger.Remedy, f ledger.Finding) error {
	if s.announceReq == nil {
		return nil
	}
	return s.announceReq(ctx, tx, r, f)
}

// remedyConflict explains the books refusing a second live remedy.
func remedyConflict(r ledger.Remedy, err error) error {
	if !errors.Is(err, ledger.ErrConflict) {
		return err
	}
	what := "a " + string(r.Kind) + " of this finding awaits approval already"
	if r.Kind == ledger.RemedyRefund {
		what = "a refund of " + r.TxnID + " was asked for already"
	}
	return fmt.Errorf("findings: %s %s: %w: %s", r.Kind, r.FindingID, ledger.ErrConflict, what)
}

// RefundKey is the key of the refund intent that gives back transaction
// txnID for finding id: the same request, from any surface or retry,
// names the same refund.
func RefundKey(findingID, txnID string) string { return "refund:" + findingID + ":" + txnID }

// refundPlan picks the payment a refund of finding f gives back and how
// much: for a duplicate_charge, a charge that is not the one paying the
// intent (the latest not already being refunded, or d.TxnID), its whole
// amount by default; for an overpaid, the last payment (or d.TxnID), the
// excess by default, at most that payment. d.Amount may ask for less.
func (s *Service) refundPlan(ctx context.Context, tx ledger.Tx, f ledger.Finding, d Decision) (string, money.Amount, error) {
	if f.IntentKey == "" {
		return "", money.Amount{}, &ledger.FieldError{Field: "intent", Err: errors.New("the finding names no intent")}
	}
	ch, err := tx.GetIntent(ctx, f.IntentKey)
	if err != nil {
		return "", money.Amount{}, err
	}
	if ch.State != ledger.StateSucceeded && !ch.IsExpected() {
		// A worker still holds it, or it failed: the money it took is
		// another finding's (status_mismatch) to give back.
		return "", money.Amount{}, &ledger.FieldError{Field: "state", Err: fmt.Errorf("the charge %s is %s: only a succeeded charge is refunded", ch.Key, ch.State)}
	}
	candidates, err := s.refundCandidates(ctx, tx, f, d)
	if err != nil {
		return "", money.Amount{}, err
	}
	if len(candidates) == 0 {
		return "", money.Amount{}, &ledger.FieldError{Field: "txn", Err: errors.New("the books hold no payment of the finding to give back")}
	}
	pick, err := pickRefund(ctx, tx, f, d, candidates)
	if err != nil {
		return "", money.Amount{}, err
	}
	most := pick.Amount
	if f.Kind == ledger.KindOverpaid && f.AtRisk.Currency == most.Currency && f.AtRisk.Value.LessThan(most.Value) {
		most = f.AtRisk
	}
	amount, err := askedAmount(d.Amount, most)
	return pick.ID, amount, err
}

// refundCandidates lists the payments of finding f a refund may give
// back, oldest first: for a duplicate_charge, the successful charges but
// the one paying the intent; for an overpaid, the last payment, or every
// payment when d names one.
func (s *Service) refundCandidates(ctx context.Context, tx ledger.Tx, f ledger.Finding, d Decision) ([]ledger.ProviderTxn, error) {
	txns, err := tx.GetProviderTxns(ctx, f.Provider, f.ProviderTxnIDs)
	if err != nil {
		return nil, err
	}
	var paid []ledger.ProviderTxn
	for _, t := range txns {
		if t.Type == ledger.TxnCharge && t.Status == ledger.TxnSucceeded {
			paid = append(paid, t)
		}
	}
	// Oldest first.
	slices.SortFunc(paid, func(a, b ledger.ProviderTxn) int {
		return cmp.Or(a.OccurredAt.Compare(b.OccurredAt), strings.Compare(a.ID, b.ID))
	})
	var candidates []ledger.ProviderTxn
	switch f.Kind {
	case ledger.KindDuplicateCharge:
		first, err := s.paying(ctx, tx, f.IntentKey, paid)
		if err != nil {
			return nil, err
		}
		for _, t := range paid {
			if t.ID != first {
				candidates = append(candidates, t)
			}
		}
	case ledger.KindOverpaid:
		if len(paid) > 0 {
			candidates = paid[len(paid)-1:]
		}
		if d.TxnID != "" {
			candidates = paid
		}
	}
	return candidates, nil
}

// pickRefund picks among candidates the payment to give back: d.TxnID
// when it names one of them, else the latest one nobody is refunding yet
// (the latest when all are).
func pickRefund(ctx context.Context, tx ledger.Tx, f ledger.Finding, d Decision, candidates []ledger.ProviderTxn) (ledger.ProviderTxn, error) {
	if d.TxnID != "" {
		i := slices.IndexFunc(candidates, func(t ledger.ProviderTxn) bool { return t.ID == d.TxnID })
		if i < 0 {
			ids := make([]string, len(candidates))
			for k, t := range candidates {
				ids[k] = t.ID
			}
			return ledger.ProviderTxn{}, &ledger.FieldError{Field: "txn", Err: fmt.Errorf("%q is not a payment to give back here (want one of %s)",
				d.TxnID, strings.Join(ids, ", "))}
		}
		return candidates[i], nil
	}
	// The latest one nobody is refunding yet.
	live, err := tx.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: []string{f.ID}, Kinds: []ledger.RemedyKind{ledger.RemedyRefund}})
	if err != nil {
		return ledger.ProviderTxn{}, err
	}
	for i := len(candidates) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(live, func(r ledger.Remedy) bool { return r.TxnID == candidates[i].ID && r.Status.Live() }) {
			return candidates[i], nil
		}
	}
	return candidates[len(candidates)-1], nil
}

// paying is the charge among paid (oldest first) that pays intent key: the
// one its attempts recorded (by provider reference or id), else the first.
func (s *Service) paying(ctx context.Context, tx ledger.Tx, key string, paid []ledger.ProviderTxn) (string, error) {
	if len(paid) == 0 {
		return "", nil
	}
	attempts, err := tx.ListAttempts(ctx, key)
	if err != nil {
		return "", err
	}
	for _, a := range attempts {
		if a.ProviderRef == "" {
			continue
		}
		for _, t := range paid {
			if t.ProviderRef == a.ProviderRef || t.ID == a.ProviderRef {
				return t.ID, nil
			}
		}
	}
	return paid[0].ID, nil
}

// writeOffAmount is what a write-off of f takes: its money at risk, or the
// asked amount, which may not exceed it.
func writeOffAmount(f ledger.Finding, asked string) (money.Amount, error) {
	if f.AtRisk.IsZero() || !f.AtRisk.Value.IsPositive() {
		return money.Amount{}, &ledger.FieldError{Field: "amount", Err: errors.New("the finding puts no money at risk: resolve it instead")}
	}
	return askedAmount(asked, f.AtRisk)
}

// askedAmount parses asked in most's currency, at most most; most when
// nothing is asked.
func askedAmount(asked string, most money.Amount) (money.Amount, error) {
	asked = strings.TrimSpace(asked)
	if asked == "" {
		return most, nil
	}
	a, err := money.Parse(asked, most.Currency)
	if err != nil {
		return money.Amount{}, &ledger.FieldError{Field: "amount", Err: err}
	}
	if !a.Value.IsPositive() {
		return money.Amount{}, &ledger.FieldError{Field: "amount", Err: fmt.Errorf("%s is not positive", a.Text())}
	}
	if a.Value.GreaterThan(most.Value) {
		return money.Amount{}, &ledger.FieldError{Field: "amount", Err: fmt.Errorf("%s is more than %s", ledger.ShowAmount(a), ledger.ShowAmount(most))}
	}
	return a, nil
}

// createRefund creates the refund intent of remedy r: a refund of the
// finding's intent for the payment r names, keyed by finding and payment.
func (s *Service) createRefund(ctx context.Context, tx ledger.Tx, r ledger.Remedy, f ledger.Finding, now time.Time) (ledger.Intent, error) {
	ch, err := tx.GetIntent(ctx, r.IntentKey)
	if err != nil {
		return ledger.Intent{}, err
	}
	reason := "duplicate"
	if f.Kind == ledger.KindOverpaid {
		reason = "overpaid"
	}
	// A refund its provider's charger sends is pending, for its job; one
	// made at the provider by hand is unknown here until the evidence
	// shows it (which settles it), and a stuck_intent says when it does
	// not come.
	state := ledger.StatePending
	if !s.payments.CanRefund(ch.Provider) {
		state = ledger.StateUnknown
	}
	in, _, err := s.payments.CreateIntentTx(ctx, tx, ledger.NewIntent{IntentParams: ledger.IntentParams{
		Key: RefundKey(f.ID, r.TxnID), Kind: ledger.IntentRefund, RefundOf: ch.Key, Provider: ch.Provider, Amount: r.Amount,
		Customer: ch.Customer, Metadata: map[string]string{ledger.MetaChargeTxn: r.TxnID, ledger.MetaFinding: f.ID, ledger.MetaReason: reason}},
		State: state, CreatedAt: now})
	return in, err
}
