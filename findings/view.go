package findings

import (
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The views below are the JSON shapes of the books' records as people and
// programs read them: `findings show`, `runs show` and the findings API
// print a finding this way, and the intents API answers with IntentView.
// They hold no logic: each is made from a record by its View function.

// AmountView is an amount as decimal text and its currency.
type AmountView struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

// ViewAmount is the view of a, or nil for a zero amount.
func ViewAmount(a money.Amount) *AmountView {
	if a.IsZero() {
		return nil
	}
	return &AmountView{Amount: a.Text(), Currency: a.Currency}
}

// FindingView is a finding with its lifecycle.
type FindingView struct {
	ID             string      `json:"id"`
	Kind           string      `json:"kind"`
	Severity       string      `json:"severity"`
	Status         string      `json:"status"`
	Provider       string      `json:"provider"`
	Account        string      `json:"account,omitempty"`
	IntentKey      string      `json:"intent_key"`
	IntentKind     string      `json:"intent_kind,omitempty"`
	ProviderTxnIDs []string    `json:"provider_txn_ids"`
	Expected       *AmountView `json:"expected,omitempty"`
	Actual         *AmountView `json:"actual,omitempty"`
	AtRisk         *AmountView `json:"at_risk,omitempty"`
	Counterparty   string      `json:"counterparty,omitempty"`
	Detail         string      `json:"detail"`
	OccurredAt     time.Time   `json:"occurred_at"`
	FirstSeenAt    time.Time   `json:"first_seen_at"`
	LastSeenAt     time.Time   `json:"last_seen_at"`
	FirstRunID     int64       `json:"first_run_id"`
	LastRunID      int64       `json:"last_run_id"`
	AcknowledgedAt *time.Time  `json:"acknowledged_at,omitempty"`
	AcknowledgedBy string      `json:"acknowledged_by,omitempty"`
	ResolvedAt     *time.Time  `json:"resolved_at,omitempty"`
	ResolvedBy     string      `json:"resolved_by,omitempty"`
	Note           string      `json:"note,omitempty"`
	// Suggestion is the likely other half of an unknown_charge or a
	// missing_at_provider; `findings match` accepts it.
	Suggestion *ledger.Suggestion `json:"suggestion,omitempty"`
}

// OptTime is t in UTC, or nil for the zero time.
func OptTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// ViewFinding is the view of f.
func ViewFinding(f ledger.Finding) FindingView {
	return FindingView{ID: f.ID, Kind: string(f.Kind), Severity: string(f.Severity), Status: string(f.Status),
		Provider: f.Provider, Account: f.Account, IntentKey: f.IntentKey, IntentKind: string(f.IntentKindShown()),
		ProviderTxnIDs: ledger.SortedIDs(f.ProviderTxnIDs),
		Expected:       ViewAmount(f.Expected), Actual: ViewAmount(f.Actual), AtRisk: ViewAmount(f.AtRisk),
		Counterparty: f.Counterparty, Detail: f.Detail, OccurredAt: f.OccurredAt.UTC(), FirstSeenAt: f.FirstSeenAt.UTC(),
		LastSeenAt: f.LastSeenAt.UTC(), FirstRunID: f.FirstRunID, LastRunID: f.LastRunID,
		AcknowledgedAt: OptTime(f.AcknowledgedAt), AcknowledgedBy: f.AcknowledgedBy, ResolvedAt: OptTime(f.ResolvedAt),
		ResolvedBy: resolvedByOf(f), Note: f.Note, Suggestion: suggestionOf(f.Suggestion)}
}

func suggestionOf(s ledger.Suggestion) *ledger.Suggestion {
	if s.IsZero() {
		return nil
	}
	return &s
}

// resolvedByOf names who resolved a finding: the person, or the run.
func resolvedByOf(f ledger.Finding) string {
	if f.Status != ledger.FindingResolved {
		return ""
	}
	if f.Resolver != "" {
		return f.Resolver
	}
	return f.ResolvedBy // resolved before people were recorded
}

// EventView is one event of a history.
type EventView struct {
	At      time.Time `json:"at"`
	Action  string    `json:"action"`
	Actor   string    `json:"actor"`
	Surface string    `json:"surface"`
	RunID   int64     `json:"run_id,omitempty"`
	Note    string    `json:"note,omitempty"`
}

// ViewHistory is the view of a history, in its order.
func ViewHistory(evs []ledger.HistoryEvent) []EventView {
	out := make([]EventView, 0, len(evs))
	for _, ev := range evs {
		out = append(out, EventView{At: ev.At.UTC(), Action: string(ev.Action), Actor: ev.Who(), Surface: string(ev.Surface),
			RunID: ev.RunID, Note: ev.Note})
	}
	return out
}

// SourceView is one channel a provider transaction was seen through.
type SourceView struct {
	Channel    string    `json:"channel"`
	Ref        string    `json:"ref"`
	ReceivedAt time.Time `json:"received_at"`
	// Raw is the payload as received, with phone numbers, e-mail addresses
	// and other long digit runs masked.
	Raw string `json:"raw"`
}

// TxnView is a provider transaction with its sources.
type TxnView struct {
	ID           string       `json:"id"`
	Type         string       `json:"type"`
	Status       string       `json:"status"`
	Amount       *AmountView  `json:"amount,omitempty"`
	OccurredAt   time.Time    `json:"occurred_at"`
	Reference    string       `json:"reference,omitempty"`
	ProviderRef  string       `json:"provider_ref,omitempty"`
	Counterparty string       `json:"counterparty,omitempty"`
	LinkedID     string       `json:"linked_id,omitempty"`
	Sources      []SourceView `json:"sources"`
}

// ViewTxn is the view of t, its counterparty and payloads masked.
func ViewTxn(t ledger.ProviderTxn) TxnView {
	v := TxnView{ID: t.ID, Type: string(t.Type), Status: string(t.Status), Amount: ViewAmount(t.Amount),
		OccurredAt: t.OccurredAt.UTC(), Reference: t.Reference, ProviderRef: t.ProviderRef,
		Counterparty: ledger.MaskCustomer(t.Counterparty), LinkedID: t.LinkedID, Sources: []SourceView{}}
	for _, s := range t.Sources {
		v.Sources = append(v.Sources, SourceView{Channel: s.Channel, Ref: s.Ref, ReceivedAt: s.ReceivedAt.UTC(), Raw: ledger.MaskPayload(s.Raw)})
	}
	return v
}

// AttemptView is one try at the provider. What the provider or the worker
// said about it is under "error" when the try failed or its outcome is
// unknown, and under "message" otherwise (an accepted STK push, a success).
type AttemptView struct {
	Number      int        `json:"number"`
	Outcome     string     `json:"outcome"`
	ProviderRef string     `json:"provider_ref,omitempty"`
	Message     string     `json:"message,omitempty"`
	Error       string     `json:"error,omitempty"`
	StartedAt   time.Time  `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
}

// IntentView is an intent with its attempts, the customer masked.
type IntentView struct {
	Key       string            `json:"key"`
	Kind      string            `json:"kind"`
	RefundOf  string            `json:"refund_of,omitempty"`
	Provider  string            `json:"provider"`
	Account   string            `json:"account,omitempty"`
	Amount    string            `json:"amount"`
	Currency  string            `json:"currency"`
	Customer  string            `json:"customer,omitempty"`
	Reference string            `json:"reference"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	State     string            `json:"state"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
	// DueAt and Tolerance are an expected payment's.
	DueAt     *time.Time    `json:"due_at,omitempty"`
	Tolerance string        `json:"tolerance,omitempty"`
	Attempts  []AttemptView `json:"attempts,omitempty"`
}

// ViewIntent is the view of in with its attempts.
func ViewIntent(in ledger.Intent, attempts []ledger.Attempt) IntentView {
	v := IntentView{Key: in.Key, Kind: string(in.Kind), RefundOf: in.RefundOf, Provider: in.Provider, Account: in.Account, Amount: in.Amount.Text(), Currency: in.Amount.Currency,
		Customer: ledger.MaskCustomer(in.Customer), Reference: in.Reference, Metadata: in.Metadata, State: string(in.State),
		CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt}
	if !in.DueAt.IsZero() {
		due := in.DueAt
		v.DueAt = &due
	}
	if !in.Tolerance.IsZero() {
		v.Tolerance = in.Tolerance.Text()
	}
	for _, a := range attempts {
		av := AttemptView{Number: a.Number, Outcome: string(a.Outcome), ProviderRef: a.ProviderRef, StartedAt: a.StartedAt}
		switch a.Outcome {
		case ledger.OutcomeFailed, ledger.OutcomeUnknown:
			av.Error = a.Error
		default:
			av.Message = a.Error
		}
		if !a.FinishedAt.IsZero() {
			f := a.FinishedAt
			av.FinishedAt = &f
		}
		v.Attempts = append(v.Attempts, av)
	}
	return v
}

// DetailView is a finding with its evidence and history, as `findings
// show --format json` and GET /v1/findings/{id} print it.
type DetailView struct {
	Finding      FindingView `json:"finding"`
	Intent       *IntentView `json:"intent,omitempty"`
	Transactions []TxnView   `json:"transactions"`
	History      []EventView `json:"history"`
	// Remedies are the refunds, write-offs, retries and cancels asked for,
	// oldest first; left out when there are none.
	Remedies []RemedyView `json:"remedies,omitempty"`
	// Payout is, for a bank account's finding, its payouts with what they
	// carry and the account's lines.
	Payout *PayoutDetailView `json:"payout,omitempty"`
}

// RemedyView is a remedy (a request awaiting approval, or applied), with
// the refund it created and what that refund waits for.
type RemedyView struct {
	ID           int64       `json:"id"`
	Kind         string      `json:"kind"`
	Status       string      `json:"status"`
	Amount       *AmountView `json:"amount,omitempty"`
	TxnID        string      `json:"txn_id,omitempty"`
	IntentKey    string      `json:"intent_key,omitempty"`
	Note         string      `json:"note"`
	RequestedBy  string      `json:"requested_by"`
	RequestedVia string      `json:"requested_via"`
	RequestedAt  time.Time   `json:"requested_at"`
	ExpiresAt    *time.Time  `json:"expires_at,omitempty"`
	DecidedBy    string      `json:"decided_by,omitempty"`
	DecidedVia   string      `json:"decided_via,omitempty"`
	DecidedAt    *time.Time  `json:"decided_at,omitempty"`
	DecisionNote string      `json:"decision_note,omitempty"`
	AppliedAt    *time.Time  `json:"applied_at,omitempty"`
	ConfirmedAt  *time.Time  `json:"confirmed_at,omitempty"`
	// RefundKey and RefundState are the refund intent a refund created.
	RefundKey   string `json:"refund_key,omitempty"`
	RefundState string `json:"refund_state,omitempty"`
	// WaitingFor says what the refund waits for before it can be sent
	// (the charge's receipt), and Waiting since when.
	WaitingFor string     `json:"waiting_for,omitempty"`
	Waiting    *time.Time `json:"waiting_since,omitempty"`
}

// ViewRemedy is the view of m.
func ViewRemedy(m Remedied) RemedyView {
	r := m.Remedy
	v := RemedyView{ID: r.ID, Kind: string(r.Kind), Status: string(r.Status), Amount: ViewAmount(r.Amount), TxnID: r.TxnID,
		IntentKey: r.IntentKey, Note: r.Note, RequestedBy: r.RequestedBy, RequestedVia: string(r.RequestedVia), RequestedAt: r.RequestedAt,
		ExpiresAt: OptTime(r.ExpiresAt), DecidedBy: r.DecidedBy, DecidedVia: string(r.DecidedVia), DecidedAt: OptTime(r.DecidedAt),
		DecisionNote: r.DecisionNote, AppliedAt: OptTime(r.AppliedAt), ConfirmedAt: OptTime(r.ConfirmedAt), RefundKey: r.RefundKey}
	if m.Refund != nil {
		v.RefundState = string(m.Refund.State)
	}
	if m.Wait != nil {
		v.WaitingFor = m.Wait.Reason
		v.Waiting = OptTime(m.Wait.Since)
	}
	return v
}
