package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	m "github.com/reconcilehq/reconcile/money"
)

var csvHeader = []string{"id", "kind", "severity", "provider", "intent_key", "provider_txn_ids",
	"expected_amount", "expected_currency", "actual_amount", "actual_currency", "at_risk_amount", "at_risk_currency",
	"counterparty", "occurred_at", "detail", "intent_kind"}

// runCSVHeader adds to csvHeader what a run report carries per row: the
// run, the finding's stored status and what this run changed about it (new,
// reopened, escalated, resolved or empty).
var runCSVHeader = append(csvHeader[:len(csvHeader):len(csvHeader)], "status", "first_seen", "last_seen", "run_id", "change",
	"suggested_finding", "suggested_intent_key", "suggested_txn_id", "suggestion_reason")

// suggestionHeader names the columns of a finding's suggestion, last in
// every findings CSV (empty when none).
var suggestionHeader = []string{"suggested_finding", "suggested_intent_key", "suggested_txn_id", "suggestion_reason"}

func suggestionRow(f ledger.Finding) []string {
	s := f.Suggestion
	return []string{Cell(s.FindingID), Cell(s.IntentKey), Cell(s.TxnID), Cell(s.Reason)}
}

// runCSV writes the findings a run saw, then those it resolved (change
// "resolved"), one row each.
func runCSV(w io.Writer, r Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(runCSVHeader); err != nil {
		return err
	}
	runID := ""
	if r.RunID != 0 {
		runID = strconv.FormatInt(r.RunID, 10)
	}
	write := func(f ledger.Finding, change string) error {
		row := append(findingRow(f), string(f.Status), utc(f.FirstSeenAt), utc(f.LastSeenAt), runID, change)
		row = append(row, suggestionRow(f)...)
		return cw.Write(row)
	}
	for _, f := range ordered(r.Findings) {
		if err := write(f, r.Changes[f.ID]); err != nil {
			return err
		}
	}
	for _, f := range ordered(r.ResolvedFindings) {
		if err := write(f, "resolved"); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func findingRow(f ledger.Finding) []string {
	ea, ec := plain(f.Expected)
	aa, ac := plain(f.Actual)
	ra, rc := plain(f.AtRisk)
	// Text that came from outside (keys, ids, counterparties, details,
	// notes) is neutralised; our own amounts and times are not, so a
	// negative amount stays a number.
	return []string{Cell(f.ID), Cell(string(f.Kind)), Cell(string(f.Severity)), Cell(f.Provider), Cell(f.IntentKey),
		Cell(strings.Join(findingJSON(f).ProviderTxnIDs, ";")), ea, ec, aa, ac, ra, rc, Cell(f.Counterparty),
		utc(f.OccurredAt), Cell(f.Detail), string(f.IntentKindShown())}
}

// findingsCSV writes one row per finding; provider_txn_ids are joined with
// ';'. A findings list adds status, first_seen, last_seen and note.
func findingsCSV(w io.Writer, fs []ledger.Finding, listed bool) error {
	cw := csv.NewWriter(w)
	header := csvHeader
	if listed {
		header = append(header[:len(header):len(header)], "status", "first_seen", "last_seen", "note")
	}
	header = append(header[:len(header):len(header)], suggestionHeader...)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, f := range fs {
		row := findingRow(f)
		if listed {
			row = append(row, Cell(string(f.Status)), utc(f.FirstSeenAt), utc(f.LastSeenAt), Cell(f.Note))
		}
		row = append(row, suggestionRow(f)...)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func plain(a m.Amount) (string, string) {
	if a.IsZero() {
		return "", ""
	}
	return a.Text(), a.Currency
}

// Cell neutralises a text cell of a CSV file against formula injection
// (OWASP "CSV Injection"): a cell that starts with =, +, -, @, a tab or a
// carriage return is prefixed with a single quote, so that a spreadsheet
// shows it as text instead of running it (=HYPERLINK(...) from a
// statement's account reference). Apply it to text from outside, not to
// our own decimal amounts.
//
// Control characters other than newline and tab, and invalid bytes, are
// escaped as in Go strings, so that printing the file cannot drive a
// terminal either.
func Cell(s string) string {
	if s == "" {
		return s
	}
	s = ledger.SafeText(s, 0)
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
