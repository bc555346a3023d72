package mpesa

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

const balanceHeader = "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"

// week is a paybill's statement, oldest first: two settlements to the bank,
// each sweeping the rows since the one before.
var week = []string{
	"SCB1AA0001,09-03-2026 09:00:00,,Pay Bill from 2547****0111 - MARY A Acc. INV1,Completed,1000.00,,1500.00,TRUE,Pay Bill Online,2547****0111 - MARY A,,INV1",
	"SCB1AA0002,09-03-2026 09:00:05,,Business Pay Bill Charge,Completed,,-10.00,1490.00,TRUE,Business Pay Bill Charge,,SCB1AA0001,",
	"SCB1AA0003,09-03-2026 12:00:00,,Pay Bill from 2547****0222 - ALI H Acc. INV2,Failed,300.00,,1490.00,TRUE,Pay Bill Online,2547****0222 - ALI H,,INV2",
	"SCB1AA0004,09-03-2026 18:00:00,,Organization Settle to Bank,Completed,,-1490.00,0.00,TRUE,Withdraw Funds to Bank,Equity Bank - 0100012345678,,",
	"SCB1AA0005,10-03-2026 10:00:00,,Pay Bill from 2547****0333 - JOY W Acc. INV3,Completed,\"2,000.00\",,\"2,000.00\",TRUE,Pay Bill Online,2547****0333 - JOY W,,INV3",
	"SCB1AA0006,10-03-2026 18:00:00,,Funds Transfer to Bank,Completed,,-1900.00,100.00,TRUE,Organization Settle to Bank,Equity Bank - 0100012345678,,",
}

func statementOf(rows ...string) []byte {
	return []byte(balanceHeader + strings.Join(rows, "\n") + "\n")
}

func reversed(rows []string) []string {
	out := slices.Clone(rows)
	slices.Reverse(out)
	return out
}

// settlements renders what a parse says of payouts: each settlement with
// its items, carried and left balances.
func settlements(p parsed) string {
	var out []string
	for _, s := range p.sightings {
		if s.Payout == nil {
			continue
		}
		var items []string
		for _, it := range s.PayoutItems {
			items = append(items, it.TxnID)
		}
		slices.Sort(items)
		out = append(out, fmt.Sprintf("%s %s at %s carried %s left %s to %q items %s", s.Txn.ID, s.Txn.Amount,
			s.Payout.InitiatedAt.Format("2006-01-02 15:04"), s.Payout.Carried, s.Payout.Left, s.Payout.Destination, strings.Join(items, ",")))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestSettlementsAndTheirRows: a settlement to the bank is a payout that
// carries the completed rows since the settlement before it, with the
// balance it started from and left behind; the same whichever order the
// export lists its rows in.
func TestSettlementsAndTheirRows(t *testing.T) {
	t.Parallel()
	const want = `SCB1AA0004 KES 1490.00 at 2026-03-09 15:00 carried KES 500.00 left KES 0.00 to "Equity Bank - 0100*****5678" items SCB1AA0001,SCB1AA0002
SCB1AA0006 KES 1900.00 at 2026-03-10 15:00 carried KES 0.00 left KES 100.00 to "Equity Bank - 0100*****5678" items SCB1AA0005`
	for name, rows := range map[string][]string{"oldest first": week, "newest first": reversed(week)} {
		p, err := parseStatement(t, statementOf(rows...), "week.csv")
		if err != nil || len(p.rejected) > 0 || len(p.sightings) != len(week) {
			t.Fatalf("%s: %v %v, %d sightings", name, err, p.rejected, len(p.sightings))
		}
		if got := settlements(p); got != want {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
	}
	// A B2C payment is a payout too, but to a customer: no settlement.
	p, err := parseStatement(t, readFixture(t, "testdata/statements/portal_preamble_bom_crlf.csv"), "p.csv")
	if err != nil || len(p.rejected) > 0 {
		t.Fatal(err, p.rejected)
	}
	if got := settlements(p); !strings.HasPrefix(got, "SC71AB12CJ KES 12000.00") || strings.Count(got, "\n") != 0 {
		t.Errorf("settlements = %s", got)
	}
}

// TestRunningBalanceGap: a row missing from the export (the balance of the
// row after it does not follow) refuses the file, naming both rows and the
// money unaccounted for, in either order; a row without a balance starts the
// chain again; a file without a Balance column says it was not checked.
func TestRunningBalanceGap(t *testing.T) {
	t.Parallel()
	gap := slices.Delete(slices.Clone(week), 1, 2) // the charge of SCB1AA0001 is missing
	for name, rows := range map[string][]string{"oldest first": gap, "newest first": reversed(gap)} {
		p, err := parseStatement(t, statementOf(rows...), "gap.csv")
		if err != nil || len(p.rejected) != 1 {
			t.Fatalf("%s: %v %v", name, err, p.rejected)
		}
		r := p.rejected[0]
		if r.Field != "Balance" || !strings.Contains(r.Error(), "KES -10.00 unaccounted for, a row is missing between them") ||
			!strings.Contains(r.Error(), "SCB1AA0001") || !strings.Contains(r.Error(), "SCB1AA0004") {
			t.Errorf("%s: %v", name, r)
		}
	}
	// A blank balance is not checked and restarts the chain.
	blank := slices.Clone(gap)
	blank[2] = strings.Replace(blank[2], "-1490.00,0.00,", "-1490.00,,", 1)
	if p, err := parseStatement(t, statementOf(blank...), "blank.csv"); err != nil || len(p.rejected) != 0 {
		t.Errorf("blank balance: %v %v", err, p.rejected)
	}
	// No Balance column: imported, with a warning.
	noBal := "Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,A/C No.\n" +
		"SCB1AA0001,09-03-2026 09:00:00,Pay Bill,Completed,1000.00,,INV1\n"
	p, err := parseStatement(t, []byte(noBal), "nobal.csv")
	if err != nil || len(p.rejected) != 0 || len(p.sightings) != 1 || !slices.Contains(p.sightings[0].Warnings, noBalanceWarning) {
		t.Errorf("no balance column: %v %v %+v", err, p.rejected, p.sightings)
	}
	// A failed row moves nothing and is not checked (week has one).
	if p, err := parseStatement(t, statementOf(week...), "w.csv"); err != nil || len(p.rejected) != 0 {
		t.Fatal(err, p.rejected)
	}
	// The same export pasted twice: the repeated rows are neither checked
	// nor swept again.
	twice := statementOf(week...)
	twice = append(twice, statementOf(week...)...)
	p, err = parseStatement(t, twice, "twice.csv")
	if err != nil || len(p.rejected) != 0 || len(p.sightings) != 2*len(week) {
		t.Fatalf("twice: %v %v %d", err, p.rejected, len(p.sightings))
	}
	n := 0
	for _, s := range p.sightings {
		if s.Payout != nil {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d settlements in the pasted export, want 2", n)
	}
}
