package findings_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/report"
)

func amountOf(t *testing.T, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// What a decision and a remedy tell the person who took them, for each
// verb and each state a request can end in.
func TestWriteOutcomes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)
	unknown := ledger.Finding{ID: "f-unknown\n1", Kind: ledger.KindUnknownCharge, Status: ledger.FindingResolved}
	missing := ledger.Finding{ID: "f-missing", Kind: ledger.KindMissingAtProvider, Status: ledger.FindingResolved}
	link := &ledger.ManualLink{Provider: "mpesa", TxnID: "QK12345678", IntentKey: "inv:8"}
	var b strings.Builder
	write := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("--\n")
	}
	write(findings.WriteDecision(&b, findings.Match, findings.Outcome{Link: link, Changed: []ledger.Finding{unknown, missing}}))
	write(findings.WriteDecision(&b, findings.Unmatch, findings.Outcome{Link: link, Changed: []ledger.Finding{unknown}}))
	write(findings.WriteDecision(&b, findings.Note, findings.Outcome{Changed: []ledger.Finding{missing}}))

	dup := ledger.Finding{ID: "f-dup", Kind: ledger.KindDuplicateCharge, Status: ledger.FindingOpen}
	refund := ledger.Remedy{ID: 7, Kind: ledger.RemedyRefund, TxnID: "QK2", Amount: amountOf(t, "1500"), RequestedBy: "alice",
		ExpiresAt: at.Add(24 * time.Hour)}
	intent := &ledger.Intent{IntentParams: ledger.IntentParams{Key: "refund:f-dup:QK2", Amount: refund.Amount}, State: ledger.StatePending}
	for _, r := range []ledger.Remedy{
		with(refund, ledger.RemedyAwaitingApproval, ""),
		with(refund, ledger.RemedyRejected, "bob"),
		with(refund, ledger.RemedyExpired, ""),
		with(refund, ledger.RemedyApplied, ""),
		with(refund, ledger.RemedyApplied, "bob"),
	} {
		out := findings.Outcome{Remedy: &r, Finding: dup}
		if r.Status == ledger.RemedyApplied {
			out.Intent = intent
		}
		write(findings.WriteRemedy(&b, out))
	}
	retry := ledger.Remedy{ID: 8, Kind: ledger.RemedyRetry, Status: ledger.RemedyApplied, IntentKey: "inv:9"}
	stuck := ledger.Finding{ID: "f-stuck", Kind: ledger.KindStuckIntent, Status: ledger.FindingOpen}
	write(findings.WriteRemedy(&b, findings.Outcome{Remedy: &retry, Finding: stuck,
		Intent: &ledger.Intent{IntentParams: ledger.IntentParams{Key: "inv:9"}, State: ledger.StatePending}}))
	write(findings.WriteRemedy(&b, findings.Outcome{Finding: stuck}))
	golden.Assert(t, "testdata/outcomes.golden", b.String())
}

func with(r ledger.Remedy, s ledger.RemedyStatus, decidedBy string) ledger.Remedy {
	r.Status, r.DecidedBy = s, decidedBy
	return r
}

// A quarantined item in each format: its input masked, its history.
func TestWriteQuarantineItem(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)
	q := ledger.QuarantineItem{ID: 12, Source: "mpesa_callback", Origin: "cb.jsonl", Line: 4, Field: "amount",
		Reason: "more decimal places than the currency allows", Raw: []byte(`{"MSISDN":"254712345678","TransAmount":"1.001"}`),
		At: at, Status: ledger.QuarantineReplayed}
	evs := []ledger.HistoryEvent{{ID: 1, SubjectKind: ledger.SubjectQuarantine, SubjectID: "12", Action: ledger.ActionReplayed,
		Actor: "ops", Surface: ledger.SurfaceCLI, Note: "parser fixed (replayed: c2b_confirmation, 1 new transaction(s), 1 new source(s))",
		At: at.Add(time.Hour)}}
	for _, f := range []report.Format{report.Text, report.JSON, report.CSV} {
		var b strings.Builder
		if err := findings.WriteQuarantineItem(&b, f, q, evs); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "testdata/quarantine."+string(f)+".golden", b.String())
	}
}

// TestWriteOutcome: a decision writes what WriteDecision or WriteRemedy
// says; one that failed writes nothing and returns its error, except a
// request that expired, which is written first.
func TestWriteOutcome(t *testing.T) {
	t.Parallel()
	f := ledger.Finding{ID: "f-1", Kind: ledger.KindUnknownCharge, Status: ledger.FindingResolved}
	expired := findings.Outcome{Finding: f, Remedy: &ledger.Remedy{ID: 7, Kind: ledger.RemedyWriteOff, Status: ledger.RemedyExpired}}
	var b strings.Builder
	err := findings.WriteOutcome(&b, findings.Approve, expired, findings.ErrRequestExpired)
	if !errors.Is(err, findings.ErrRequestExpired) || !strings.HasPrefix(b.String(), "request 7: ") {
		t.Errorf("an expired request: %q (%v)", b.String(), err)
	}
	b.Reset()
	if err := findings.WriteOutcome(&b, findings.Resolve, findings.Outcome{Changed: []ledger.Finding{f}}, ledger.ErrConflict); !errors.Is(err, ledger.ErrConflict) || b.Len() != 0 {
		t.Errorf("a refused decision: %q (%v)", b.String(), err)
	}
	if err := findings.WriteOutcome(&b, findings.Resolve, findings.Outcome{Changed: []ledger.Finding{f}}, nil); err != nil || b.String() != "f-1 unknown_charge: resolved\n" {
		t.Errorf("a decision: %q (%v)", b.String(), err)
	}
}
