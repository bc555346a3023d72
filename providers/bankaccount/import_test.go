package bankaccount_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/bank"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
	"github.com/reconcilehq/reconcile/providers/statement"
)

// TestImport: a bank statement goes through the statement importer, on
// both engines, like any other: each entry a transaction of the account
// with its entry beside it, a second import changing nothing, and a
// statement of another account or one that does not add up refused whole
// and kept in the quarantine.
func TestImport(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := e.New(t)
			im := &statement.Importer{Store: s, Clock: func() time.Time { return now }}
			a := mpesaAccount(t, bankaccount.FormatMT940)
			imp := func(acc *bankaccount.Account, name string, data []byte) (statement.Counts, error) {
				return im.Import(ctx, statement.File{Name: name, Reader: bytes.NewReader(data), Parser: acc,
					Source: acc.Provider() + "_statement"})
			}
			data := fixture(t, "mt940_kes_mpesa.sta")
			c, err := imp(a, "week.sta", data)
			if err != nil || c != (statement.Counts{Lines: 10, NewTxns: 10, NewSources: 10, Notes: c.Notes}) ||
				c.Notes.Categories[bankaccount.CategoryCredit] != 7 || c.Notes.Categories[bankaccount.CategoryDebit] != 3 {
				t.Fatalf("import = %+v %+v, %v", c, c.Notes, err)
			}
			c, err = imp(a, "week.sta", data)
			if err != nil || c.Duplicates != 10 || c.NewTxns+c.NewSources != 0 {
				t.Fatalf("again = %+v, %v", c, err)
			}
			txns, err := s.GetProviderTxns(ctx, a.Provider(), []string{"RV26072ABC03@STMT260313#72-1.2"})
			if err != nil || len(txns) != 1 || txns[0].Type != ledger.TxnBankDebit || txns[0].Amount.String() != "KES 912400.00" ||
				len(txns[0].Sources) != 1 || !strings.Contains(string(txns[0].Sources[0].Raw), ":61:2603110313RCS912400,00") {
				t.Fatalf("reversal = %+v, %v", txns, err)
			}
			es, err := s.GetBankEntries(ctx, a.Provider(), []string{txns[0].ID})
			if err != nil || len(es) != 1 || !es[0].Reversal || es[0].ValueDate.Format("2006-01-02") != "2026-03-11" ||
				es[0].BookingDate.Format("2006-01-02") != "2026-03-13" || es[0].Text != "REVERSAL DUPLICATE POSTING FT26070ABC03" {
				t.Fatalf("entry = %+v, %v", es, err)
			}

			other := mpesaAccount(t, bankaccount.FormatMT940)
			other.Name, other.Number = "other", "0200000000000"
			_, err = imp(other, "week.sta", data)
			var rf *ledger.RejectedFileError
			if !errors.As(err, &rf) || len(rf.Problems) != 6 || rf.Problems[0].Field != "account" {
				t.Fatalf("another account: %v", err)
			}
			const unbalanced = "camt053_v02_kes_unbalanced.xml"
			_, err = imp(mpesaAccount(t, bankaccount.FormatCamt053), unbalanced, fixture(t, unbalanced))
			var be *bank.BalanceError
			if !errors.As(err, &be) || !strings.Contains(err.Error(), "difference KES +100.00") {
				t.Fatalf("unbalanced: %v", err)
			}
			q, err := s.ListQuarantine(ctx, a.Provider()+"_statement", 100)
			if err != nil || len(q) != 1 || q[0].Origin != unbalanced || !strings.Contains(q[0].Reason, "does not add up") ||
				!strings.Contains(string(q[0].Raw), "CLBD") {
				t.Fatalf("quarantine = %+v, %v", q, err)
			}
			var n int
			err = s.ListProviderTxns(ctx, ledger.TxnFilter{Provider: a.Provider(), From: now.AddDate(0, -1, 0), To: now},
				func(ledger.ProviderTxn) error { n++; return nil })
			if err != nil || n != 10 {
				t.Errorf("%d transactions after the refusals, want 10 (%v)", n, err)
			}
		})
	}
}
