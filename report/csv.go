package report

import (
	"encoding/csv"
	"io"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	m "github.com/reconcilehq/reconcile/money"
)

var csvHeader = []string{"id", "kind", "severity", "provider", "intent_key", "provider_txn_ids",
	"expected_amount", "expected_currency", "actual_amount", "actual_currency", "at_risk_amount", "at_risk_currency",
	"counterparty", "occurred_at", "detail"}

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
	for _, f := range ordered(fs) {
		ea, ec := plain(f.Expected)
		aa, ac := plain(f.Actual)
		ra, rc := plain(f.AtRisk)
		row := []string{f.ID, string(f.Kind), string(f.Severity), f.Provider, f.IntentKey,
			strings.Join(findingJSON(f).ProviderTxnIDs, ";"), ea, ec, aa, ac, ra, rc, f.Counterparty, utc(f.OccurredAt), f.Detail}
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
