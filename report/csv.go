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
var runCSVHeader = append(csvHeader[:len(csvHeader):len(csvHeader)], "status", "first_seen", "last_seen", "run_id", "change")

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
	return []string{f.ID, string(f.Kind), string(f.Severity), f.Provider, f.IntentKey,
		strings.Join(findingJSON(f).ProviderTxnIDs, ";"), ea, ec, aa, ac, ra, rc, f.Counterparty, utc(f.OccurredAt), f.Detail,
		string(f.IntentKindShown())}
}

// findingsCSV writes one row per finding; provider_txn_ids are joined with
// ';'. A findings list adds status, first_seen, last_seen and note.
func findingsCSV(w io.Writer, fs []ledger.Finding, listed bool) error {
	cw := csv.NewWriter(w)
	header := csvHeader
	if listed {
		header = append(header[:len(header):len(header)], "status", "first_seen", "last_seen", "note")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, f := range fs {
		row := findingRow(f)
		if listed {
			row = append(row, string(f.Status), utc(f.FirstSeenAt), utc(f.LastSeenAt), f.Note)
		}
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
