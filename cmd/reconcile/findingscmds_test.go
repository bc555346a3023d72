package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// auditT0 is the seeded books' clock.
var auditT0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

type seeded struct {
	dup, unknown string
	runID        int64
	kept, csvRow int64
}

// seedBooks writes a small day of M-Pesa books at fixed times: an intent
// with an attempt, two provider transactions with their sources, a run, a
// duplicate charge that alice acknowledged, carol noted and bob resolved,
// an open unknown charge the next day, and two quarantined items.
func seedBooks(t *testing.T, url string) seeded {
	t.Helper()
	ctx := context.Background()
	s, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := database.Migrate(ctx, s); err != nil {
		t.Fatal(err)
	}
	kes := func(v string) money.Amount {
		a, err := money.Parse(v, "KES")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	at := func(m int) time.Time { return auditT0.Add(time.Duration(m) * time.Minute) }
	_, _, err = s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "charge:order-4471", Provider: "mpesa",
		Amount: kes("1500"), Customer: "254712340845", Reference: "ORDER4471"}, CreatedAt: at(-10)})
	must(err)
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "charge:order-4471", Owner: "w1", Lease: time.Minute, Now: at(-9)})
	must(err)
	att, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: in.Key, ClaimToken: in.ClaimToken, Now: at(-9)})
	must(err)
	_, err = s.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: att.ID, ProviderRef: "ws_CO_0211", Outcome: ledger.OutcomeSucceeded, Now: at(-8)})
	must(err)
	for i, id := range []string{"SKL1AAAA01", "SKL1AAAA02"} {
		txn := ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kes("1500"),
			OccurredAt: at(-8 + i), Reference: "ORDER4471", Counterparty: "2547****0845"}
		_, err = s.UpsertProviderTxn(ctx, txn, ledger.Source{Channel: "c2b_confirmation", Ref: id,
			Raw: []byte(`{"TransID":"` + id + `","MSISDN":"254712340845","BillRefNumber":"ORDER4471","TransAmount":"1500.00"}`), ReceivedAt: at(-7 + i)})
		must(err)
	}
	_, err = s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", ID: "SKL1AAAA01", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: kes("1500"), OccurredAt: at(-8)}, ledger.Source{Channel: "statement", Ref: "day.csv:4", ReceivedAt: at(60)})
	must(err)
	from := time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)
	run, err := s.ClaimRun(ctx, ledger.RunClaim{Provider: "mpesa", From: from, To: from.Add(24 * time.Hour), Owner: "test", Lease: time.Hour, Now: at(120)})
	must(err)
	dup := ledger.Finding{ID: ledger.FindingID(ledger.KindDuplicateCharge, "charge:order-4471", []string{"SKL1AAAA01", "SKL1AAAA02"}),
		Kind: ledger.KindDuplicateCharge, Severity: ledger.SeverityHigh, Provider: "mpesa", IntentKey: "charge:order-4471",
		ProviderTxnIDs: []string{"SKL1AAAA02", "SKL1AAAA01"}, Expected: kes("1500"), Actual: kes("3000"), AtRisk: kes("1500"),
		Counterparty: "2547****0845", Detail: "2 successful charges for one intent", OccurredAt: at(-8)}
	unknown := ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{"SKL2BBBB01"}), Kind: ledger.KindUnknownCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{"SKL2BBBB01"}, Actual: kes("250"), AtRisk: kes("250"),
		Detail: "charge links to no intent", OccurredAt: at(24 * 60)}
	_, err = s.UpsertFindings(ctx, []ledger.Finding{dup, unknown}, run.ID, at(121))
	must(err)
	_, err = s.FinishRun(ctx, ledger.RunFinish{ID: run.ID, Owner: "test", State: ledger.RunFinished, Now: at(122),
		Counts: ledger.RunCounts{Intents: 1, Transactions: 3, Matched: 1, Findings: 2, New: 2, DurationMS: 2000}})
	must(err)
	alice := ledger.Actor{Name: "alice", Surface: ledger.SurfaceCLI}
	_, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingAcknowledged, Note: "calling the customer", Now: at(130), Actor: alice})
	must(err)
	_, err = s.NoteFinding(ctx, ledger.FindingNote{ID: dup.ID, Actor: ledger.Actor{Name: "carol", Surface: ledger.SurfaceAPI}, Note: "customer confirms one order", Now: at(140)})
	must(err)
	_, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingResolved, Note: "refunded SKL1AAAA02", Now: at(150),
		Actor: ledger.Actor{Name: "bob@example.com", Surface: ledger.SurfaceWeb}})
	must(err)

	stk, err := os.ReadFile("../../providers/mpesa/testdata/callbacks/stk_success.json")
	must(err)
	var compact bytes.Buffer
	must(json.Compact(&compact, stk))
	kept, err := s.AddQuarantine(ctx, ledger.QuarantineItem{Source: "mpesa_callback", Origin: "http 196.201.214.200 /stk", Field: "body",
		Reason: "kept while the parser was wrong", Raw: compact.Bytes(), At: at(30)})
	must(err)
	csvRow, err := s.AddQuarantine(ctx, ledger.QuarantineItem{Source: "intents_csv", Origin: "in.csv", Line: 3, Field: "amount",
		Reason: "12.345: more decimal places than the currency allows", Raw: []byte("k,mpesa,12.345,KES"), At: at(31)})
	must(err)
	return seeded{dup: dup.ID, unknown: unknown.ID, runID: run.ID, kept: kept, csvRow: csvRow}
}

// TestFindingsShowAndRunsGolden prints what people read, on both engines:
// the same books give byte for byte the same output.
func TestFindingsShowAndRunsGolden(t *testing.T) {
	t.Parallel()
	for _, url := range []string{dbtest.NewSchemaURL(t), "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		sd := seedBooks(t, url)
		for _, c := range []struct {
			name string
			args []string
		}{
			{"findings_show.txt", []string{"findings", "show", sd.dup}},
			{"findings_show.json", []string{"findings", "show", sd.dup, "--format", "json"}},
			{"findings_show.csv", []string{"findings", "show", sd.dup, "--format", "csv"}},
			{"findings_show_unknown.txt", []string{"findings", "show", sd.unknown}},
			{"runs_list.txt", []string{"runs", "list"}},
			{"runs_list.json", []string{"runs", "list", "--format", "json"}},
			{"runs_list.csv", []string{"runs", "list", "--format", "csv"}},
			{"runs_show.txt", []string{"runs", "show", "1"}},
			{"findings_list_day.txt", []string{"findings", "list", "--provider", "mpesa", "--from", "2026-11-03", "--to", "2026-11-04", "--status", "open,acknowledged,resolved"}},
		} {
			code, out, errOut := cli(t, append(c.args, "--database-url", url)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
			}
			golden.Assert(t, "testdata/"+c.name+".golden", out)
		}
	}
}

func TestFindingsActionsRecordWho(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	sd := seedBooks(t, url)
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, append(args, "--database-url", url)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d: %s%s", args, code, want, out, errOut)
		}
		return out + errOut
	}
	// Only a resolved finding reopens; a reopen needs a note.
	run(2, "findings", "reopen", sd.dup)
	run(1, "findings", "reopen", sd.unknown, "--note", "x", "--actor", "dave")
	run(0, "findings", "reopen", sd.dup, "--note", "refund bounced", "--actor", "dave")
	run(0, "findings", "note", sd.dup, "--note", "second refund sent", "--actor", "dave")
	run(0, "findings", "ack", sd.unknown)                               // the operating system user
	run(2, "findings", "ack", sd.unknown, "--actor", "run")             // reserved for runs
	run(1, "findings", "note", "f_nope", "--note", "x", "--actor", "d") // no such finding
	out := run(0, "findings", "show", sd.dup)
	for _, want := range []string{
		"reopened by dave via cli: refund bounced",
		"noted by dave via cli: second refund sent",
		"resolved by bob@example.com via web: refunded SKL1AAAA02",
		"acknowledged by alice via cli: calling the customer",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	out = run(0, "findings", "show", sd.unknown, "--format", "json")
	var d findingDetail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Finding.AcknowledgedBy == "" || len(d.History) != 2 || d.History[1].Surface != "cli" || d.History[1].Actor != d.Finding.AcknowledgedBy {
		t.Fatalf("ack by the OS user: %+v", d)
	}

	// Filters: an unknown provider and bad dates are usage errors.
	run(2, "findings", "list", "--provider", "paypal")
	run(2, "findings", "list", "--from", "yesterday")
	run(2, "findings", "list", "--from", "2026-11-03", "--to", "2026-11-02")
	run(2, "runs", "show", "abc")
	run(1, "runs", "show", "99")
	run(2, "runs", "list", "--provider", "paypal")
	run(1, "findings", "show", "f_nope")

	// Quarantine: dismiss needs a note; a file row cannot be replayed alone;
	// a callback body goes through the intake again.
	run(2, "quarantine", "dismiss", "1")
	if out := run(1, "quarantine", "replay", itoa(sd.csvRow), "--actor", "dave"); !strings.Contains(out, "cannot be replayed alone") ||
		!strings.Contains(out, "in.csv") {
		t.Fatalf("replay of a csv row: %s", out)
	}
	run(0, "quarantine", "dismiss", itoa(sd.csvRow), "--note", "fixed and imported again", "--actor", "dave")
	run(1, "quarantine", "dismiss", itoa(sd.csvRow), "--note", "again", "--actor", "dave")
	if out := run(0, "quarantine", "replay", itoa(sd.kept), "--actor", "dave"); !strings.Contains(out, "replayed") ||
		!strings.Contains(out, "1 new transaction(s)") {
		t.Fatalf("replay of a callback: %s", out)
	}
	run(1, "quarantine", "replay", itoa(sd.kept), "--actor", "dave")
	out = run(0, "quarantine", "list")
	if !strings.Contains(out, "replayed") || !strings.Contains(out, "dismissed") {
		t.Fatalf("quarantine list: %s", out)
	}
	out = run(0, "quarantine", "show", itoa(sd.csvRow))
	if !strings.Contains(out, "dismissed by dave via cli: fixed and imported again") || !strings.Contains(out, "in.csv line 3") {
		t.Fatalf("quarantine show: %s", out)
	}
	out = run(0, "quarantine", "show", itoa(sd.kept), "--format", "csv")
	if !strings.Contains(out, `,replayed,dave,cli,,"replayed: stk_callback, 1 new transaction(s), 1 new source(s)"`) {
		t.Fatalf("quarantine show csv: %s", out)
	}
	run(1, "quarantine", "show", "99999")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
