package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

func mustDec(t *testing.T, v string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// listed is the ids of the findings linked from a findings page, in order.
func listed(body string) []string {
	var ids []string
	for _, part := range strings.Split(body, `<a href="/console/findings/f_`)[1:] {
		id, _, _ := strings.Cut(part, `"`)
		ids = append(ids, "f_"+id)
	}
	return ids
}

// TestFindingsSearch searches the list by receipt, phone in its full,
// local and masked forms, invoice reference in any spelling and intent
// key, on both engines, and exports what it finds as CSV.
func TestFindingsSearch(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, e.New)
			both := []string{b.unknown, b.dup}
			for _, c := range []struct {
				q    string
				want []string
			}{
				{"SKL2BBBB01", []string{b.unknown}},
				{"skl1aaaa02", []string{b.dup}},
				{"0712340845", both},
				{"+254 712 340 845", both},
				{"2547****0845", both},
				{"0712349999", nil},
				{"order-4471", []string{b.dup}},     // a part of the intent key
				{"Order 4471", []string{b.dup}},     // the intent's reference
				{"ORDER-4417", []string{b.unknown}}, // the receipt's reference
				{b.unknown, []string{b.unknown}},
				{"nothing like it", nil},
			} {
				p := b.get(t, viewer, "/console/findings?status=all&q="+url.QueryEscape(c.q))
				if p.status != http.StatusOK {
					t.Fatalf("q=%q: %d\n%s", c.q, p.status, p.body)
				}
				if got := listed(p.body); strings.Join(got, " ") != strings.Join(c.want, " ") {
					t.Errorf("q=%q: listed %v, want %v", c.q, got, c.want)
				}
			}
			if p := b.get(t, viewer, "/console/findings?q="+strings.Repeat("x", 201)); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "at most 200 characters") {
				t.Fatalf("long search: %d", p.status)
			}

			p := b.get(t, viewer, "/console/findings?status=all&q=0712340845")
			if !strings.Contains(p.body, `href="/console/findings.csv?q=0712340845&amp;status=all"`) {
				t.Fatalf("the export link does not keep the filter:\n%s", p.body)
			}
			p = b.get(t, viewer, "/console/findings.csv?q=0712340845&status=all")
			if p.status != http.StatusOK {
				t.Fatalf("csv: %d\n%s", p.status, p.body)
			}
			golden.Assert(t, "testdata/findings_search.csv.golden", p.body)
			if p := b.get(t, viewer, "/console/findings.csv?kind=nope"); p.status != http.StatusUnprocessableEntity {
				t.Fatalf("csv with a wrong filter: %d", p.status)
			}
			if p := b.get(t, "", "/console/findings.csv"); p.status == http.StatusOK {
				t.Fatalf("csv to nobody: %d", p.status)
			}
		})
	}
}

// TestBulkDecisions acknowledges and resolves several findings with one
// note through the findings service; the money at risk then counts only
// what is still unresolved.
func TestBulkDecisions(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, e.New)
			ids := func(v ...string) url.Values {
				return url.Values{"id": v}
			}
			sent := 0
			form := func(action, note, back string, id ...string) url.Values {
				sent++
				f := ids(id...)
				f.Set("once", fmt.Sprintf("form-token-%010d", sent)) // one rendering of the list each
				f.Set("action", action)
				f.Set("note", note)
				f.Set("back", back)
				return f
			}
			if p := b.post(t, viewer, "/console/findings/bulk", form("ack", "", "", b.unknown), nil); p.status != http.StatusForbidden {
				t.Fatalf("viewer bulk: %d", p.status)
			}
			if p := b.post(t, ops, "/console/findings/bulk", form("ack", "", "", b.unknown), map[string]string{"Origin": "https://evil.example"}); p.status != http.StatusForbidden {
				t.Fatalf("foreign origin bulk: %d", p.status)
			}
			if p := b.post(t, ops, "/console/findings/bulk", form("reopen", "x", "", b.unknown), nil); p.status != http.StatusUnprocessableEntity {
				t.Fatalf("bulk reopen: %d", p.status)
			}
			if p := b.post(t, ops, "/console/findings/bulk", form("ack", "", ""), nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "Check the findings") {
				t.Fatalf("bulk of nothing: %d", p.status)
			}
			if p := b.post(t, ops, "/console/findings/bulk", form("resolve", " ", "", b.unknown, b.dup), nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "Write a note") {
				t.Fatalf("bulk resolve without a note: %d", p.status)
			}
			// Acknowledging an acknowledged finding is allowed (another person
			// looks at it too); a finding that does not exist is refused.
			p := b.post(t, ops, "/console/findings/bulk", form("ack", "looking into the 2 Nov batch", "status=all", b.unknown, b.dup, "f_nope"), nil)
			if p.status != http.StatusConflict || !strings.Contains(p.body, "2 finding(s) acknowledged.") ||
				!strings.Contains(p.body, "f_nope: no such finding") {
				t.Fatalf("bulk ack: %d\n%s", p.status, p.body[strings.Index(p.body, "<main"):])
			}
			if !strings.Contains(p.body, `<option value="all" selected>`) {
				t.Errorf("bulk ack did not show the list it came from")
			}
			// The same form sent again (a reload) changes nothing more.
			again := form("ack", "looking into the 2 Nov batch", "status=all", b.unknown, b.dup)
			again.Set("once", fmt.Sprintf("form-token-%010d", sent-1))
			p = b.post(t, ops, "/console/findings/bulk", again, nil)
			if p.status != http.StatusOK || !strings.Contains(p.body, "0 finding(s) acknowledged. 2 already acknowledged by this form before") {
				t.Fatalf("bulk ack sent again: %d\n%s", p.status, p.body[strings.Index(p.body, "<main"):])
			}
			noToken := form("ack", "", "", b.unknown)
			noToken.Del("once")
			if p := b.post(t, ops, "/console/findings/bulk", noToken, nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "The form is out of date") {
				t.Fatalf("bulk without its token: %d", p.status)
			}
			p = b.post(t, ops, "/console/findings/bulk", form("resolve", "refunded and written off in the Nov close", "status=all", b.unknown, b.dup), nil)
			if p.status != http.StatusOK || !strings.Contains(p.body, "2 finding(s) resolved.") {
				t.Fatalf("bulk resolve: %d\n%s", p.status, p.body)
			}
			if !strings.Contains(p.body, "Nothing at risk in these findings.") {
				t.Errorf("resolved findings still counted at risk")
			}
			if p := b.post(t, ops, "/console/findings/bulk", form("ack", "", "", b.unknown), nil); p.status != http.StatusConflict ||
				!strings.Contains(p.body, b.unknown+": it is resolved") {
				t.Fatalf("bulk ack of a resolved finding: %d", p.status)
			}
			want := "opened run 1 run |acknowledged ops@example.com web looking into the 2 Nov batch|resolved ops@example.com web refunded and written off in the Nov close"
			if got := historyOf(t, b.store, b.unknown); got != want {
				t.Errorf("history:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestCharts draws the charts over findings of every age and status and
// runs of every state: only unresolved money is at risk on a day, ages
// fall in their buckets, unfinished runs are left out.
func TestCharts(t *testing.T) {
	t.Parallel()
	nairobi, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	kes := func(v string) money.Amount { return money.Amount{Value: mustDec(t, v), Currency: "KES"} }
	usd := func(v string) money.Amount { return money.Amount{Value: mustDec(t, v), Currency: "USD"} }
	day := func(d int) time.Time { return now.AddDate(0, 0, -d) }
	fs := []ledger.Finding{
		{Kind: ledger.KindDuplicateCharge, Status: ledger.FindingOpen, AtRisk: kes("1500"), FirstSeenAt: day(0)},
		{Kind: ledger.KindUnknownCharge, Status: ledger.FindingAcknowledged, AtRisk: kes("250"), FirstSeenAt: day(3)},
		{Kind: ledger.KindAmountMismatch, Status: ledger.FindingOpen, AtRisk: kes("100.50"), FirstSeenAt: day(12)},
		{Kind: ledger.KindMissingAtProvider, Status: ledger.FindingOpen, AtRisk: kes("900"), FirstSeenAt: day(45)},
		{Kind: ledger.KindUnderpaid, Status: ledger.FindingResolved, AtRisk: kes("5000"), FirstSeenAt: day(20), ResolvedAt: day(10)},
		{Kind: ledger.KindStuckIntent, Status: ledger.FindingOpen, AtRisk: usd("15"), FirstSeenAt: day(1)},
		{Kind: ledger.KindOverpaid, Status: ledger.FindingOpen, AtRisk: kes("30"), FirstSeenAt: day(2)},
		{Kind: ledger.KindDuplicateCharge, Status: ledger.FindingOpen, FirstSeenAt: day(5)}, // nothing at risk
	}
	runs := []ledger.Run{
		{ID: 3, Provider: "mpesa", State: ledger.RunFinished, From: day(1), Counts: ledger.RunCounts{Transactions: 40, Matched: 38}},
		{ID: 1, Provider: "mpesa", State: ledger.RunFinished, From: day(3), Counts: ledger.RunCounts{Transactions: 10, Matched: 5}},
		{ID: 2, Provider: "stripe", State: ledger.RunFinished, From: day(2), Counts: ledger.RunCounts{}},
		{ID: 4, Provider: "mpesa", State: ledger.RunRunning, From: day(0), Counts: ledger.RunCounts{Transactions: 3}},
	}
	var b strings.Builder
	for _, svg := range riskCharts(fs, now, nairobi) {
		b.WriteString(string(svg) + "\n")
	}
	b.WriteString(string(ageingChart(fs, now)) + "\n")
	b.WriteString(string(matchChart(runs, func(string) *time.Location { return nairobi })) + "\n")
	out := b.String()
	golden.Assert(t, "testdata/charts.svg.golden", out)
	for _, want := range []string{
		"0-1 days: 2; 2-7 days: 3; 8-30 days: 1; 30+ days: 1.", // the resolved underpayment is not aged
		"Last run 3: 95% (38 of 40).",
		"the last 2 runs",
		"2026-11-15: underpaid KES 5,000.00", // at risk until it was resolved
	} {
		if !strings.Contains(out, want) {
			t.Errorf("charts lack %q", want)
		}
	}
	if strings.Contains(out, "2026-11-25: underpaid") {
		t.Errorf("a resolved finding is still at risk after it was resolved")
	}
	if n := len(riskCharts(nil, now, nairobi)); n != 0 {
		t.Errorf("%d charts of nothing", n)
	}
}
