package report

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/reconcilehq/reconcile/ledger"
	m "github.com/reconcilehq/reconcile/money"
)

type moneyAmount = m.Amount

type jsonAmount struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

func amountJSON(a m.Amount) jsonAmount {
	if a.IsZero() {
		return jsonAmount{}
	}
	return jsonAmount{Amount: a.Text(), Currency: a.Currency}
}

type jsonFinding struct {
	ID             string     `json:"id"`
	Kind           string     `json:"kind"`
	Severity       string     `json:"severity"`
	IntentKey      string     `json:"intent_key"`
	IntentKind     string     `json:"intent_kind,omitempty"`
	Provider       string     `json:"provider"`
	Account        string     `json:"account,omitempty"`
	ProviderTxnIDs []string   `json:"provider_txn_ids"`
	Expected       jsonAmount `json:"expected"`
	Actual         jsonAmount `json:"actual"`
	Detail         string     `json:"detail"`
	// Suggestion is the likely other half of an unknown_charge or a
	// missing_at_provider; absent when none.
	Suggestion *ledger.Suggestion `json:"suggestion,omitempty"`
}

// jsonListed is a finding in a findings list: the run's fields plus its
// lifecycle.
type jsonListed struct {
	jsonFinding
	AtRisk       jsonAmount `json:"at_risk"`
	Counterparty string     `json:"counterparty"`
	OccurredAt   string     `json:"occurred_at"`
	Status       string     `json:"status"`
	FirstSeen    string     `json:"first_seen"`
	LastSeen     string     `json:"last_seen"`
	Note         string     `json:"note,omitempty"`
}

func findingJSON(f ledger.Finding) jsonFinding {
	ids := slices.Clone(f.ProviderTxnIDs)
	if ids == nil {
		ids = []string{}
	}
	slices.Sort(ids)
	return jsonFinding{ID: f.ID, Kind: string(f.Kind), Severity: string(f.Severity), IntentKey: f.IntentKey,
		IntentKind: string(f.IntentKindShown()), Provider: f.Provider, Account: f.Account, ProviderTxnIDs: ids, Expected: amountJSON(f.Expected),
		Actual: amountJSON(f.Actual), Detail: f.Detail, Suggestion: suggestionJSON(f.Suggestion)}
}

func suggestionJSON(s ledger.Suggestion) *ledger.Suggestion {
	if s.IsZero() {
		return nil
	}
	return &s
}

type jsonSummary struct {
	Intents      int `json:"intents"`
	Transactions int `json:"transactions"`
	Matched      int `json:"matched"`
	Findings     int `json:"findings"`
	// New and Resolved count what this run changed (zero on a dry run);
	// Settled counts the unknown intents it settled.
	New        int   `json:"new"`
	Resolved   int   `json:"resolved"`
	Settled    int   `json:"settled"`
	DurationMS int64 `json:"duration_ms"`
}

// jsonRunFinding is a finding in a run report: what text shows of it, and
// what this run changed about it.
type jsonRunFinding struct {
	jsonFinding
	AtRisk       jsonAmount `json:"at_risk"`
	Counterparty string     `json:"counterparty"`
	OccurredAt   string     `json:"occurred_at"`
	// Status is empty on a dry run (nothing was stored).
	Status    string `json:"status"`
	FirstSeen string `json:"first_seen"`
	LastSeen  string `json:"last_seen"`
	// Change is new, reopened, escalated, resolved, or empty (seen before,
	// unchanged).
	Change string `json:"change"`
}

type jsonRun struct {
	Provider string `json:"provider"`
	Account  string `json:"account,omitempty"`
	From     string `json:"from"`
	To       string `json:"to"`
	// Zone is the provider's zone, in which text shows times.
	Zone    string      `json:"zone"`
	RunID   int64       `json:"run_id"`
	Attempt int         `json:"attempt"`
	DryRun  bool        `json:"dry_run"`
	Summary jsonSummary `json:"summary"`
	// Findings are the findings this run saw; Resolved those of the window
	// it no longer saw.
	Findings []jsonRunFinding `json:"findings"`
	Resolved []jsonRunFinding `json:"resolved"`
	// Evidence says where the evidence came from, when known.
	Evidence string `json:"evidence,omitempty"`
	// PullError says the provider's evidence could not be pulled, so
	// missing_at_provider was not judged.
	PullError string `json:"pull_error,omitempty"`
	// Bank is what a run of a bank account counted.
	Bank *jsonBank `json:"bank,omitempty"`
}

// jsonBank counts a bank account's window: the payouts expected in it and
// those that arrived whole, the credits booked in it, and what was looked
// up beyond it.
type jsonBank struct {
	Payouts     int `json:"payouts"`
	Arrived     int `json:"arrived"`
	Credits     int `json:"credits"`
	LatePayouts int `json:"late_payouts"`
	LateCredits int `json:"late_credits"`
}

func runFindingJSON(f ledger.Finding, change string) jsonRunFinding {
	return jsonRunFinding{jsonFinding: findingJSON(f), AtRisk: amountJSON(f.AtRisk), Counterparty: f.Counterparty,
		OccurredAt: utc(f.OccurredAt), Status: string(f.Status), FirstSeen: utc(f.FirstSeenAt), LastSeen: utc(f.LastSeenAt),
		Change: change}
}

func runJSON(w io.Writer, r Run) error {
	out := jsonRun{Provider: r.Provider, Account: r.Account, From: utc(r.From), To: utc(r.To), Zone: r.zone().String(), RunID: r.RunID,
		Attempt: r.Attempt, DryRun: r.DryRun,
		Summary: jsonSummary{Intents: r.Summary.Intents, Transactions: r.Summary.Transactions,
			Matched: r.Summary.Matched, Findings: len(r.Findings), New: r.New, Resolved: r.Resolved, Settled: r.Settled,
			DurationMS: r.Duration.Milliseconds()},
		Findings: make([]jsonRunFinding, 0, len(r.Findings)), Resolved: make([]jsonRunFinding, 0, len(r.ResolvedFindings)),
		Evidence: r.Evidence, PullError: r.PullError}
	if b := r.Bank; b != nil {
		out.Bank = &jsonBank{Payouts: b.Payouts, Arrived: b.Arrived, Credits: b.Credits, LatePayouts: b.LatePayouts,
			LateCredits: b.LateCredits}
	}
	for _, f := range ordered(r.Findings) {
		out.Findings = append(out.Findings, runFindingJSON(f, r.Changes[f.ID]))
	}
	for _, f := range ordered(r.ResolvedFindings) {
		out.Resolved = append(out.Resolved, runFindingJSON(f, "resolved"))
	}
	return encode(w, out)
}

func findingsJSON(w io.Writer, fs []ledger.Finding) error {
	out := struct {
		Findings []jsonListed `json:"findings"`
	}{Findings: make([]jsonListed, 0, len(fs))}
	for _, f := range fs {
		out.Findings = append(out.Findings, jsonListed{jsonFinding: findingJSON(f), AtRisk: amountJSON(f.AtRisk),
			Counterparty: f.Counterparty, OccurredAt: utc(f.OccurredAt), Status: string(f.Status),
			FirstSeen: utc(f.FirstSeenAt), LastSeen: utc(f.LastSeenAt), Note: f.Note})
	}
	return encode(w, out)
}

func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
