package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
	"github.com/reconcilehq/reconcile/report"
)

// outcome reconciles a small M-Pesa day on SQLite at a fixed time.
func outcome(t *testing.T, dry bool) (*reconciler.Outcome, *reconciler.Reconciler) {
	t.Helper()
	day := scenario.Mpesa(11, time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC), 25)
	s := dbtest.SQLite(t)
	if err := day.Load(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rec := reconciler.New(s, reconciler.Config{Clock: func() time.Time { return day.Now }, Owner: "test",
		Grace: map[string]time.Duration{"mpesa": day.Grace}})
	out, err := rec.Run(context.Background(), reconciler.Params{Provider: "mpesa", From: day.From, To: day.To, DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	return out, rec
}

// zoned is the run report as the CLI shows it: times in the provider's zone.
func zoned(t *testing.T, o *reconciler.Outcome) report.Run {
	t.Helper()
	r := report.FromOutcome(o)
	r.Zone = nairobi(t)
	return r
}

func nairobi(t *testing.T) *time.Location {
	t.Helper()
	z, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func TestRunGolden(t *testing.T) {
	t.Parallel()
	out, rec := outcome(t, false)
	for _, f := range []report.Format{report.Text, report.JSON, report.CSV} {
		var buf bytes.Buffer
		if err := report.WriteRun(&buf, f, zoned(t, out)); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "testdata/run."+string(f)+".golden", buf.Bytes())
	}
	if _, err := rec.Acknowledge(context.Background(), out.Findings[0].ID, "calling the customer"); err != nil {
		t.Fatal(err)
	}
	fs, err := rec.ListFindings(context.Background(), ledger.FindingFilter{Provider: "mpesa"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []report.Format{report.Text, report.JSON, report.CSV} {
		var buf bytes.Buffer
		if err := report.WriteFindingsIn(&buf, f, fs, map[string]*time.Location{"mpesa": nairobi(t)}); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "testdata/findings."+string(f)+".golden", buf.Bytes())
	}
	dry, _ := outcome(t, true)
	var buf bytes.Buffer
	if err := report.WriteRun(&buf, report.Text, zoned(t, dry)); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/dryrun.text.golden", buf.Bytes())
}

// TestJSONContract checks the exact shape docs/formats.md describes.
func TestJSONContract(t *testing.T) {
	t.Parallel()
	out, _ := outcome(t, true)
	var buf bytes.Buffer
	if err := report.WriteRun(&buf, report.JSON, report.FromOutcome(out)); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if got := keys(doc); !slices.Equal(got, []string{"attempt", "dry_run", "findings", "from", "provider", "resolved", "run_id",
		"summary", "to", "zone"}) {
		t.Fatalf("top-level keys %v", got)
	}
	var summary map[string]json.RawMessage
	_ = json.Unmarshal(doc["summary"], &summary)
	if got := keys(summary); !slices.Equal(got, []string{"duration_ms", "findings", "intents", "matched", "new", "resolved",
		"settled", "transactions"}) {
		t.Fatalf("summary keys %v", got)
	}
	var findings []map[string]json.RawMessage
	_ = json.Unmarshal(doc["findings"], &findings)
	if len(findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range findings {
		_, hasKind := f["intent_kind"]
		delete(f, "intent_kind")
		if got := keys(f); !slices.Equal(got, []string{"actual", "at_risk", "change", "counterparty", "detail", "expected",
			"first_seen", "id", "intent_key", "kind", "last_seen", "occurred_at", "provider", "provider_txn_ids", "severity",
			"status"}) {
			t.Fatalf("finding keys %v", got)
		}
		var kind, intent string
		var ids []string
		var exp struct{ Amount, Currency string }
		_ = json.Unmarshal(f["kind"], &kind)
		_ = json.Unmarshal(f["intent_key"], &intent)
		_ = json.Unmarshal(f["provider_txn_ids"], &ids)
		_ = json.Unmarshal(f["expected"], &exp)
		if ids == nil || !slices.IsSorted(ids) {
			t.Fatalf("provider_txn_ids %s", f["provider_txn_ids"])
		}
		if (kind == string(ledger.KindUnknownCharge)) != (intent == "") {
			t.Fatalf("%s with intent_key %q", kind, intent)
		}
		if hasKind != (intent != "") {
			t.Fatalf("%s: intent_key %q, intent_kind given %v", kind, intent, hasKind)
		}
		if exp.Currency == "" || strings.ContainsAny(exp.Amount, ",e") || !strings.Contains(string(f["expected"]), `"amount": "`) {
			t.Fatalf("expected %s is not a decimal string with a currency", f["expected"])
		}
	}
}

func TestCSVParses(t *testing.T) {
	t.Parallel()
	out, _ := outcome(t, true)
	var buf bytes.Buffer
	if err := report.WriteRun(&buf, report.CSV, report.FromOutcome(out)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != len(out.Findings)+1 || rows[0][0] != "id" {
		t.Fatalf("csv: %d rows, %v", len(rows), err)
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]report.Format{"text": report.Text, "JSON": report.JSON, " csv ": report.CSV} {
		if got, err := report.ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := report.ParseFormat("yaml"); err == nil {
		t.Error("yaml accepted")
	}
}

// TestRunCarriesWhatTextShows: JSON and CSV carry the run id, the counts of
// new and resolved findings, each finding's status, amount at risk,
// counterparty and time, and the findings the run resolved.
func TestRunCarriesWhatTextShows(t *testing.T) {
	t.Parallel()
	out, _ := outcome(t, false)
	r := zoned(t, out)
	gone := out.Findings[0]
	gone.ID, gone.Status = "f_00000000000000000000", ledger.FindingResolved
	r.ResolvedFindings, r.Resolved = []ledger.Finding{gone}, 1

	var text, js, cs bytes.Buffer
	for f, buf := range map[report.Format]*bytes.Buffer{report.Text: &text, report.JSON: &js, report.CSV: &cs} {
		if err := report.WriteRun(buf, f, r); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(text.String(), "(7 new, 1 resolved)") || !strings.Contains(text.String(), "(run 1, attempt 1)") {
		t.Fatalf("text:\n%s", text.String())
	}
	var doc struct {
		RunID    int64 `json:"run_id"`
		Summary  struct{ New, Resolved int }
		Findings []struct {
			Status, Counterparty, Change string
			OccurredAt                   string                            `json:"occurred_at"`
			AtRisk                       struct{ Amount, Currency string } `json:"at_risk"`
		}
		Resolved []struct{ ID, Change string }
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	f := doc.Findings[0]
	if doc.RunID != 1 || doc.Summary.New != 7 || doc.Summary.Resolved != 1 || f.Status != "open" || f.Change != "new" ||
		f.Counterparty == "" || f.OccurredAt == "" || f.AtRisk.Amount == "" || len(doc.Resolved) != 1 ||
		doc.Resolved[0].Change != "resolved" {
		t.Fatalf("json: %s", js.String())
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	change, runID := slices.Index(rows[0], "change"), slices.Index(rows[0], "run_id")
	if len(rows) != len(out.Findings)+2 || last[0] != gone.ID || change < 0 || last[change] != "resolved" || runID < 0 || last[runID] != "1" {
		t.Fatalf("csv: %v", rows)
	}
}

// TestRefundIntentShown: text, JSON and CSV say when a finding's intent is
// a refund.
func TestRefundIntentShown(t *testing.T) {
	t.Parallel()
	out, _ := outcome(t, false)
	r := zoned(t, out)
	r.Findings = slices.Clone(r.Findings)
	r.Findings[0].IntentKey, r.Findings[0].IntentKind = "refund:order-4471:1", ledger.IntentRefund
	var text, js, cs bytes.Buffer
	for f, buf := range map[report.Format]*bytes.Buffer{report.Text: &text, report.JSON: &js, report.CSV: &cs} {
		if err := report.WriteRun(buf, f, r); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(text.String(), "refund:order-4471:1 (refund)") {
		t.Errorf("text:\n%s", text.String())
	}
	if !strings.Contains(js.String(), `"intent_kind": "refund"`) || !strings.Contains(js.String(), `"intent_kind": "charge"`) {
		t.Errorf("json:\n%s", js.String())
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "intent_kind")
	if col < 0 || rows[1][col] != "refund" || rows[2][col] != "charge" {
		t.Errorf("csv: %v", rows[:3])
	}
}
