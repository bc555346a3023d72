package ledger

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// TxnType classifies a provider transaction.
type TxnType string

// Provider transaction types.
const (
	TxnCharge   TxnType = "charge"
	TxnRefund   TxnType = "refund"
	TxnReversal TxnType = "reversal"
	TxnFee      TxnType = "fee"
	TxnPayout   TxnType = "payout"
	// TxnDispute is a chargeback on a charge (LinkedID): pending while the
	// dispute is open without funds withdrawn, succeeded once the provider
	// has withdrawn the disputed funds.
	TxnDispute TxnType = "dispute"
	// TxnDisputeReversal returns the funds of a dispute that was won to
	// the merchant; LinkedID names the disputed charge.
	TxnDisputeReversal TxnType = "dispute_reversal"
	// TxnRefundFailure gives back the money of a refund that failed;
	// LinkedID names the refunded charge.
	TxnRefundFailure TxnType = "refund_failure"
	// TxnAdjustment is money that moved for a reason the provider documents
	// but that is no payment of a customer (transfers, reserves, top-ups,
	// tax, other adjustments). Its amount is signed: negative takes money
	// out of the balance.
	TxnAdjustment TxnType = "adjustment"
	// TxnOther is a line of a kind the provider does not document. It is
	// kept as evidence, signed like an adjustment, and never matched as a
	// charge.
	TxnOther TxnType = "other"
)

// TxnTypes lists every transaction type.
var TxnTypes = []TxnType{TxnCharge, TxnRefund, TxnReversal, TxnFee, TxnPayout, TxnDispute, TxnDisputeReversal,
	TxnRefundFailure, TxnAdjustment, TxnOther, TxnBankCredit, TxnBankDebit}

// TxnStatus is the provider's outcome for a transaction.
type TxnStatus string

// Provider transaction statuses. Only succeeded moves money.
const (
	TxnSucceeded TxnStatus = "succeeded"
	TxnFailed    TxnStatus = "failed"
	TxnPending   TxnStatus = "pending"
)

// ProviderTxn is one normalised line of provider evidence. It is unique per
// (Provider, ID); the same money seen through several channels is one
// ProviderTxn with several sources.
type ProviderTxn struct {
	Provider string
	// Account is the provider account (an M-Pesa shortcode or till, a Stripe
	// account id); empty is the provider's default account.
	Account string
	// ID is the provider's transaction id (M-Pesa receipt number, Stripe
	// charge or balance transaction id).
	ID     string
	Type   TxnType
	Status TxnStatus
	Amount money.Amount
	// OccurredAt is when the provider says it happened, in UTC.
	OccurredAt time.Time
	// Reference is what the payer or our request put on it (BillRefNumber,
	// A/C No., Stripe metadata).
	Reference string
	// ProviderRef is the request-level reference our attempt recorded
	// (CheckoutRequestID, PaymentIntent id).
	ProviderRef string
	// Counterparty is masked before it is stored.
	Counterparty string
	// LinkedID names the transaction a refund, reversal or fee belongs to.
	LinkedID string
	// Settlement is what the transaction moved in the account's balance
	// when that differs from Amount, the amount presented to the customer
	// (a charge in GBP settled in USD); zero when the provider settled the
	// presentment amount itself or did not say. Evidence only: matching
	// compares Amount.
	Settlement money.Amount
	// ExchangeRate converts Amount to Settlement as the provider applied it
	// (Settlement = Amount × ExchangeRate, before fees); empty when none.
	// Kept as the provider's decimal text, never a float.
	ExchangeRate string
	FirstSeenAt  time.Time
	UpdatedAt    time.Time
	// Sources lists the channels this transaction was seen through. Filled by
	// GetProviderTxn; empty in streamed listings.
	Sources []Source
}

// Source is one sighting of a provider transaction: a channel and the raw
// payload as received.
type Source struct {
	// Channel names how it arrived: stk_callback, c2b_confirmation,
	// statement, api, webhook, import...
	Channel string
	// Ref identifies the sighting within its channel (file and line, callback
	// id, event id); the same Channel+Ref is the same sighting.
	Ref        string
	Raw        []byte
	ReceivedAt time.Time
}

// UpsertResult says what recording a sighting changed.
type UpsertResult struct {
	// Conflict, when set, says how a new sighting disagrees with the stored
	// transaction (another amount, currency, type or final status, or a time
	// a day apart).
	// The stored values are kept and the sighting is quarantined with the
	// reason, so that nothing is dropped silently.
	Conflict string
	// Created is true when the provider transaction was new.
	Created bool
	// SourceAdded is true when the sighting was new.
	SourceAdded bool
	// Txn is the stored transaction after the upsert.
	Txn ProviderTxn
}

// TxnFilter selects the transactions of one provider account that occurred
// in [From, To).
type TxnFilter struct {
	Provider string
	Account  string
	From, To time.Time
}

// ValidateTxn checks that a provider transaction is complete enough to store.
func ValidateTxn(t ProviderTxn) error {
	switch {
	case t.Provider == "":
		return &FieldError{Field: "provider", Err: errEmpty}
	case t.ID == "":
		return &FieldError{Field: "id", Err: errEmpty}
	case t.Amount.IsZero():
		return &FieldError{Field: "amount", Err: errEmpty}
	case t.OccurredAt.IsZero():
		return &FieldError{Field: "occurred_at", Err: errEmpty}
	}
	if !slices.Contains(TxnTypes, t.Type) {
		return &FieldError{Field: "type", Err: fmt.Errorf("unknown type %q", t.Type)}
	}
	if t.ExchangeRate != "" {
		if d, err := decimal.NewFromString(t.ExchangeRate); err != nil || !d.IsPositive() {
			return &FieldError{Field: "exchange_rate", Err: fmt.Errorf("%q is not a positive decimal", t.ExchangeRate)}
		}
	}
	switch t.Status {
	case TxnSucceeded, TxnFailed, TxnPending:
	default:
		return &FieldError{Field: "status", Err: fmt.Errorf("unknown status %q", t.Status)}
	}
	return checkTxnLimits(t)
}

// checkTxnLimits applies the limits at the edge (limits.go) to t.
func checkTxnLimits(t ProviderTxn) error {
	if err := CheckAmount(t.Amount); err != nil {
		return &FieldError{Field: "amount", Err: err}
	}
	if err := CheckTime(t.OccurredAt); err != nil {
		return &FieldError{Field: "occurred_at", Err: err}
	}
	if err := checkField("provider", t.Provider, MaxProviderLen); err != nil {
		return err
	}
	if err := checkField("id", t.ID, MaxIDLen); err != nil {
		return err
	}
	if err := checkField("reference", t.Reference, MaxIDLen); err != nil {
		return err
	}
	if err := checkField("provider_ref", t.ProviderRef, MaxIDLen); err != nil {
		return err
	}
	if err := checkField("account", t.Account, MaxIDLen); err != nil {
		return err
	}
	if err := checkField("counterparty", t.Counterparty, MaxIDLen); err != nil {
		return err
	}
	return checkField("linked_id", t.LinkedID, MaxIDLen)
}

// Conflict says how a sighting disagrees with the stored transaction, or ""
// when it agrees (a pending status becoming final, empty fields being
// filled, or times less than a day apart is agreement).
func Conflict(stored, seen ProviderTxn) string {
	var diffs []string
	if !stored.Amount.Equal(seen.Amount) {
		diffs = append(diffs, fmt.Sprintf("amount %s, stored %s", seen.Amount, stored.Amount))
	}
	if !stored.Settlement.IsZero() && !seen.Settlement.IsZero() && !stored.Settlement.Equal(seen.Settlement) {
		diffs = append(diffs, fmt.Sprintf("settlement %s, stored %s", seen.Settlement, stored.Settlement))
	}
	if stored.Account != seen.Account {
		diffs = append(diffs, fmt.Sprintf("account %q, stored %q", seen.Account, stored.Account))
	}
	if stored.Type != seen.Type {
		diffs = append(diffs, fmt.Sprintf("type %s, stored %s", seen.Type, stored.Type))
	}
	// Channels stamp the same money seconds or minutes apart (a statement
	// keeps minutes only); a day apart is another story.
	if d := stored.OccurredAt.Sub(seen.OccurredAt); d > 24*time.Hour || d < -24*time.Hour {
		diffs = append(diffs, fmt.Sprintf("time %s, stored %s", seen.OccurredAt.UTC().Format(time.RFC3339),
			stored.OccurredAt.Format(time.RFC3339)))
	}
	if stored.Status != seen.Status && stored.Status != TxnPending && seen.Status != TxnPending {
		diffs = append(diffs, fmt.Sprintf("status %s, stored %s", seen.Status, stored.Status))
	}
	if len(diffs) == 0 {
		return ""
	}
	return "conflicts with the stored transaction: " + strings.Join(diffs, "; ")
}

// ConflictItem is the quarantine record of a conflicting sighting.
func ConflictItem(t ProviderTxn, src Source, conflict string) QuarantineItem {
	return QuarantineItem{Source: t.Provider + "_conflict", Origin: src.Channel + " " + src.Ref, Field: "provider_txn " + t.ID,
		Reason: conflict, Raw: src.Raw, At: src.ReceivedAt}
}

// Sighting is one provider transaction seen through one channel.
type Sighting struct {
	Txn    ProviderTxn
	Source Source
}

// UpsertCounts says what recording a batch of sightings changed. Every
// sighting of the batch is counted once: as a new source, a duplicate or a
// conflict.
type UpsertCounts struct {
	// NewTxns counts provider transactions the batch added.
	NewTxns int
	// NewSources counts sightings the batch added.
	NewSources int
	// Duplicates counts sightings that were already stored (the same
	// channel and ref) and agree with the stored transaction.
	Duplicates int
	// Conflicts lists the sightings that contradict the stored transaction
	// (see Conflict), in batch order. Each is quarantined (once, however
	// often it is seen again) and adds no source: the first kept wins.
	Conflicts []SightingConflict
}

// Add adds o to c.
func (c *UpsertCounts) Add(o UpsertCounts) {
	c.NewTxns += o.NewTxns
	c.NewSources += o.NewSources
	c.Duplicates += o.Duplicates
	c.Conflicts = append(c.Conflicts, o.Conflicts...)
}

// SightingConflict says how one sighting of a batch contradicts the stored
// transaction.
type SightingConflict struct {
	// Index is the sighting's position in the batch.
	Index  int
	Reason string
}

// SightingError is a sighting of a batch that cannot be stored; nothing of
// the batch was.
type SightingError struct {
	// Index is the sighting's position in the batch.
	Index int
	Err   error
}

func (e *SightingError) Error() string { return fmt.Sprintf("sighting %d: %v", e.Index+1, e.Err) }

// Unwrap returns the cause (a *FieldError for an invalid transaction).
func (e *SightingError) Unwrap() error { return e.Err }

// ValidateSightings checks every sighting of a batch with ValidateTxn.
func ValidateSightings(batch []Sighting) error {
	for i, s := range batch {
		if err := ValidateTxn(s.Txn); err != nil {
			return &SightingError{Index: i, Err: Wrap("upsert provider txn", s.Txn.Provider+"/"+s.Txn.ID, err)}
		}
	}
	return nil
}

// ConflictKey identifies a conflict's quarantine item, so that a sighting
// seen again is not quarantined twice.
func ConflictKey(q QuarantineItem) string {
	return q.Source + "\x00" + q.Origin + "\x00" + q.Field + "\x00" + q.Reason + "\x00" + string(q.Raw)
}
