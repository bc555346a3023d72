package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
)

// dupOfExamples is the duplicate charge the quickstart's files raise
// (README): order-5002 paid twice, SCE2EF4GH5 and SCE2EF4GH6.
const dupOfExamples = "f_dae4f1a68b9bb5213b91"

// examplesBooks imports the quickstart's files into url and runs their
// day, as the README does, with config (examples/config.yaml plus extra).
func examplesBooks(t *testing.T, url, extra string) (do func(at time.Time, want int, args ...string) string, cfg string) {
	t.Helper()
	statements, err := os.ReadFile("../../examples/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg = writeConfig(t, string(statements)+"\n"+extra)
	do = func(at time.Time, want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		code := runAt(context.Background(), append(args, "--database-url", url, "--config", cfg), strings.NewReader(""), &out, &errOut,
			func() time.Time { return at })
		if code != want {
			t.Fatalf("reconcile %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
	day := time.Date(2026, 3, 15, 6, 0, 0, 0, time.UTC)
	do(day, 0, "migrate")
	do(day, 0, "import", "intents", "../../examples/intents.csv")
	do(day, 0, "import", "statement", "--provider", "mpesa", "../../examples/mpesa-statement.csv")
	do(day, 0, "import", "callbacks", "--provider", "mpesa", "../../examples/mpesa-callbacks.jsonl")
	do(day, 0, "run", "--provider", "mpesa", "--from", "2026-03-14")
	return do, cfg
}

// TestRefundFromTheCommandLine: the quickstart's duplicate charge is
// refunded from the command line, above the threshold, so a second person
// approves it (the requester cannot); the refund is made at M-Pesa by hand
// (no initiator is configured), and the finding is resolved by the run of
// the day the reversal shows in the statement, which says the refund is
// confirmed. On both engines.
func TestRefundFromTheCommandLine(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "r.db"), "postgres": dbtest.NewSchemaURL(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			do, _ := examplesBooks(t, url, "approvals:\n  thresholds: {KES: \"1000\"}\n")
			ask := time.Date(2026, 3, 16, 6, 0, 0, 0, time.UTC)
			out := do(ask, 2, "findings", "refund", dupOfExamples, "--actor", "ops@example.com")
			if !strings.Contains(out, "--note is required") {
				t.Fatalf("refund without a note:\n%s", out)
			}
			out = do(ask, 2, "findings", "refund", dupOfExamples, "--note", "x", "--txn", "SCE2EF4GH5", "--actor", "ops@example.com")
			if !strings.Contains(out, "--txn ") {
				t.Fatalf("refund of the original:\n%s", out)
			}
			out = do(ask, 0, "findings", "refund", dupOfExamples, "--note", "customer paid twice", "--actor", "ops@example.com")
			if !strings.Contains(out, "request 1: refund of KES 2,300.00 (SCE2EF4GH6) awaits approval by another operator until 2026-03-17 06:00 UTC") {
				t.Fatalf("refund:\n%s", out)
			}
			out = do(ask.Add(time.Hour), 2, "findings", "approve", dupOfExamples, "--request", "1", "--actor", "ops@example.com")
			if !strings.Contains(out, "the person who asked for it cannot approve it") {
				t.Fatalf("self-approval:\n%s", out)
			}
			out = do(ask.Add(time.Hour), 0, "findings", "approve", dupOfExamples, "--request", "1", "--note", "statement checked", "--actor", "lead@example.com")
			for _, want := range []string{"request 1: refund of KES 2,300.00 (SCE2EF4GH6) applied (asked by ops@example.com, approved by lead@example.com)",
				"refund refund:" + dupOfExamples + ":SCE2EF4GH6 of KES 2,300.00 for SCE2EF4GH6: unknown",
				dupOfExamples + " duplicate_charge: open (resolved when a run sees the money given back)"} {
				if !strings.Contains(out, want) {
					t.Fatalf("approval: no %q in\n%s", want, out)
				}
			}
			do(ask.Add(time.Hour), 1, "findings", "approve", dupOfExamples, "--request", "1", "--actor", "lead@example.com")

			// The reversal, made at M-Pesa by hand, is in the next statement.
			stmt := filepath.Join(t.TempDir(), "mpesa-16.csv")
			if err := os.WriteFile(stmt, []byte("Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,"+
				"Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"+
				`SCG9RV0001,16-03-2026 10:00:00,16-03-2026 10:00:00,Reversal of SCE2EF4GH6,Completed,,"-2,300.00","5,477.60",TRUE,Reversal,2547****0111 - PETER O,SCE2EF4GH6,
`), 0o600); err != nil {
				t.Fatal(err)
			}
			next := time.Date(2026, 3, 17, 6, 0, 0, 0, time.UTC)
			do(next, 0, "import", "statement", "--provider", "mpesa", stmt)
			out = do(next, 0, "run", "--provider", "mpesa", "--from", "2026-03-16")
			if !strings.Contains(out, "No findings.") ||
				!strings.Contains(out, "Run again to confirm refunds: 2026-03-14 00:00 → 2026-03-15 00:00 EAT (+03:00) (run 1), 1 resolved") ||
				!strings.Contains(out, dupOfExamples+"  duplicate_charge charge:order-5002: ") {
				t.Fatalf("the day of the reversal:\n%s", out)
			}
			out = do(next, 0, "findings", "show", dupOfExamples)
			for _, want := range []string{"Status        resolved",
				"refund refund:" + dupOfExamples + ":SCE2EF4GH6 of KES 2,300.00 (asked by ops@example.com, approved by lead@example.com) confirmed by the evidence",
				"request 1: refund of KES 2,300.00 for SCE2EF4GH6, confirmed; asked by ops@example.com via cli",
				"refund_confirmed by run"} {
				if !strings.Contains(out, want) {
					t.Fatalf("after the run: no %q in\n%s", want, out)
				}
			}
			// The refund intent is settled by the evidence; re-running the
			// day changes nothing.
			if out := do(next, 0, "run", "--provider", "mpesa", "--from", "2026-03-16", "--fail-on-findings"); !strings.Contains(out, "No findings.") {
				t.Fatalf("again:\n%s", out)
			}

			// The month's other findings: one written off, one resolved by
			// hand, and the month's close.
			do(next, 0, "findings", "writeoff", "f_c2604d2ca0fc6a6004f4", "--note", "short payment accepted", "--actor", "ops@example.com")
			do(next, 0, "findings", "resolve", "f_d35f4827c5fa91ba2c46", "--note", "order reinstated by the shop", "--actor", "ops@example.com")
			april := time.Date(2026, 4, 2, 6, 0, 0, 0, time.UTC)
			for _, f := range []string{"text", "json", "csv"} {
				out := do(april, 0, "report", "close", "--period", "2026-03", "--provider", "mpesa", "--format", f)
				golden.Assert(t, "testdata/close_2026-03."+f+".golden", out)
			}
			if out := do(april, 2, "report", "close", "--period", "2026-03", "--close", "--note", "March reviewed", "--actor", "lead@example.com"); !strings.Contains(out, "day(s) not run") {
				t.Fatalf("closing a month not run:\n%s", out)
			}
			out = do(april, 0, "report", "close", "--period", "2026-03", "--provider", "mpesa", "--close", "--force", "--note", "March reviewed",
				"--actor", "lead@example.com")
			if !strings.Contains(out, "closed by lead@example.com (cli) on 2026-04-02T06:00:00Z: March reviewed") {
				t.Fatalf("close:\n%s", out)
			}
			do(april, 1, "report", "close", "--period", "2026-03", "--provider", "mpesa", "--close", "--force", "--note", "again")

			// A payment of March that a statement brings in April: raised
			// after the close, and said so.
			late := filepath.Join(t.TempDir(), "mpesa-20.csv")
			if err := os.WriteFile(late, []byte("Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,"+
				"Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"+
				`SCG9LT0001,20-03-2026 10:00:00,20-03-2026 10:00:00,Pay Bill from 2547****0777 - ZAWADI Acc. GIFT,Completed,400.00,,"5,877.60",TRUE,Pay Bill Online,2547****0777 - ZAWADI,,GIFT
`), 0o600); err != nil {
				t.Fatal(err)
			}
			later := april.Add(24 * time.Hour)
			do(later, 0, "import", "statement", "--provider", "mpesa", late)
			do(later, 0, "run", "--provider", "mpesa", "--from", "2026-03-20")
			out = do(later, 0, "report", "close", "--period", "2026-03", "--provider", "mpesa")
			if !strings.Contains(out, "Raised after the month was closed") || !strings.Contains(out, "unknown_charge of 2026-03, KES 400.00 at risk: raised after the close") {
				t.Fatalf("after a late finding:\n%s", out)
			}
		})
	}
}
