package statement_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
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
			if err != nil || c != (statement.Counts{Lines: 6, NewTxns: 6, NewSources: 6, Payouts: 1, PayoutItems: 4}) {
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

// A second export saying another amount for a known receipt is a conflict,
// although its source ref ("statement:<receipt>") is the first export's:
// the first is kept, the row quarantined, the rest of the file imported.
func TestContradictionAcrossFiles(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			im, s := setup(t, e.New)
			first := header + "SC81ZZ12AA,08-03-2024 08:00:00,,Pay Bill,Completed,250.00,,,TRUE,Pay Bill Online,,,HSE-20\n"
			if c, err := importString(t, im, "a.csv", first); err != nil || c.NewTxns != 1 {
				t.Fatalf("first = %+v, %v", c, err)
			}
			second := header +
				"SC81ZZ12AA,08-03-2024 08:00:00,,Pay Bill,Completed,260.00,,,TRUE,Pay Bill Online,,,HSE-20\n" +
				"SC81ZZ12AB,08-03-2024 09:00:00,,Pay Bill,Completed,10.00,,,TRUE,Pay Bill Online,,,HSE-21\n"
			for range 2 {
				c, err := importString(t, im, "b.csv", second)
				if err != nil || c.Conflicts != 1 || c.Lines != 2 {
					t.Fatalf("second = %+v, %v", c, err)
				}
			}
			got, err := s.GetProviderTxn(context.Background(), "mpesa", "SC81ZZ12AA")
			if err != nil || got.Amount.Text() != "250.00" || len(got.Sources) != 1 {
				t.Fatalf("kept = %+v, %v", got, err)
			}
			if _, err := s.GetProviderTxn(context.Background(), "mpesa", "SC81ZZ12AB"); err != nil {
				t.Fatalf("the rest of the file: %v", err)
			}
			q, err := s.ListQuarantine(context.Background(), "mpesa_conflict", 10)
			if err != nil || len(q) != 1 || !strings.Contains(q[0].Reason, "amount KES 260.00, stored KES 250.00") ||
				!strings.HasPrefix(string(q[0].Raw), "SC81ZZ12AA,") {
				t.Fatalf("quarantine = %+v, %v", q, err)
			}
		})
	}
}

// linesParser reads "id,amount" lines, each with the source ref of its id:
// a report layout whose parser does not check rows against each other.
type linesParser struct{}

func (linesParser) ParseStatement(r io.Reader, file string, emit func(providers.Sighting) error,
	reject func(*ledger.ParseError, []byte) error) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		id, amt, _ := strings.Cut(sc.Text(), ",")
		a, err := money.Parse(amt, "KES")
		if err != nil {
			if err := reject(&ledger.ParseError{File: file, Line: n, Field: "amount", Err: err}, []byte(sc.Text())); err != nil {
				return err
			}
			continue
		}
		if err := emit(providers.Sighting{Txn: ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge,
			Status: ledger.TxnSucceeded, Amount: a, OccurredAt: now},
			Source: ledger.Source{Channel: "report", Ref: id, Raw: []byte(sc.Text())}}); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Rows of one file contradicting each other: the first is kept, also when
// they fall in different batches.
func TestContradictionWithinFile(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			im, s := setup(t, e.New)
			im.BatchSize = 2
			data := "A1,10\nA2,5\nA1,20\nA3,7\nA1,10\n"
			for range 2 {
				c, err := im.Import(context.Background(), statement.File{Name: "r.csv", Reader: strings.NewReader(data),
					Parser: linesParser{}, Source: "report"})
				if err != nil || c.Lines != 5 || c.Conflicts != 1 || c.NewSources+c.Duplicates != 4 {
					t.Fatalf("import = %+v, %v", c, err)
				}
			}
			got, err := s.GetProviderTxn(context.Background(), "mpesa", "A1")
			if err != nil || got.Amount.Text() != "10.00" {
				t.Fatalf("kept = %+v, %v", got, err)
			}
			if n := len(allTxns(t, s)); n != 3 {
				t.Fatalf("txns = %d", n)
			}
			q, _ := s.ListQuarantine(context.Background(), "mpesa_conflict", 10)
			if len(q) != 1 || string(q[0].Raw) != "A1,20" {
				t.Fatalf("quarantine = %+v", q)
			}
		})
	}
}

// A file larger than a batch is still imported whole or not at all.
func TestRejectedLineAfterBatches(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			im, s := setup(t, e.New)
			im.BatchSize = 2
			var lines int
			im.Progress = func(n int) { lines = n }
			data := "B1,1\nB2,2\nB3,3\nB4,4\nB5,x\nB6,6\n"
			c, err := im.Import(context.Background(), statement.File{Name: "r.csv", Reader: strings.NewReader(data),
				Parser: linesParser{}, Source: "report"})
			var ie *ledger.RejectedFileError
			if !errors.As(err, &ie) || c.Rejected != 1 || c.Lines != 6 {
				t.Fatalf("import = %+v, %v", c, err)
			}
			if n := len(allTxns(t, s)); n != 0 {
				t.Fatalf("half-imported: %d txns", n)
			}
			if lines != 4 {
				t.Errorf("progress saw %d lines, want 4", lines)
			}
			q, _ := s.ListQuarantine(context.Background(), "report", 10)
			if len(q) != 1 || q[0].Line != 5 || q[0].Field != "amount" {
				t.Fatalf("quarantine = %+v", q)
			}
		})
	}
}
