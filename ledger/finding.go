package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// Kind is the kind of a finding.
type Kind string

// Finding kinds (docs/design.md).
const (
	KindDuplicateCharge   Kind = "duplicate_charge"
	KindMissingAtProvider Kind = "missing_at_provider"
	KindUnknownCharge     Kind = "unknown_charge"
	KindAmountMismatch    Kind = "amount_mismatch"
	KindCurrencyMismatch  Kind = "currency_mismatch"
	KindStatusMismatch    Kind = "status_mismatch"
	KindStuckIntent       Kind = "stuck_intent"
	// KindDisputedCharge: the customer disputed a linked charge
	// (chargeback). It stays open while the dispute is open or lost, and
	// is resolved when the dispute is won and the funds come back.
	KindDisputedCharge Kind = "disputed_charge"
	// KindUnrecordedRefund: the provider refunded or reversed money for
	// which the books hold no refund intent.
	KindUnrecordedRefund Kind = "unrecorded_refund"
	// KindDuplicateRefund: two or more provider refunds for one refund
	// intent.
	KindDuplicateRefund Kind = "duplicate_refund"
	// KindUnderpaid: an expected payment is past its due date and what the
	// customer paid, in one part or several, falls short of it.
	KindUnderpaid Kind = "underpaid"
	// KindOverpaid: the customer paid an expected payment more than it
	// asked, and not by paying it twice over (a duplicate).
	KindOverpaid Kind = "overpaid"
	// KindPartiallyPaid: an expected payment not yet due is paid in part.
	// Information, not an alarm: it puts no money at risk, and becomes
	// underpaid if the rest has not come by the due date.
	KindPartiallyPaid Kind = "partially_paid"
	// KindPayoutMissingAtBank: a provider's payout to a bank account has
	// not reached it after its expected arrival and the account's arrival
	// days.
	KindPayoutMissingAtBank Kind = "payout_missing_at_bank"
	// KindPayoutAmountMismatch: a payout reached the bank for another
	// amount than the provider paid out.
	KindPayoutAmountMismatch Kind = "payout_amount_mismatch"
	// KindPayoutDuplicatedAtBank: a payout reached the bank more than
	// once.
	KindPayoutDuplicatedAtBank Kind = "payout_duplicated_at_bank"
	// KindUnexplainedBankCredit: a credit on a configured bank account
	// matches no payout.
	KindUnexplainedBankCredit Kind = "unexplained_bank_credit"
	// KindPayoutCompositionMismatch: a payout's amount is not what the
	// transactions it carries add up to in the books.
	KindPayoutCompositionMismatch Kind = "payout_composition_mismatch"
	// KindNotPaidOut: a successful charge is in no payout after the
	// provider's payout schedule and the account's arrival days.
	KindNotPaidOut Kind = "not_paid_out"
	// KindUnreadableRecord is a stored intent or provider transaction the
	// matcher cannot evaluate (an amount beyond its range): left out of
	// matching, so that it does not stop the run, and reported.
	KindUnreadableRecord Kind = "unreadable_record"
)

// IntentKindShown is what a finding's intent is, as reports show it: empty
// without an intent, a charge when stored before intents had kinds.
func (f Finding) IntentKindShown() IntentKind {
	switch {
	case f.IntentKey == "":
		return ""
	case f.IntentKind == "":
		return IntentCharge
	}
	return f.IntentKind
}

// Kinds lists every finding kind in report order.
var Kinds = []Kind{KindDuplicateCharge, KindDuplicateRefund, KindDisputedCharge, KindStatusMismatch, KindAmountMismatch,
	KindCurrencyMismatch, KindOverpaid, KindUnderpaid, KindUnknownCharge, KindUnrecordedRefund, KindMissingAtProvider,
	KindStuckIntent, KindPartiallyPaid, KindPayoutMissingAtBank, KindPayoutAmountMismatch, KindPayoutDuplicatedAtBank,
	KindPayoutCompositionMismatch, KindUnexplainedBankCredit, KindNotPaidOut, KindUnreadableRecord}

// BankKinds are the kinds a bank account's run raises: about payouts, the
// account's credits and charges never paid out.
var BankKinds = []Kind{KindPayoutMissingAtBank, KindPayoutAmountMismatch, KindPayoutDuplicatedAtBank,
	KindPayoutCompositionMismatch, KindUnexplainedBankCredit, KindNotPaidOut}

// Severity ranks findings.
type Severity string

// Severities, lowest first.
const (
	SeverityLow    Severity = "low"
	SeverityMedium Severity = "medium"
	SeverityHigh   Severity = "high"
)

// Rank orders severities: low < medium < high.
func (s Severity) Rank() int {
	switch s {
	case SeverityHigh:
		return 3
	case SeverityMedium:
		return 2
	case SeverityLow:
		return 1
	}
	return 0
}

// FindingStatus is where a finding is in its lifecycle.
type FindingStatus string

// Finding statuses.
const (
	FindingOpen         FindingStatus = "open"
	FindingAcknowledged FindingStatus = "acknowledged"
	FindingResolved     FindingStatus = "resolved"
)

// Finding is a discrepancy between the books and the provider's evidence.
type Finding struct {
	// ID is a stable fingerprint of Kind and the evidence (FindingID).
	ID       string
	Kind     Kind
	Severity Severity
	Provider string
	// Account is the provider account whose window judged the evidence;
	// empty is the provider's default account.
	Account string
	// IntentKey is empty for unknown_charge.
	IntentKey string
	// IntentKind says whether the intent is a charge or a refund; empty
	// when there is no intent, and for findings stored before intents had
	// kinds (charges).
	IntentKind IntentKind
	// ProviderTxnIDs are sorted.
	ProviderTxnIDs []string
	Expected       money.Amount
	Actual         money.Amount
	// AtRisk is the money this finding puts at risk.
	AtRisk money.Amount
	// Counterparty is masked.
	Counterparty string
	Detail       string
	// OccurredAt is when the evidence happened; it places the finding in a window.
	OccurredAt     time.Time
	Status         FindingStatus
	FirstSeenAt    time.Time
	LastSeenAt     time.Time
	FirstRunID     int64
	LastRunID      int64
	AcknowledgedAt time.Time
	ResolvedAt     time.Time
	// ResolvedBy is "run" when a run stopped seeing it, "person" when someone
	// resolved it by hand.
	ResolvedBy string
	// Note is the latest note: what the person who acknowledged or resolved
	// it wrote, or why it was resolved or reopened automatically. Every note
	// stays in the finding's history.
	Note string
	// AcknowledgedBy is the person who last acknowledged it.
	AcknowledgedBy string
	// Resolver is who resolved it: a person, or "run N".
	Resolver string
	// Suggestion is the likely other half of an unknown_charge or a
	// missing_at_provider finding; zero when none. It is never applied by
	// itself.
	Suggestion Suggestion
}

// Suggestion pairs an unlinked provider charge (an unknown_charge) with an
// intent the provider shows no charge for (a missing_at_provider) that is
// probably the same payment: the same amount and currency, and a reference
// one typo or one look-alike character away, or the same customer. Both
// findings carry it, each naming the other.
type Suggestion struct {
	// FindingID is the other finding's id.
	FindingID string `json:"finding_id"`
	// IntentKey and TxnID are the pair to match.
	IntentKey string `json:"intent_key"`
	TxnID     string `json:"txn_id"`
	// Reason says why, for people.
	Reason string `json:"reason"`
}

// IsZero reports whether s suggests nothing.
func (s Suggestion) IsZero() bool { return s.FindingID == "" }

// Who resolved a finding.
const (
	ResolvedByRun    = "run"
	ResolvedByPerson = "person"
)

// Escalates reports whether cur is worse than prev: a higher severity, or more
// money at risk in the same currency.
func Escalates(prev, cur Finding) bool {
	if cur.Severity.Rank() > prev.Severity.Rank() {
		return true
	}
	return !cur.AtRisk.IsZero() && cur.AtRisk.Currency == prev.AtRisk.Currency &&
		cur.AtRisk.Value.GreaterThan(prev.AtRisk.Value)
}

// Reopens reports whether seeing a finding again reopens it: it was resolved
// by a run that stopped seeing it, or it was resolved by a person and its
// evidence has changed since: a higher severity, more money at risk, or a
// provider transaction it did not name. A person's resolution stands while
// the evidence is the same. This is the one place the rule is decided; every
// store and surface goes through it.
func Reopens(prev, cur Finding) bool {
	if prev.Status != FindingResolved {
		return false
	}
	return prev.ResolvedBy != ResolvedByPerson || Escalates(prev, cur) || NewEvidence(prev, cur)
}

// NewEvidence reports whether cur names a provider transaction prev did not.
func NewEvidence(prev, cur Finding) bool {
	for _, id := range cur.ProviderTxnIDs {
		if !slices.Contains(prev.ProviderTxnIDs, id) {
			return true
		}
	}
	return false
}

// FindingID fingerprints a finding from its kind, intent key and provider
// transaction ids. The same discrepancy gets the same id in every run.
func FindingID(kind Kind, intentKey string, txnIDs []string) string {
	ids := slices.Clone(txnIDs)
	slices.Sort(ids)
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(intentKey))
	for _, id := range ids {
		h.Write([]byte{0})
		h.Write([]byte(id))
	}
	return "f_" + hex.EncodeToString(h.Sum(nil))[:20]
}

// FindingChange says what upserting a finding changed; the alerting decides
// from it whether to announce.
type FindingChange struct {
	// New is true when the finding was never seen before.
	New bool
	// Reopened is true when a resolved finding was seen again.
	Reopened bool
	// Escalated is true when severity or amount at risk grew.
	Escalated bool
	Previous  Finding
	Finding   Finding
}

// Scope names the provider account of f (Scope): the provider alone for
// its default account.
func (f Finding) Scope() string { return Scope(f.Provider, f.Account) }

// FindingFilter selects findings. Zero fields match everything.
type FindingFilter struct {
	Provider string
	// Accounts, when set, keeps findings of these accounts ("" is the
	// default account).
	Accounts []string
	Statuses []FindingStatus
	Kinds    []Kind
	RunID    int64
	Limit    int
	// From and To, when set, keep findings whose evidence time (OccurredAt)
	// lies in [From, To).
	From, To time.Time
}

// FindingUpdate is a person's acknowledgement, resolution or reopening (To
// FindingOpen, from resolved).
type FindingUpdate struct {
	ID   string
	To   FindingStatus
	Note string
	Now  time.Time
	// Actor is who acts; an empty name is recorded as "unknown".
	Actor Actor
}

// ParseFindingStatus validates s as a FindingStatus.
func ParseFindingStatus(s string) (FindingStatus, bool) {
	switch st := FindingStatus(strings.ToLower(s)); st {
	case FindingOpen, FindingAcknowledged, FindingResolved:
		return st, true
	}
	return "", false
}

// ResolveUnseenParams selects the findings a run no longer sees.
type ResolveUnseenParams struct {
	Provider  string
	Account   string
	From, To  time.Time
	SeenSince time.Time
	// Keep lists kinds this run could not judge (missing_at_provider when
	// its pull failed): their findings stay as they are.
	Keep []Kind
	Note string
	Now  time.Time
	// RunID is the run that no longer sees them, for their history.
	RunID int64
}

// UnseenFilter selects the findings a run may resolve (ListUnseen): those
// of the provider not seen since SeenSince, still open or acknowledged, that
// lie in the window [From, To) (none when both are zero), belong to one of
// IntentKeys, or are among IDs.
type UnseenFilter struct {
	Provider   string
	Account    string
	From, To   time.Time
	IntentKeys []string
	IDs        []string
	SeenSince  time.Time
}

// Resolution is one finding a run resolves and why.
type Resolution struct {
	ID   string
	Note string
}

// ResolveFindingsParams resolves findings a run no longer sees.
type ResolveFindingsParams struct {
	Resolutions []Resolution
	// SeenSince is the start of the run: a finding seen since is left as
	// it is.
	SeenSince time.Time
	Now       time.Time
	// RunID is the run that resolves them, for their history.
	RunID int64
}

// FindingCount is how many findings share a provider, kind and status.
type FindingCount struct {
	Provider string
	Kind     Kind
	Status   FindingStatus
	N        int64
}

// SortedIDs returns ids sorted, never nil: the form findings store and show
// their provider transaction ids in.
func SortedIDs(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// EncodeSuggestion is the stored form of s: JSON, "" when s is zero.
func EncodeSuggestion(s Suggestion) string {
	if s.IsZero() {
		return ""
	}
	b, _ := json.Marshal(s) // strings only: cannot fail
	return string(b)
}

// DecodeSuggestion reads the stored form of a suggestion.
func DecodeSuggestion(s string) (Suggestion, error) {
	var out Suggestion
	if s == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return Suggestion{}, fmt.Errorf("decode suggestion: %w", err)
	}
	return out, nil
}
