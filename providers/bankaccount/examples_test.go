package bankaccount_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
)

// TestExampleWeek: the example week's statements are read whole (they add
// up), and the KES account's week in camt.053 and in MT940 is the same
// money: the same amounts, directions, days, bank references and texts.
func TestExampleWeek(t *testing.T) {
	t.Parallel()
	read := func(a *bankaccount.Account, name string) []providers.Sighting {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := parse(t, a, data, name)
		if err != nil || len(p.rejects) > 0 {
			t.Fatalf("%s: %v %v", name, err, p.rejects)
		}
		return p.sightings
	}
	key := func(ss []providers.Sighting) string {
		var b strings.Builder
		for _, s := range ss {
			fmt.Fprintf(&b, "%s %s %s %s %v %q\n", s.Txn.Type, s.Txn.Amount, s.Bank.BookingDate.Format("2006-01-02"), s.Bank.BankRef,
				s.Bank.Reversal, s.Bank.Text)
		}
		return b.String()
	}
	camt := read(mpesaAccount(t, bankaccount.FormatCamt053), "equity-kes.camt053.xml")
	mt := read(mpesaAccount(t, bankaccount.FormatMT940), "equity-kes.mt940")
	if a, b := key(camt), key(mt); a != b {
		t.Errorf("camt.053 and MT940 differ:\n%s", golden.Diff(a, b))
	}
	if n := len(read(stripeAccount(t, bankaccount.FormatBAI2), "chase-usd.bai2")); n != 8 {
		t.Errorf("%d entries in the BAI2 week", n)
	}
}
