package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// RemedyKind is what a person does to fix a finding, beyond resolving it.
type RemedyKind string

// Remedy kinds.
const (
	// RemedyRefund gives back the excess of a duplicate_charge or an
	// overpaid: a refund intent of the one charge that is too many (or of
	// the last payment of an overpayment), sent by the refund machinery.
	// The finding stays open until a run sees the money go back.
	RemedyRefund RemedyKind = "refund"
	// RemedyWriteOff accepts a small difference as lost (or kept): the
	// finding is resolved with the amount written off and the reason.
	RemedyWriteOff RemedyKind = "writeoff"
	// RemedyRetry queues a stuck intent's charge again.
	RemedyRetry RemedyKind = "retry"
	// RemedyCancel fails a stuck intent that never reached its provider.
	RemedyCancel RemedyKind = "cancel"
)

// RemedyKinds lists every remedy kind.
var RemedyKinds = []RemedyKind{RemedyRefund, RemedyWriteOff, RemedyRetry, RemedyCancel}

// RemedyStatus is where a remedy stands.
type RemedyStatus string

// Remedy statuses.
const (
	// RemedyAwaitingApproval: above its currency's threshold, it waits for
	// a second person, until it expires.
	RemedyAwaitingApproval RemedyStatus = "awaiting_approval"
	// RemedyApplied: done (a refund: its refund intent created and queued).
	RemedyApplied RemedyStatus = "applied"
	// RemedyConfirmed: a refund a run saw given back by the provider.
	RemedyConfirmed RemedyStatus = "confirmed"
	// RemedyRejected: the second person refused it; nothing changed.
	RemedyRejected RemedyStatus = "rejected"
	// RemedyExpired: nobody approved it in time; nothing changed.
	RemedyExpired RemedyStatus = "expired"
)

// Live reports whether a remedy in status s stands: waiting, applied or
// confirmed, not rejected or expired.
func (s RemedyStatus) Live() bool {
	return s == RemedyAwaitingApproval || s == RemedyApplied || s == RemedyConfirmed
}

// Actions on findings that remedies write to their history.
const (
	// ActionRequested: a remedy above the approval threshold waits for a
	// second person.
	ActionRequested Action = "requested"
	// ActionApproved and ActionRejected: the second person's decision.
	ActionApproved Action = "approved"
	ActionRejected Action = "rejected"
	// ActionExpired: a request nobody approved in time.
	ActionExpired Action = "expired"
	// ActionRefundCreated: a refund intent was created and its job queued;
	// the finding resolves when a run sees the money go back.
	ActionRefundCreated Action = "refund_created"
	// ActionRefundConfirmed: a run saw the refund given back.
	ActionRefundConfirmed Action = "refund_confirmed"
	// ActionWrittenOff: the difference was written off (a resolved event
	// follows).
	ActionWrittenOff Action = "written_off"
	// ActionRetried: the stuck intent's charge was queued again.
	ActionRetried Action = "retried"
	// ActionCancelled: the stuck intent was failed.
	ActionCancelled Action = "cancelled"
)

// Remedy is one person's request to fix a finding, and what became of it.
type Remedy struct {
	ID        int64
	FindingID string
	Kind      RemedyKind
	Status    RemedyStatus
	Provider  string
	// IntentKey is the intent acted on: the charge a refund returns money
	// for, the intent retried or cancelled, the intent of a written-off
	// finding (empty for none).
	IntentKey string
	// TxnID is the provider transaction a refund gives back (the duplicate
	// charge, the overpayment's last payment).
	TxnID string
	// RefundKey is the refund intent a refund created; empty until applied.
	RefundKey string
	// Amount is the money refunded or written off; zero for a retry or a
	// cancel.
	Amount money.Amount
	// Note is the requester's: what is done and why.
	Note         string
	RequestedBy  string
	RequestedVia Surface
	RequestedAt  time.Time
	// ExpiresAt is when a request awaiting approval lapses; zero for a
	// remedy applied at once.
	ExpiresAt time.Time
	// DecidedBy, DecidedVia, DecidedAt and DecisionNote are the second
	// person's approval or rejection, or the expiry.
	DecidedBy    string
	DecidedVia   Surface
	DecidedAt    time.Time
	DecisionNote string
	AppliedAt    time.Time
	ConfirmedAt  time.Time
}

// Expired reports whether r waits for approval past its expiry at now.
func (r Remedy) Expired(now time.Time) bool {
	return r.Status == RemedyAwaitingApproval && !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)
}

// Describe says what r does, for people: "refund of KES 2,300.00 (SCE2EF4GH6)",
// "write-off of KES 20.00", "retry", "cancel".
func (r Remedy) Describe() string {
	switch r.Kind {
	case RemedyRefund:
		s := "refund of " + ShowAmount(r.Amount)
		if r.TxnID != "" {
			s += " (" + r.TxnID + ")"
		}
		return s
	case RemedyWriteOff:
		return "write-off of " + ShowAmount(r.Amount)
	case RemedyRetry:
		return "retry of " + r.IntentKey
	case RemedyCancel:
		return "cancel of " + r.IntentKey
	}
	return string(r.Kind)
}

// RemedyUpdate moves a remedy compare-and-set from one of From to To. The
// other fields are written when set: By (with Via and Note) records the
// approval, rejection or expiry; RefundKey the refund intent created. Now
// stamps decided_at (when By is set), applied_at (To applied) and
// confirmed_at (To confirmed).
type RemedyUpdate struct {
	ID        int64
	From      []RemedyStatus
	To        RemedyStatus
	By        string
	Via       Surface
	Note      string
	RefundKey string
	Now       time.Time
}

// RemedyFilter selects remedies; zero fields match everything. They come
// back by id.
type RemedyFilter struct {
	FindingIDs []string
	RefundKeys []string
	Statuses   []RemedyStatus
	Kinds      []RemedyKind
	Limit      int
}

// RemedyStore keeps remedies.
type RemedyStore interface {
	// AddRemedy records r (its ID is assigned) and returns it as stored.
	// ErrConflict when the same finding already has a request of the kind
	// (and transaction) waiting, or a live refund of the same transaction.
	AddRemedy(ctx context.Context, r Remedy) (Remedy, error)
	GetRemedy(ctx context.Context, id int64) (Remedy, error)
	// UpdateRemedy applies u; ErrConflict, with the remedy as it stands,
	// when its status is not among u.From.
	UpdateRemedy(ctx context.Context, u RemedyUpdate) (Remedy, error)
	ListRemedies(ctx context.Context, f RemedyFilter) ([]Remedy, error)
}

// CheckRemedy validates r before it is stored.
func CheckRemedy(r Remedy) error {
	switch {
	case r.FindingID == "":
		return &FieldError{Field: "finding", Err: errEmpty}
	case r.Provider == "":
		return &FieldError{Field: "provider", Err: errEmpty}
	case r.RequestedBy == "":
		return &FieldError{Field: "actor", Err: errEmpty}
	}
	switch r.Kind {
	case RemedyRefund, RemedyWriteOff:
		if r.Amount.IsZero() || !r.Amount.Value.IsPositive() {
			return &FieldError{Field: "amount", Err: fmt.Errorf("a %s needs a positive amount", r.Kind)}
		}
	case RemedyRetry, RemedyCancel:
		if !r.Amount.IsZero() {
			return &FieldError{Field: "amount", Err: fmt.Errorf("a %s takes no amount", r.Kind)}
		}
	default:
		return &FieldError{Field: "kind", Err: fmt.Errorf("%q: want refund, writeoff, retry or cancel", r.Kind)}
	}
	switch r.Status {
	case RemedyAwaitingApproval, RemedyApplied:
	default:
		return &FieldError{Field: "status", Err: fmt.Errorf("a remedy starts awaiting approval or applied, not %s", r.Status)}
	}
	return nil
}

// ShowAmount renders a for people, with thousands separators: "KES 2,300.00";
// "-" for none.
func ShowAmount(a money.Amount) string {
	if a.IsZero() {
		return "-"
	}
	return a.Currency + " " + a.Format()
}
