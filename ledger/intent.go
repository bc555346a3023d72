package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// State is the lifecycle state of an intent.
type State string

// Intent states. Succeeded and failed are final; unknown is settled by evidence.
const (
	StatePending    State = "pending"
	StateProcessing State = "processing"
	StateSucceeded  State = "succeeded"
	StateFailed     State = "failed"
	StateUnknown    State = "unknown"
)

// ParseState validates s as a State.
func ParseState(s string) (State, error) {
	switch st := State(strings.ToLower(strings.TrimSpace(s))); st {
	case StatePending, StateProcessing, StateSucceeded, StateFailed, StateUnknown:
		return st, nil
	}
	return "", fmt.Errorf("unknown state %q (want pending, processing, succeeded, failed or unknown)", s)
}

// Final reports whether no evidence may change the state any more.
func (s State) Final() bool { return s == StateSucceeded || s == StateFailed }

// MaxReferenceLen is the longest reference the ledger stores; M-Pesa shows at
// most 12 characters of an AccountReference.
const MaxReferenceLen = 12

// IntentParams are the parameters that define an intent. Two creations under
// one key are the same request exactly when their parameters are equal.
type IntentParams struct {
	Key string
	// Kind says which way the intent moves money; charge when empty.
	Kind IntentKind
	// RefundOf is, for a refund, the key of the charge intent it returns
	// money for; empty for a charge.
	RefundOf string
	Provider string
	// Account is the provider account (an M-Pesa shortcode or till, a Stripe
	// account id); empty is the provider's default account.
	Account  string
	Amount   money.Amount
	Customer string
	// Reference is what the provider shows back; derived from Key when empty.
	Reference string
	Metadata  map[string]string
	// DueAt is when an expected payment is due (zero: no due date). Before
	// it a partial payment is information, after it a shortfall is a
	// finding. Only expected payments have one.
	DueAt time.Time
	// Tolerance is how far the sum paid for an expected payment may differ
	// from its amount and still count as paid in full (zero: none). It is in
	// the intent's currency. Only expected payments have one.
	Tolerance money.Amount
}

// Intent is one logical payment.
type Intent struct {
	IntentParams
	State State
	// ClaimToken increases with every claim; it fences out a worker whose
	// lease was taken over.
	ClaimToken     int64
	ClaimOwner     string
	LeaseExpiresAt time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// ProviderRefs are the provider references recorded by attempts, sorted.
	// Filled by ListIntents.
	ProviderRefs []string
}

// Normalize validates p and fills derived fields (reference). It returns the
// first problem it finds as a *FieldError.
func (p IntentParams) Normalize() (IntentParams, error) {
	p.Key = strings.TrimSpace(p.Key)
	p.Provider = strings.ToLower(strings.TrimSpace(p.Provider))
	p.Customer = strings.TrimSpace(p.Customer)
	p.Reference = strings.TrimSpace(p.Reference)
	p.RefundOf = strings.TrimSpace(p.RefundOf)
	p.Account = strings.TrimSpace(p.Account)
	if p.Kind == "" {
		p.Kind = IntentCharge
	}
	if err := p.checkKind(); err != nil {
		return p, err
	}
	switch {
	case p.Key == "":
		return p, &FieldError{Field: "key", Err: errEmpty}
	case len(p.Key) > MaxIDLen:
		return p, &FieldError{Field: "key", Err: fmt.Errorf("longer than %d characters", MaxIDLen)}
	case p.Provider == "":
		return p, &FieldError{Field: "provider", Err: errEmpty}
	case p.Amount.IsZero():
		return p, &FieldError{Field: "amount", Err: errEmpty}
	case !p.Amount.Value.IsPositive():
		return p, &FieldError{Field: "amount", Err: fmt.Errorf("%s is not positive", p.Amount.Text())}
	case len(p.Reference) > MaxReferenceLen:
		return p, &FieldError{Field: "reference", Err: fmt.Errorf("%s is longer than %d characters", Clip(p.Reference), MaxReferenceLen)}
	}
	if err := checkField("account", p.Account, MaxIDLen); err != nil {
		return p, err
	}
	if err := p.checkLimits(); err != nil {
		return p, err
	}
	if err := p.checkExpected(); err != nil {
		return p, err
	}
	if p.Reference == "" {
		p.Reference = DeriveReference(p.Key)
	}
	if len(p.Metadata) == 0 {
		p.Metadata = nil
	}
	return p, nil
}

// checkLimits applies the limits at the edge (limits.go) to p.
func (p IntentParams) checkLimits() error {
	if err := CheckAmount(p.Amount); err != nil {
		return &FieldError{Field: "amount", Err: err}
	}
	for _, f := range [...]struct {
		name, v string
		max     int
	}{{"key", p.Key, MaxIDLen}, {"provider", p.Provider, MaxProviderLen}, {"customer", p.Customer, MaxIDLen},
		{"reference", p.Reference, MaxReferenceLen}} {
		if err := checkField(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	if len(p.Metadata) > MaxMetadataEntries {
		return &FieldError{Field: "metadata", Err: fmt.Errorf("%d entries, more than %d: %w", len(p.Metadata), MaxMetadataEntries, ErrOutOfRange)}
	}
	if len(p.Metadata) == 0 {
		return nil // without sorting no keys
	}
	for _, k := range slices.Sorted(maps.Keys(p.Metadata)) {
		if err := checkField("metadata key", k, MaxMetadataKeyLen); err != nil {
			return err
		}
		if err := checkField("metadata."+SafeText(k, MaxMetadataKeyLen), p.Metadata[k], MaxMetadataValueLen); err != nil {
			return err
		}
	}
	return nil
}

// Same reports whether p and q describe the same request.
func (p IntentParams) Same(q IntentParams) bool {
	return p.Key == q.Key && p.Kind.orCharge() == q.Kind.orCharge() && p.RefundOf == q.RefundOf && p.Provider == q.Provider && p.Account == q.Account && p.Amount.Equal(q.Amount) &&
		p.Customer == q.Customer && p.Reference == q.Reference && maps.Equal(p.Metadata, q.Metadata) &&
		p.DueAt.Equal(q.DueAt) && sameTolerance(p.Tolerance, q.Tolerance)
}

// sameTolerance compares two tolerances, none being equal to none.
func sameTolerance(a, b money.Amount) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Equal(b)
}

// checkExpected validates the due date and tolerance of an expected
// payment (checkKind refuses them on other kinds).
func (p *IntentParams) checkExpected() error {
	if !p.DueAt.IsZero() {
		if err := CheckTime(p.DueAt); err != nil {
			return &FieldError{Field: "due_at", Err: err}
		}
		p.DueAt = p.DueAt.UTC()
	}
	if p.Tolerance.IsZero() {
		return nil
	}
	switch t := p.Tolerance; {
	case t.Currency != p.Amount.Currency:
		return &FieldError{Field: "tolerance", Err: fmt.Errorf("%s is not in the intent's currency %s", t, p.Amount.Currency)}
	case t.Value.IsNegative():
		return &FieldError{Field: "tolerance", Err: fmt.Errorf("%s is negative", t.Text())}
	case !t.Value.LessThan(p.Amount.Value):
		return &FieldError{Field: "tolerance", Err: fmt.Errorf("%s is not less than the amount %s", t.Text(), p.Amount.Text())}
	}
	if err := CheckAmount(p.Tolerance); err != nil {
		return &FieldError{Field: "tolerance", Err: err}
	}
	if p.Tolerance.Value.IsZero() {
		p.Tolerance = money.Amount{}
	}
	return nil
}

func (p IntentParams) describe() string {
	s := fmt.Sprintf("{provider %s, amount %s, reference %s", p.Provider, p.Amount, p.Reference)
	switch p.Kind {
	case IntentRefund:
		s = fmt.Sprintf("{refund of %s, provider %s, amount %s, reference %s", p.RefundOf, p.Provider, p.Amount, p.Reference)
	case IntentExpected:
		s = fmt.Sprintf("{expected payment, provider %s, amount %s, reference %s", p.Provider, p.Amount, p.Reference)
		if !p.DueAt.IsZero() {
			s += ", due " + p.DueAt.Format(time.RFC3339)
		}
		if !p.Tolerance.IsZero() {
			s += ", tolerance " + p.Tolerance.Text()
		}
	}
	if p.Customer != "" {
		s += ", customer " + MaskCustomer(p.Customer)
	}
	if len(p.Metadata) > 0 {
		keys := slices.Sorted(maps.Keys(p.Metadata))
		s += ", metadata keys " + strings.Join(keys, ",")
	}
	return s + "}"
}

var refEncoding = base32.NewEncoding("ABCDEFGHJKLMNPQRSTUVWXYZ23456789").WithPadding(base32.NoPadding)

// DeriveReference returns a stable 12-character reference for an intent key:
// readable upper-case letters and digits, the same for the same key on every
// machine.
func DeriveReference(key string) string {
	sum := sha256.Sum256([]byte(key))
	return refEncoding.EncodeToString(sum[:])[:MaxReferenceLen]
}

// NewIntent is an intent to create: its parameters, the state it starts in
// (pending when empty; imports bring other states) and its times.
type NewIntent struct {
	IntentParams
	State     State
	CreatedAt time.Time
	// UpdatedAt defaults to CreatedAt.
	UpdatedAt time.Time
}

// Normalize validates n and fills its defaults.
func (n NewIntent) Normalize() (NewIntent, error) {
	p, err := n.IntentParams.Normalize()
	n.IntentParams = p
	if err != nil {
		return n, err
	}
	if n.State == "" {
		n.State = StatePending
	}
	if n.CreatedAt.IsZero() {
		return n, &FieldError{Field: "created_at", Err: errEmpty}
	}
	if err := CheckTime(n.CreatedAt); err != nil {
		return n, &FieldError{Field: "created_at", Err: err}
	}
	if err := CheckTime(n.UpdatedAt); err != nil {
		return n, &FieldError{Field: "updated_at", Err: err}
	}
	if n.UpdatedAt.IsZero() {
		n.UpdatedAt = n.CreatedAt
	}
	if n.UpdatedAt.Before(n.CreatedAt) {
		return n, &FieldError{Field: "updated_at", Err: fmt.Errorf("%s is before created_at", n.UpdatedAt.Format(time.RFC3339))}
	}
	return n, nil
}

// ClaimParams asks for the lease on an intent.
type ClaimParams struct {
	Key   string
	Owner string
	Lease time.Duration
	Now   time.Time
}

// TransitionParams moves an intent from one of From to To, compare-and-set.
// A non-zero ClaimToken also requires that the claim has not been taken over.
// Moving a processing intent to processing releases its lease: it expires at
// Now, so the next delivery may claim it at once.
type TransitionParams struct {
	Key        string
	From       []State
	To         State
	ClaimToken int64
	Now        time.Time
}

// IntentFilter selects intents of one provider account created in [From, To).
type IntentFilter struct {
	Provider string
	Account  string
	From, To time.Time
}

// ImportIntent is one row of a bulk import: an intent to create, the line it
// came from (refusals name it) and the provider references to record as
// imported attempts when the intent is new.
type ImportIntent struct {
	NewIntent
	Line         int
	ProviderRefs []string
}

// ImportIntentsParams is a bulk import of intents.
type ImportIntentsParams struct {
	// Rows are read once, in order, while the import writes; the store holds
	// only a bounded batch of them at a time. A store may read them on a
	// goroutine of its own; the import returns only once the reading is
	// over.
	Rows iter.Seq[ImportIntent]
	// Pending, when set, is called inside the import, once every row is
	// written and only when none was refused, with the keys of the pending
	// intents it names (see ImportIntentsResult.Pending), a page at a time.
	// The charge service enqueues their charges there, in the same
	// transaction.
	Pending func(ctx context.Context, keys []string) error
	// PendingRefunds is Pending for the refund intents: called with the keys
	// of the pending refunds the import names, for their refund jobs.
	PendingRefunds func(ctx context.Context, keys []string) error
}

// ImportIntentsResult counts what a bulk import did. Every row is created,
// existing (the same request as the stored intent, including a repeat of a
// key earlier in the same import) or refused.
type ImportIntentsResult struct {
	Rows     int
	Created  int
	Existing int
	// Pending counts the distinct keys of rows that ask for a pending intent
	// whose stored intent is still pending after the import: created now,
	// or imported before and never charged.
	Pending int
	// PendingRefunds is Pending for refund intents.
	PendingRefunds int
	// Refused lists the rows refused, in no particular order: the same key
	// with other parameters (*KeyReuseError) or an invalid row (*FieldError).
	Refused []RefusedIntent
}

// RefusedIntent is one refused row of a bulk import.
type RefusedIntent struct {
	Line int
	Err  error
}
