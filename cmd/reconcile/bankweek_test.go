package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
)

// bankWeekPlanted are the findings the example week holds, by kind and the
// payout, credit or charge each is about: everything else in it must stay
// silent (a payout arriving on its third business day, two payouts in one
// credit, a settlement split in two transfers, a credit posted twice and
// reversed, payouts not due yet).
var bankWeekPlanted = []string{
	"bank:equity-kes payout_missing_at_bank mpesa/SCH8ST0801",
	"bank:equity-kes payout_amount_mismatch mpesa/SCJ1ST1101",
	"bank:equity-kes unexplained_bank_credit CSH26071045118@0100012345678-2026-W11#11.6",
	"bank:equity-kes unexplained_bank_credit FT26072ABC08@0100012345678-2026-W11#11.10",
	"bank:chase-usd payout_duplicated_at_bank stripe/po_1QxW9eStrpE5",
	"bank:chase-usd payout_composition_mismatch stripe/po_1QxW9dStrpD4",
	"bank:chase-usd unexplained_bank_credit 0311WIR000017@0314001#3-1.2",
	"bank:chase-usd not_paid_out stripe/ch_3QxS99Np9",
}

// TestBankWeekThroughTheCLI imports the example week (the M-Pesa portal
// statement with its settlements, Stripe's balance and payout reports, the
// KES account's camt.053 and the USD account's BAI2) and reconciles both
// accounts through the command line, on both engines: day by day, then the
// week at once, then again. The findings are exactly the planted ones, and
// nothing changes the second time.
func TestBankWeekThroughTheCLI(t *testing.T) {
	t.Parallel()
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	for name, url := range map[string]string{"postgres": dbtest.PostgresURL(t), "sqlite": "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := func(args ...string) string {
				t.Helper()
				args = append([]string{"--config", filepath.Join(examples, "config.yaml"), "--database-url", url}, args...)
				var out, errOut bytes.Buffer
				if code := runAt(context.Background(), args, strings.NewReader(""), &out, &errOut, func() time.Time { return docsNow }); code != 0 {
					t.Fatalf("reconcile %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
				}
				return out.String()
			}
			if name == "sqlite" {
				cmd("migrate")
			}
			for _, f := range [][2]string{{"mpesa", "mpesa-week.csv"}, {"stripe", "stripe-balance.csv"}, {"stripe", "stripe-payouts.csv"},
				{"bank:equity-kes", "equity-kes.camt053.xml"}, {"bank:chase-usd", "chase-usd.bai2"}} {
				cmd("import", "statement", "--provider", f[0], filepath.Join(examples, f[1]))
			}
			for d := 8; d <= 14; d++ {
				day := time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
				cmd("run", "--provider", "bank:equity-kes", "--from", day)
				cmd("run", "--provider", "bank:chase-usd", "--from", day)
			}
			check := func(when string) {
				t.Helper()
				out := cmd("findings", "list", "--status", "open,acknowledged,resolved", "--format", "csv")
				recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				col := map[string]int{}
				for i, h := range recs[0] {
					col[h] = i
				}
				var got []string
				for _, r := range recs[1:] {
					if r[col["status"]] != "open" {
						t.Errorf("%s: %s is %s", when, r[col["id"]], r[col["status"]])
					}
					// The finding is about the planted subject if its
					// transactions name it.
					subject := "?"
					for _, p := range bankWeekPlanted {
						f := strings.Fields(p)
						if f[0] == r[col["provider"]] && f[1] == r[col["kind"]] && strings.Contains(r[col["provider_txn_ids"]], f[2]) {
							subject = f[2]
						}
					}
					got = append(got, r[col["provider"]]+" "+r[col["kind"]]+" "+subject)
				}
				slices.Sort(got)
				want := slices.Sorted(slices.Values(bankWeekPlanted))
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s: findings\n%s\nwant\n%s", when, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			check("day by day")
			week := cmd("run", "--provider", "bank:equity-kes", "--from", "2026-03-08", "--to", "2026-03-15")
			week += cmd("run", "--provider", "bank:chase-usd", "--from", "2026-03-09", "--to", "2026-03-14")
			if strings.Count(week, "(0 new, 0 resolved)") != 2 {
				t.Errorf("the week after its days changed something:\n%s", week)
			}
			check("the week at once")
		})
	}
}
