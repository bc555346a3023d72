package alerts_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// A queue worker turns Deliver's result into the job's fate: snooze without
// spending an attempt, cancel for good, or retry with backoff.
func ExampleRetryAfter() {
	results := []error{
		nil,
		&alerts.RetryAfterError{AlertID: 7, Wait: 2 * time.Second, Reason: "rate_limited: Slack answered 429, retry after 2s"},
		&alerts.PermanentError{AlertID: 8, Err: errors.New("rejected: Slack error channel_not_found")},
		errors.New("alerts: deliver alert 9: try 1 of 10: server_error: HTTP 500 Internal Server Error"),
	}
	for _, err := range results {
		wait, snooze := alerts.RetryAfter(err)
		switch {
		case err == nil:
			fmt.Println("complete")
		case snooze:
			fmt.Println("snooze", wait) // river.JobSnooze(wait)
		case alerts.IsPermanent(err):
			fmt.Println("cancel:", err) // river.JobCancel(err)
		default:
			fmt.Println("retry:", err) // return err
		}
	}
	// Output:
	// complete
	// snooze 2s
	// cancel: alerts: alert 8: permanent failure: rejected: Slack error channel_not_found
	// retry: alerts: deliver alert 9: try 1 of 10: server_error: HTTP 500 Internal Server Error
}

// A dry run shows what a window's findings would announce. Times are in the
// provider's zone, with the offset.
func ExamplePreviewFindings() {
	nairobi, _ := time.LoadLocation("Africa/Nairobi")
	from := time.Date(2024, 5, 1, 0, 0, 0, 0, nairobi)
	at := func(v string) money.Amount { a, _ := money.Parse(v, "KES"); return a }
	dup := ledger.Finding{ID: "f_0123456789abcdef0123", Kind: ledger.KindDuplicateCharge, Severity: ledger.SeverityHigh,
		Provider: "mpesa", IntentKey: "charge:order-4471", ProviderTxnIDs: []string{"SE41XYZ123", "SE41XYZ124"},
		Expected: at("1500.00"), Actual: at("3000.00"), AtRisk: at("1500.00"), Counterparty: "254712340845 JANE DOE",
		OccurredAt: from.Add(9 * time.Hour), Status: ledger.FindingOpen}
	cfg := alerts.Config{Channel: "C0FINOPS", Zones: map[string]*time.Location{"mpesa": nairobi}}
	run := ledger.Run{Provider: "mpesa", From: from, To: from.Add(24 * time.Hour)}

	var out bytes.Buffer
	if err := alerts.PreviewFindings(&out, cfg, run, []ledger.Finding{dup}); err != nil {
		fmt.Println(err)
	}
	lines := bufio.NewScanner(&out)
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "===") || strings.Contains(l, "Counterparty") {
			fmt.Println(l)
		}
		if lines.Text() == "--- text" && lines.Scan() {
			fmt.Println(lines.Text())
		}
	}
	// Output:
	// === preview · opened · channel C0FINOPS
	// High: duplicate charge on M-Pesa, KES 1,500.00 at risk, intent charge:order-4471 (finding f_0123456789abcdef0123)
	//           "text": "*Counterparty*\n2547****0845 JANE"
	// === preview · summary · channel C0FINOPS
	// M-Pesa reconciliation 2024-05-01 00:00 → 2024-05-02 00:00 EAT (+03:00): 1 open finding, KES 1,500.00 at risk (1 duplicate charge)
}
