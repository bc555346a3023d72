package alerts

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
)

// bankFindings are one finding of each kind of a bank account's runs, as
// the matcher writes them.
func bankFindings(t *testing.T) []ledger.Finding {
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, eat).UTC()
	f := func(kind ledger.Kind, sev ledger.Severity, key string, ids []string, expected, actual, atRisk, detail string) ledger.Finding {
		return ledger.Finding{ID: ledger.FindingID(kind, "", []string{key}), Kind: kind, Severity: sev, Provider: "bank:equity-kes",
			ProviderTxnIDs: ledger.SortedIDs(ids), Expected: kes(t, expected), Actual: kes(t, actual), AtRisk: kes(t, atRisk),
			Detail: detail, OccurredAt: at, Status: ledger.FindingOpen, FirstSeenAt: t0, LastSeenAt: t0, FirstRunID: 4, LastRunID: 4}
	}
	missing := f(ledger.KindPayoutMissingAtBank, ledger.SeverityHigh, "mpesa/SFD1AA0004", []string{"mpesa/SFD1AA0004"},
		"388120.00", "0", "388120.00", "M-Pesa payout SFD1AA0004 of KES 388120.00, expected 2024-05-01, has not reached bank:equity-kes by 2024-05-06 (3 business days later)")
	unexplained := f(ledger.KindUnexplainedBankCredit, ledger.SeverityMedium, "FT26073ABC09@STMT#1.2", []string{"FT26073ABC09@STMT#1.2"},
		"0", "388120.00", "388120.00", `credit of KES 388,120.00 on 2024-05-08 (FT26073ABC09, "MPESA SETTLEMENT 600638") matches no payout although its text names M-Pesa`)
	missing.Suggestion = ledger.Suggestion{FindingID: unexplained.ID, IntentKey: "mpesa/SFD1AA0004", TxnID: "FT26073ABC09@STMT#1.2",
		Reason: "credit FT26073ABC09: the same amount, 2 day(s) after the payout's reach (2024-05-01 to 2024-05-06): a bank holiday?"}
	unexplained.Suggestion = ledger.Suggestion{FindingID: missing.ID, IntentKey: "mpesa/SFD1AA0004", TxnID: "FT26073ABC09@STMT#1.2",
		Reason: "payout SFD1AA0004: the same amount, 2 day(s) after the payout's reach (2024-05-01 to 2024-05-06): a bank holiday?"}
	short := f(ledger.KindPayoutAmountMismatch, ledger.SeverityHigh, "mpesa/SFD1AA0002", []string{"mpesa/SFD1AA0002", "FT1@S#1.1"},
		"912400.00", "902400.00", "10000.00", "M-Pesa payout SFD1AA0002 of KES 912400.00 arrived as KES 902400.00 (FT1 on 2024-05-01): KES 10,000.00 short")
	dup := f(ledger.KindPayoutDuplicatedAtBank, ledger.SeverityMedium, "mpesa/SFD1AA0003", []string{"mpesa/SFD1AA0003", "FT2@S#1.1", "FT3@S#1.2"},
		"5000.00", "10000.00", "5000.00", "M-Pesa payout SFD1AA0003 of KES 5000.00 arrived 2 times (FT2 on 2024-05-01, FT3 on 2024-05-02): KES 5,000.00 more than paid out")
	comp := f(ledger.KindPayoutCompositionMismatch, ledger.SeverityHigh, "mpesa/SFD1AA0005", []string{"mpesa/SFD1AA0005", "mpesa/SCE1AB2CD9"},
		"1000.00", "980.00", "20.00", "M-Pesa payout SFD1AA0005 of KES 1000.00 carries items adding up to KES 980.00 in the books: KES 20.00 unaccounted for; not in the books: SCE1AB2CD9")
	npo := f(ledger.KindNotPaidOut, ledger.SeverityMedium, "stripe/ch_3Pgb", []string{"stripe/ch_3Pgb"}, "25.00", "0", "25.00",
		"Stripe charge ch_3Pgb of KES 25.00 on 2024-04-29 is in no payout: due to be paid out on 2024-05-01 (2 business days later), no later than 2024-05-06")
	return []ledger.Finding{missing, unexplained, short, dup, comp, npo}
}

// TestBankMessagesGolden: what Slack shows of each kind of a bank
// account's findings, opened, and of a bank run's summary.
func TestBankMessagesGolden(t *testing.T) {
	t.Parallel()
	cfg := testConfig(ModeBot, nil)
	fs := bankFindings(t)
	for i, f := range fs {
		a := ledger.Alert{ID: int64(40 + i), Subject: f.ID, Reason: reason{Kind: reasonOpened}.String(), Provider: f.Provider,
			RunID: 4, Severity: f.Severity, Channel: cfg.channelFor(f.Severity), CreatedAt: t0}
		m, err := buildFindingMessage(cfg, a, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkLimits(t, m)
		checkSafe(t, m)
		b, err := json.Marshal(struct {
			Text   string `json:"text"`
			Blocks any    `json:"blocks"`
		}{m.Text, m.Blocks})
		if err != nil {
			t.Fatal(err)
		}
		golden.AssertJSON(t, "testdata/bank_"+string(f.Kind)+".json", b)
	}
	run := ledger.Run{ID: 4, Key: ledger.RunKey("bank:equity-kes", winFrom, winTo), Provider: "bank:equity-kes", From: winFrom,
		To: winTo, State: ledger.RunFinished, Attempt: 1, StartedAt: t0, FinishedAt: t0.Add(time.Second),
		Counts: ledger.RunCounts{Intents: 7, Transactions: 9, Matched: 5, Findings: len(fs), New: len(fs)}}
	summary := buildSummary(cfg, summaryInput{AlertID: 50, Run: run, Findings: fs}, metadata(ledger.Alert{ID: 50}, "run_key"))
	checkLimits(t, summary)
	checkSafe(t, summary)
	b, err := json.Marshal(struct {
		Text   string `json:"text"`
		Blocks any    `json:"blocks"`
	}{summary.Text, summary.Blocks})
	if err != nil {
		t.Fatal(err)
	}
	golden.AssertJSON(t, "testdata/bank_summary.json", b)
}
