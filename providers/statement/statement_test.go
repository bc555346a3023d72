package statement_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/statement"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var now = time.Date(2024, 3, 8, 6, 0, 0, 0, time.UTC)

const header = "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"

func setup(t *testing.T, newStore func(testing.TB) ledger.Store) (*statement.Importer, ledger.Store) {
	t.Helper()
	s := newStore(t)
	return &statement.Importer{Store: s, Clock: func() time.Time { return now }}, s
}

func importString(t *testing.T, im *statement.Importer, name, data string) (statement.Counts, error) {
	t.Helper()
	return im.Import(context.Background(), statement.File{Name: name, Reader: strings.NewReader(data),
		Parser: mpesa.StatementParser{Clock: func() time.Time { return now }}, Source: "mpesa_statement"})
}

func allTxns(t *testing.T, s ledger.Store) []ledger.ProviderTxn {
	t.Helper()
	var out []ledger.ProviderTxn
	err := s.ListProviderTxns(context.Background(), ledger.TxnFilter{Provider: "mpesa", From: now.AddDate(-30, 0, 0), To: now.AddDate(1, 0, 0)},
		func(tx ledger.ProviderTxn) error { out = append(out, tx); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportAndReimport(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			im, s := setup(t, e.New)
			data, err := os.ReadFile("../mpesa/testdata/statements/portal_preamble_bom_crlf.csv")
			if err != nil {
				t.Fatal(err)
			}
			c, err := importString(t, im, "march.csv", string(data))
			if err != nil || c != (statement.Counts{Lines: 6, NewTxns: 6, NewSources: 6}) {
				t.Fatalf("first import = %+v, %v", c, err)
			}
			c, err = importString(t, im, "march.csv", string(data))
			if err != nil || c != (statement.Counts{Lines: 6, Duplicates: 6}) {
				t.Fatalf("re-import = %+v, %v", c, err)
			}
			// An overlapping export of another period, under another file
			// name, adds only what is new.
			overlap := header +
				"SC71AB12CD,07-03-2024 09:15:00,,Pay Bill from 2547****0111 - MARY ATIENO Acc. HSE-12,Completed,\"1,131,340.00\",,,TRUE,Pay Bill Online,2547****0111 - MARY ATIENO,,HSE-12\n" +
				"SC81ZZ12AA,08-03-2024 08:00:00,,Pay Bill from 2547****0333 - JOY W Acc. HSE-20,Completed,250.00,,,TRUE,Pay Bill Online,2547****0333 - JOY W,,HSE-20\n"
			c, err = importString(t, im, "week.csv", overlap)
			if err != nil || c != (statement.Counts{Lines: 2, NewTxns: 1, NewSources: 1, Duplicates: 1}) {
				t.Fatalf("overlap = %+v, %v", c, err)
			}
			got, err := s.GetProviderTxn(context.Background(), "mpesa", "SC71AB12CD")
			if err != nil || len(got.Sources) != 1 || got.Sources[0].Ref != "statement:SC71AB12CD" {
				t.Fatalf("txn = %+v, %v", got, err)
			}
			if n := len(allTxns(t, s)); n != 7 {
				t.Errorf("txns = %d, want 7", n)
			}
		})
	}
}

func TestRejectedFileImportsNothing(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			im, s := setup(t, e.New)
			data := header +
				"SB62A1SVRK,06-02-2024 17:52:04,,Pay Bill,Completed,1000.00,,,true,Pay Bill Online,,,INV-1\n" +
				"SB62A1SVRL,06-02-2024 17:52:04,,Pay Bill,Completed,1000.005,,,true,Pay Bill Online,,,INV-2\n" +
				"SB62A1SVRM,06-02-2024 17:52:04,,Pay Bill,Completed,10.00,,,true,Pay Bill Online,,,INV-3\n" +
				"SB62A1SVRN,31-02-2024 17:52:04,,Pay Bill,Completed,10.00,,,true,Pay Bill Online,,,INV-4\n"
			c, err := importString(t, im, "feb.csv", data)
			var ie *ledger.RejectedFileError
			if !errors.As(err, &ie) || len(ie.Problems) != 2 {
				t.Fatalf("err = %v, want an ImportError with 2 problems", err)
			}
			if c.Rejected != 2 || c.Lines != 4 || c.NewTxns != 0 {
				t.Errorf("counts = %+v", c)
			}
			msg := err.Error()
			for _, want := range []string{"feb.csv line 3: field Paid In", "feb.csv line 5: field Completion Time", "nothing imported"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			var pe *ledger.ParseError
			if !errors.As(err, &pe) || pe.Line != 3 {
				t.Errorf("errors.As ParseError = %+v", pe)
			}
			if n := len(allTxns(t, s)); n != 0 {
				t.Fatalf("half-imported: %d txns", n)
			}
			q, err := s.ListQuarantine(context.Background(), "mpesa_statement", 10)
			if err != nil || len(q) != 2 {
				t.Fatalf("quarantine = %+v, %v", q, err)
			}
			slices.SortFunc(q, func(a, b ledger.QuarantineItem) int { return a.Line - b.Line })
			if q[0].Origin != "feb.csv" || q[0].Line != 3 || q[0].Field != "Paid In" ||
				!strings.HasPrefix(string(q[0].Raw), "SB62A1SVRL,") || !strings.Contains(q[0].Reason, "decimal places") {
				t.Errorf("item = %+v", q[0])
			}
			if q[1].Line != 5 || q[1].Field != "Completion Time" {
				t.Errorf("item = %+v", q[1])
			}
		})
	}
}

func TestFileWithoutHeader(t *testing.T) {
	t.Parallel()
	im, s := setup(t, dbtest.SQLite)
	_, err := importString(t, im, "raw.csv", "SB62A1SVRK,06-02-2024 17:52:04,,Pay Bill,Completed,1000.00,,,true,,,,\n")
	var ie *ledger.RejectedFileError
	if !errors.As(err, &ie) || len(ie.Problems) != 1 || ie.Problems[0].Field != "header" {
		t.Fatalf("err = %v", err)
	}
	q, _ := s.ListQuarantine(context.Background(), "mpesa_statement", 10)
	if len(q) != 1 || q[0].Field != "header" || !strings.HasPrefix(string(q[0].Raw), "SB62A1SVRK") {
		t.Errorf("quarantine = %+v", q)
	}
}
