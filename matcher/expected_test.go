package matcher_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// invoice is an expected payment of KES amount with reference INV2001,
// created at day+9h, in state st, due at due (zero: none).
func invoice(t testing.TB, st ledger.State, amount string, due time.Time, refs ...string) in {
	i := intent(t, "inv:2001", st, amount, 9*time.Hour, refs...)
	i.Kind, i.Reference, i.DueAt = ledger.IntentExpected, "INV2001", due
	return i
}

func paybill(t testing.TB, id, amount string, at time.Duration) tx {
	return charge(t, id, ledger.TxnSucceeded, amount, at, "inv 2001", "")
}

// TestExpectedPayments: an expected payment is paid in as many parts as
// the customer chooses; only what the parts sum to against what was asked,
// and the due date, make findings.
func TestExpectedPayments(t *testing.T) {
	t.Parallel()
	h := time.Hour
	past, future := day.Add(20*h), now.Add(48*h)
	cancelled := charge(t, "ws_CO_1", ledger.TxnFailed, "1500", 9*h+time.Minute, "", "ws_CO_1")
	cases := []struct {
		name    string
		intent  in
		tol     string
		txns    []tx
		want    []string
		atRisk  string
		detail  string
		matched int
	}{
		{name: "paid in two parts", intent: invoice(t, ledger.StatePending, "1500", time.Time{}),
			txns: []tx{paybill(t, "P1", "1000", 10*h), paybill(t, "P2", "500", 12*h)}, matched: 2},
		{name: "paid in two equal parts", intent: invoice(t, ledger.StatePending, "6000", past),
			txns: []tx{paybill(t, "P1", "3000", 10*h), paybill(t, "P2", "3000", 12*h)}, matched: 2},
		{name: "paid in three parts", intent: invoice(t, ledger.StateSucceeded, "9000", time.Time{}),
			txns: []tx{paybill(t, "P1", "3000", 10*h), paybill(t, "P2", "3000", 11*h), paybill(t, "P3", "3000", 12*h)}, matched: 3},
		{name: "paid in uneven parts", intent: invoice(t, ledger.StatePending, "5000", time.Time{}),
			txns: []tx{paybill(t, "P1", "3000", 10*h), paybill(t, "P2", "2000", 12*h)}, matched: 2},
		{name: "within the tolerance", intent: invoice(t, ledger.StatePending, "1500", past), tol: "5",
			txns: []tx{paybill(t, "P1", "1495", 10*h)}, matched: 1},
		{name: "short before the due date is information", intent: invoice(t, ledger.StatePending, "1500", future),
			txns: []tx{paybill(t, "P1", "1000", 10*h)}, want: []string{"partially_paid inv:2001 [P1] low"}, atRisk: "0.00",
			detail: "KES 1,000.00 of KES 1,500.00 paid so far, KES 500.00 to come by 2024-02-09 06:00 UTC (+00:00) (KES 1,000.00 on 2024-02-06 10:00 UTC (+00:00), P1)", matched: 1},
		{name: "short after the due date is underpaid", intent: invoice(t, ledger.StatePending, "1500", past),
			txns: []tx{paybill(t, "P1", "600", 10*h), paybill(t, "P2", "400", 12*h)}, want: []string{"underpaid inv:2001 [P1,P2] medium"},
			atRisk: "500.00", detail: "customer paid KES 1,000.00 of an expected payment of KES 1,500.00: KES 500.00 short, due 2024-02-06 20:00 UTC (+00:00) (2 payments: KES 600.00 on 2024-02-06 10:00 UTC (+00:00), P1; KES 400.00 on 2024-02-06 12:00 UTC (+00:00), P2)",
			matched: 2},
		{name: "the books count it paid but it came short", intent: invoice(t, ledger.StateSucceeded, "1500", time.Time{}),
			txns: []tx{paybill(t, "P1", "1000", 10*h)}, want: []string{"underpaid inv:2001 [P1] medium"}, atRisk: "500.00", matched: 1},
		{name: "paid more", intent: invoice(t, ledger.StatePending, "1500", time.Time{}),
			txns: []tx{paybill(t, "P1", "1000", 10*h), paybill(t, "P2", "700", 12*h)}, want: []string{"overpaid inv:2001 [P1,P2] medium"},
			atRisk: "200.00", matched: 2},
		{name: "paid in full twice is a duplicate", intent: invoice(t, ledger.StatePending, "1500", time.Time{}),
			txns: []tx{paybill(t, "P1", "1500", 10*h), paybill(t, "P2", "1500", 12*h)}, want: []string{"duplicate_charge inv:2001 [P1,P2] high"},
			atRisk: "1500.00", matched: 2},
		{name: "a duplicate refunded is paid", intent: invoice(t, ledger.StatePending, "1500", time.Time{}),
			txns:    []tx{paybill(t, "P1", "1500", 10*h), paybill(t, "P2", "1500", 12*h), reversal(t, "RV1", "P2", "1500", 13*h)},
			matched: 3},
		{name: "an open invoice is not stuck", intent: invoice(t, ledger.StatePending, "1500", time.Time{})},
		{name: "nothing paid by the due date", intent: invoice(t, ledger.StatePending, "1500", past),
			want: []string{"missing_at_provider inv:2001 [] low"}, atRisk: "1500.00",
			detail: "expected payment of KES 1,500.00 not paid, due 2024-02-06 20:00 UTC (+00:00)"},
		{name: "nothing paid though the books say so", intent: invoice(t, ledger.StateSucceeded, "1500", time.Time{}),
			want: []string{"missing_at_provider inv:2001 [] medium"}, atRisk: "1500.00"},
		{name: "a cancelled prompt, then paid by paybill", intent: invoice(t, ledger.StateFailed, "1500", time.Time{}, "ws_CO_1"),
			txns: []tx{cancelled, paybill(t, "P1", "1500", 11*h)}, matched: 2},
		{name: "a cancelled prompt, and nothing by the due date", intent: invoice(t, ledger.StateFailed, "1500", past, "ws_CO_1"),
			txns: []tx{cancelled}, want: []string{"missing_at_provider inv:2001 [] low"}, atRisk: "1500.00",
			detail: "expected payment of KES 1,500.00 not paid, due 2024-02-06 20:00 UTC (+00:00); failed attempt(s) before: ws_CO_1", matched: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			i := c.intent
			if c.tol != "" {
				i.Tolerance = amt(t, c.tol, "KES")
			}
			res := run(t, matcher.Options{}, []in{i}, c.txns)
			if got := brief(res.Findings); !slices.Equal(got, c.want) {
				t.Fatalf("findings:\n got %q\nwant %q", got, c.want)
			}
			if len(res.Findings) > 0 {
				f := res.Findings[0]
				if c.atRisk != "" && f.AtRisk.Text() != c.atRisk {
					t.Errorf("at risk %s, want %s", f.AtRisk.Text(), c.atRisk)
				}
				if c.detail != "" && f.Detail != c.detail {
					t.Errorf("detail\n got %q\nwant %q", f.Detail, c.detail)
				}
				if f.IntentKind != ledger.IntentExpected {
					t.Errorf("intent kind %q", f.IntentKind)
				}
			}
			if res.Summary.Matched != c.matched || len(res.Settlements) != 0 {
				t.Errorf("matched %d want %d, settled %v", res.Summary.Matched, c.matched, res.Settlements)
			}
		})
	}
}

// TestExpectedSumFindingKeepsItsID: a partially paid or underpaid finding
// is the intent's, whatever payments join it, so that it is one finding
// from the first part to the last.
func TestExpectedSumFindingKeepsItsID(t *testing.T) {
	t.Parallel()
	h := time.Hour
	one := run(t, matcher.Options{}, []in{invoice(t, ledger.StatePending, "1500", day.Add(20*h))}, []tx{paybill(t, "P1", "600", 10*h)})
	two := run(t, matcher.Options{}, []in{invoice(t, ledger.StatePending, "1500", day.Add(20*h))},
		[]tx{paybill(t, "P1", "600", 10*h), paybill(t, "P2", "400", 11*h)})
	if len(one.Findings) != 1 || len(two.Findings) != 1 || one.Findings[0].ID != two.Findings[0].ID ||
		one.Findings[0].ID != ledger.FindingID(ledger.KindUnderpaid, "inv:2001", nil) {
		t.Fatalf("%+v\n%+v", one.Findings, two.Findings)
	}
	if !strings.Contains(two.Findings[0].Detail, "P2") || two.Findings[0].AtRisk.Text() != "500.00" {
		t.Fatalf("%+v", two.Findings[0])
	}
}
