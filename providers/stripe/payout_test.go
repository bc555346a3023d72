package stripe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

// payoutsOf renders the payouts of sightings: each with its arrival, trace,
// descriptor and items.
func payoutsOf(ss []providers.Sighting) string {
	var out []string
	for _, s := range ss {
		if s.Payout == nil && len(s.PayoutItems) == 0 {
			continue
		}
		var items []string
		for _, it := range s.PayoutItems {
			items = append(items, it.PayoutID+"<"+it.TxnID)
		}
		slices.Sort(items)
		line := fmt.Sprintf("%s %s %s", s.Txn.Type, s.Txn.ID, s.Txn.Status)
		if p := s.Payout; p != nil {
			line += fmt.Sprintf(" payout=%s left=%s arrives=%s trace=%q descriptor=%q to=%q", p.ID, p.InitiatedAt.Format(time.RFC3339),
				p.ArrivalAt.Format(time.RFC3339), p.TraceID, p.Descriptor, p.Destination)
		}
		out = append(out, line+" items="+strings.Join(items, ","))
	}
	return strings.Join(out, "\n")
}

// TestPullPayouts: the payouts expected to arrive in the window are
// pulled with their arrival, trace and descriptor, and carry every
// transaction their balance transactions are read as (the charges, the
// refunds and their fees); a payout arriving later is not pulled.
func TestPullPayouts(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PageSize: 1})
	f := fb.fake
	ch1 := f.AddCharge(stripefake.Charge{Amount: 10000, Currency: "usd", Created: T0.Add(-48 * time.Hour)})
	ch2 := f.AddCharge(stripefake.Charge{Amount: 5000, Currency: "usd", Created: T0.Add(-47 * time.Hour)})
	re, err := f.AddRefund(ch2.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ch3 := f.AddCharge(stripefake.Charge{Amount: 700, Currency: "usd", Created: T0.Add(-24 * time.Hour)})
	btxns := func(ids ...string) []string {
		var out []string
		for _, b := range f.BalanceTxnsOf(ids...) {
			out = append(out, b.ID)
		}
		return out
	}
	po1, err := f.AddPayout(stripefake.PayoutSpec{ID: "po_1", Created: T0.Add(-2 * time.Hour), ArrivalDate: T0.Add(10 * time.Hour),
		TraceID: "021000021234567", Descriptor: "STRIPE", Destination: "ba_1", BalanceTxns: btxns(ch1.ID, ch2.ID, re.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddPayout(stripefake.PayoutSpec{ID: "po_2", Created: T0, ArrivalDate: T0.Add(48 * time.Hour), Status: "in_transit",
		BalanceTxns: btxns(ch3.ID)}); err != nil {
		t.Fatal(err)
	}
	var got []providers.Sighting
	if err := c.PullPayouts(context.Background(), T0, T0.Add(24*time.Hour), collect(&got)); err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		checkSighting(t, s)
	}
	want := fmt.Sprintf("payout po_1 succeeded payout=po_1 left=2024-11-23T12:00:00Z arrives=2024-11-24T00:00:00Z trace=\"021000021234567\" descriptor=\"STRIPE\" to=\"ba_1\" items=po_1<%s,po_1<%s,po_1<%s,po_1<%s,po_1<%s",
		ch1.ID, ch2.ID, re.ID, ch1.BalanceTxn, ch2.BalanceTxn)
	items := func(s string) []string { _, after, _ := strings.Cut(s, "items="); return strings.Split(after, ",") }
	// The payout's own balance transaction is a sighting of it too, which
	// knows when it left only.
	var withArrival []providers.Sighting
	for _, s := range got {
		if s.Payout == nil || !s.Payout.ArrivalAt.IsZero() {
			withArrival = append(withArrival, s)
		}
	}
	if g := payoutsOf(withArrival); !slices.Equal(sorted(items(g)), sorted(items(want))) || !strings.HasPrefix(g, strings.Split(want, " items=")[0]) {
		t.Errorf("payouts:\n%s\nwant\n%s", g, want)
	}
	if po1.Amount != 10000-290+5000-145-1000 {
		t.Errorf("po_1 amount %d", po1.Amount)
	}
	var amount string
	for _, s := range got {
		if s.Txn.ID == "po_1" {
			amount = s.Txn.Amount.String()
		}
	}
	if amount != "USD 135.65" {
		t.Errorf("po_1 pulled as %s", amount)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// TestReportPayouts: a payout reconciliation report's rows are the items of
// their automatic payout, with its arrival when the report has
// automatic_payout_effective_at; a row of category payout is a payout.
func TestReportPayouts(t *testing.T) {
	t.Parallel()
	const report = `automatic_payout_id,automatic_payout_effective_at_utc,balance_transaction_id,created_utc,charge_created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_intent_id
po_1QxA2b,2024-11-25 00:00:00,txn_1,2024-11-21 10:00:00,2024-11-21 10:00:00,usd,100.00,3.20,96.80,charge,ch_1,ch_1,pi_1
po_1QxA2b,2024-11-25 00:00:00,txn_2,2024-11-21 11:00:00,,usd,-10.00,0.00,-10.00,refund,re_1,ch_1,pi_1
,,txn_3,2024-11-23 09:00:00,,usd,-86.80,0.00,-86.80,payout,po_1QxA2b,,
`
	got, err := parseReport(t, ReportParser{Clock: fixedClock(T0)}, []byte(report), "payouts.csv")
	if err != nil || len(got.rejects) > 0 {
		t.Fatal(err, got.rejects)
	}
	want := `charge ch_1 succeeded payout=po_1QxA2b left=0001-01-01T00:00:00Z arrives=2024-11-25T00:00:00Z trace="" descriptor="" to="" items=po_1QxA2b<ch_1,po_1QxA2b<txn_1
refund re_1 succeeded payout=po_1QxA2b left=0001-01-01T00:00:00Z arrives=2024-11-25T00:00:00Z trace="" descriptor="" to="" items=po_1QxA2b<re_1
payout po_1QxA2b succeeded payout=po_1QxA2b left=2024-11-23T09:00:00Z arrives=0001-01-01T00:00:00Z trace="" descriptor="" to="" items=`
	if g := payoutsOf(got.sightings); g != want {
		t.Errorf("payouts:\n%s\nwant\n%s", g, want)
	}
	var n int
	for _, s := range got.sightings {
		if s.Payout != nil {
			if err := ledger.ValidatePayout(*s.Payout); err != nil {
				t.Error(err)
			}
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d payouts", n)
	}
}

func TestStripeMockPullPayouts(t *testing.T) {
	t.Parallel()
	c, rec := setupStripeMock(t, Config{PageSize: 20})
	from := time.Date(2009, 2, 13, 0, 0, 0, 0, time.UTC) // the fixtures' arrival_date, 1234567890
	var got []providers.Sighting
	if err := c.PullPayouts(context.Background(), from, from.Add(24*time.Hour), collect(&got)); err != nil {
		t.Fatalf("PullPayouts against stripe-mock: %v", err)
	}
	paths := map[string]bool{}
	for _, e := range rec.exchanges() {
		paths[e.path] = true
		if e.status != 200 {
			t.Errorf("%s %s -> %d %s", e.method, e.path, e.status, e.respBody)
		}
		if e.path == "/v1/payouts" && (e.query.Get("arrival_date[gte]") != "1234483200" || e.query.Get("arrival_date[lt]") != "1234569600") {
			t.Errorf("payouts query %v", e.query)
		}
		if e.path == "/v1/balance_transactions" && e.query.Get("payout") != "po_1Pgc79B7WZ01zgkWu1KToYf4" {
			t.Errorf("balance transactions query %v", e.query)
		}
	}
	if !paths["/v1/payouts"] || !paths["/v1/balance_transactions"] {
		t.Errorf("requests: %v", paths)
	}
	var po *providers.Sighting
	for i := range got {
		checkSighting(t, got[i])
		if got[i].Payout != nil {
			po = &got[i]
		}
	}
	if po == nil || po.Txn.Status != ledger.TxnPending || po.Payout.Destination != "ba_1Pgc79B7WZ01zgkWoU5vBiXt" || len(po.PayoutItems) != 1 ||
		po.PayoutItems[0].TxnID != "ch_1PgafuB7WZ01zgkWXYmPNZs8" {
		t.Errorf("pulled %s\n%s", renderSightings(got), payoutsOf(got))
	}
}
