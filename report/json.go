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
	Provider       string     `json:"provider"`
	ProviderTxnIDs []string   `json:"provider_txn_ids"`
	Expected       jsonAmount `json:"expected"`
	Actual         jsonAmount `json:"actual"`
	Detail         string     `json:"detail"`
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
		Provider: f.Provider, ProviderTxnIDs: ids, Expected: amountJSON(f.Expected), Actual: amountJSON(f.Actual),
		Detail: f.Detail}
}

type jsonSummary struct {
	Intents      int `json:"intents"`
	Transactions int `json:"transactions"`
	Matched      int `json:"matched"`
	Findings     int `json:"findings"`
}

type jsonRun struct {
	Provider string        `json:"provider"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Summary  jsonSummary   `json:"summary"`
	Findings []jsonFinding `json:"findings"`
	// PullError says the provider's evidence could not be pulled, so
	// missing_at_provider was not judged.
	PullError string `json:"pull_error,omitempty"`
}

func runJSON(w io.Writer, r Run) error {
	out := jsonRun{Provider: r.Provider, From: utc(r.From), To: utc(r.To),
		Summary: jsonSummary{Intents: r.Summary.Intents, Transactions: r.Summary.Transactions,
			Matched: r.Summary.Matched, Findings: len(r.Findings)},
		Findings: make([]jsonFinding, 0, len(r.Findings)), PullError: r.PullError}
	for _, f := range ordered(r.Findings) {
		out.Findings = append(out.Findings, findingJSON(f))
	}
	return encode(w, out)
}

func findingsJSON(w io.Writer, fs []ledger.Finding) error {
	out := struct {
		Findings []jsonListed `json:"findings"`
	}{Findings: make([]jsonListed, 0, len(fs))}
	for _, f := range ordered(fs) {
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
