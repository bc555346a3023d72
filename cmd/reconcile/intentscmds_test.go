package main

import (
	"os"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/golden"
)

// TestUndoAnImportInCents tells docs/operations.md's story on both
// engines: a file of invoices written in cents instead of shillings (and a
// test row) is checked with --dry-run, which writes nothing and shows the
// amounts a hundred times too large; imported all the same, its day is run
// (an underpayment, and a payment missing for the test row); the amount is
// amended and the test row voided, each with who and why; and the next run
// of the day resolves both findings.
func TestUndoAnImportInCents(t *testing.T) {
	t.Parallel()
	onBothEngines(t, func(t *testing.T, u *cliUser) {
		write, do := u.write, u.do
		do(0, "migrate")
		intents := write("invoices.csv", `key,provider,amount,currency,status,created_at,reference
inv:1001,mpesa,150000,KES,succeeded,2026-03-14T09:00:00+03:00,INV1001
inv:1002,mpesa,250000,KES,succeeded,2026-03-14T09:05:00+03:00,INV1002
test:1,mpesa,100,KES,succeeded,2026-03-14T09:10:00+03:00,TEST1
bad:1,mpesa,12.345,KES,succeeded,2026-03-14T09:10:00+03:00,BAD1
`)
		out := do(0, "import", "intents", "--dry-run", intents)
		golden.Assert(t, "testdata/import_intents_dry_run.golden", strings.ReplaceAll(out, u.dir, "DIR"))
		if out := do(0, "findings", "list"); !strings.Contains(out, "No findings.") {
			t.Fatalf("the dry run wrote:\n%s", out)
		}
		do(1, "import", "intents", intents) // the bad row refuses the file
		intents = write("invoices-fixed-row.csv", strings.Replace(mustRead(t, intents), "bad:1,mpesa,12.345", "bad:1,mpesa,12.34", 1))
		do(0, "import", "intents", intents)
		header := "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"
		stmt := write("mpesa-14.csv", header+
			`SCH1AA0001,14-03-2026 10:00:00,14-03-2026 10:00:00,Pay Bill from 2547****0342 - CHEBET Acc. INV1001,Completed,"1,500.00",,"1,500.00",TRUE,Pay Bill Online,2547****0342 - CHEBET,,INV1001
SCH1AA0002,14-03-2026 11:00:00,14-03-2026 11:00:00,Pay Bill from 2547****0343 - OTIENO Acc. INV1002,Completed,"2,500.00",,"4,000.00",TRUE,Pay Bill Online,2547****0343 - OTIENO,,INV1002
SCH1AA0003,14-03-2026 12:00:00,14-03-2026 12:00:00,Pay Bill from 2547****0344 - AMINA Acc. BAD1,Completed,12.34,,"4,012.34",TRUE,Pay Bill Online,2547****0344 - AMINA,,BAD1
`)
		out = do(0, "import", "statement", "--provider", "mpesa", "--dry-run", stmt)
		golden.Assert(t, "testdata/import_statement_dry_run.golden", strings.ReplaceAll(out, u.dir, "DIR"))
		do(0, "import", "statement", "--provider", "mpesa", stmt)
		if out := do(0, "import", "statement", "--provider", "mpesa", "--dry-run", stmt); !strings.Contains(out, "0 new, 3 already present") {
			t.Fatalf("a dry run of an imported statement:\n%s", out)
		}
		out = do(0, "run", "--provider", "mpesa", "--from", "2026-03-14")
		if !strings.Contains(out, "underpaid            2") || !strings.Contains(out, "missing_at_provider  1") {
			t.Fatalf("the day in cents:\n%s", out)
		}

		// The correction, refused where it does not apply.
		out = do(2, "intents", "amend", "inv:1001", "--amount", "1500", "--actor", "amina")
		if !strings.Contains(out, "--note is required") {
			t.Fatalf("amend without a note:\n%s", out)
		}
		do(1, "intents", "amend", "inv:nope", "--amount", "1500", "--note", "x", "--actor", "amina")
		out = do(0, "intents", "amend", "inv:1001", "--amount", "1500", "--note", "imported in cents", "--actor", "amina")
		if !strings.Contains(out, "intent inv:1001 amended: KES 1,500.00 (was KES 150,000.00)") {
			t.Fatalf("amend:\n%s", out)
		}
		do(0, "intents", "amend", "inv:1002", "--amount", "2500", "--note", "imported in cents", "--actor", "amina")
		if out := do(0, "intents", "void", "test:1", "--note", "a test row sent to production", "--actor", "amina"); !strings.Contains(out, "intent test:1 voided: failed (was succeeded)") {
			t.Fatalf("void:\n%s", out)
		}
		out = do(0, "intents", "show", "inv:1001")
		if !strings.Contains(out, "amended by amina via cli: amount KES 150,000.00 -> KES 1,500.00: imported in cents") {
			t.Fatalf("show:\n%s", out)
		}
		out = do(0, "run", "--provider", "mpesa", "--from", "2026-03-14")
		if !strings.Contains(out, "No findings.") || !strings.Contains(out, "3 resolved") {
			t.Fatalf("the day corrected:\n%s", out)
		}
		if out := do(0, "run", "--provider", "mpesa", "--from", "2026-03-14", "--fail-on-findings"); !strings.Contains(out, "No findings.") {
			t.Fatalf("again:\n%s", out)
		}
	})
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
