package stripe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

func collect(ss *[]providers.Sighting) func(providers.Sighting) error {
	return func(s providers.Sighting) error {
		*ss = append(*ss, s)
		return nil
	}
}

// seedWindow stores charges around the window [T0, T0+1h): five inside,
// one just before and one at the end (excluded), a refund inside the window
// of an inside charge and one of the charge from before the window.
func seedWindow(f *stripefake.Server) (in []string) {
	before := f.AddCharge(stripefake.Charge{Amount: 700, Currency: "usd", Created: T0.Add(-time.Second),
		Metadata: map[string]string{MetadataIntentKey: "charge:before"}})
	for i := 0; i < 5; i++ {
		c := f.AddCharge(stripefake.Charge{Amount: int64(1000 + i), Currency: "usd", Created: T0.Add(time.Duration(i) * 10 * time.Minute),
			PaymentIntent: fmt.Sprintf("pi_in%d", i), Customer: "cus_QXgA1b2C3d4E5f",
			Metadata: map[string]string{MetadataIntentKey: fmt.Sprintf("charge:in-%d", i)}})
		in = append(in, c.ID)
	}
	f.AddCharge(stripefake.Charge{Amount: 900, Currency: "usd", Created: T0.Add(time.Hour)})
	f.SetClock(fixedClock(T0.Add(55 * time.Minute)))
	if _, err := f.AddRefund(in[1], 400); err != nil {
		panic(err)
	}
	if _, err := f.AddRefund(before.ID, 0); err != nil {
		panic(err)
	}
	f.SetClock(fixedClock(T0))
	return in
}

func TestPullPagesThroughTheWindow(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PageSize: 2})
	in := seedWindow(fb.fake)
	var got []providers.Sighting
	if err := c.Pull(context.Background(), T0, T0.Add(time.Hour), collect(&got)); err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		checkSighting(t, s)
	}
	golden.Assert(t, "testdata/pull_window.golden", renderSightings(got))

	ids := map[string]providers.Sighting{}
	for _, s := range got {
		if _, dup := ids[s.Txn.ID]; dup {
			t.Errorf("%s emitted twice", s.Txn.ID)
		}
		ids[s.Txn.ID] = s
	}
	for _, id := range in {
		if _, ok := ids[id]; !ok {
			t.Errorf("charge %s in the window was not pulled", id)
		}
	}
	if len(ids) != 7 {
		t.Errorf("pulled %d transactions, want 5 charges and 2 refunds", len(ids))
	}
	var pages int
	for _, r := range fb.fake.Requests() {
		if r.Path == "/v1/charges" {
			pages++
			if r.Form.Get("created[gte]") != fmt.Sprint(T0.Unix()) || r.Form.Get("created[lt]") != fmt.Sprint(T0.Add(time.Hour).Unix()) ||
				r.Form.Get("limit") != "2" || r.Form.Get("expand[0]") != "data.refunds" {
				t.Errorf("charges request %s", r.Form.Encode())
			}
		}
	}
	if pages != 3 {
		t.Errorf("%d pages of charges, want 3 (5 charges, 2 a page)", pages)
	}
	raw := string(ids[in[0]].Source.Raw)
	if !strings.Contains(raw, `"id":"`+in[0]+`"`) || ids[in[0]].Source.Ref != in[0] || ids[in[0]].Source.Channel != "api" {
		t.Errorf("source = %s %s %s", ids[in[0]].Source.Channel, ids[in[0]].Source.Ref, raw)
	}
}

func TestPullWindowEdges(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{})
	from, to := T0.Add(500*time.Millisecond), T0.Add(10*time.Second+500*time.Millisecond)
	for _, at := range []time.Duration{0, time.Second, 10 * time.Second, 11 * time.Second} {
		fb.fake.AddCharge(stripefake.Charge{ID: fmt.Sprintf("ch_at%d", at/time.Second), Amount: 100, Currency: "usd", Created: T0.Add(at)})
	}
	var got []providers.Sighting
	if err := c.Pull(context.Background(), from, to, collect(&got)); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.Txn.ID)
	}
	sort.Strings(ids)
	if strings.Join(ids, ",") != "ch_at1,ch_at10" {
		t.Errorf("window [%s, %s) pulled %v", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), ids)
	}
	if err := c.Pull(context.Background(), to, from, collect(&got)); err == nil {
		t.Errorf("an inverted window was accepted")
	}
}

func TestPullBalanceTransactions(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{BalanceTransactions: true})
	ch := fb.fake.AddCharge(stripefake.Charge{Amount: 10000, Currency: "usd", Created: T0.Add(time.Minute),
		Metadata: map[string]string{MetadataIntentKey: "charge:order-9"}})
	fb.fake.AddBalanceTxn(stripefake.BalanceTxn{Amount: -9710, Currency: "usd", Created: T0.Add(2 * time.Minute),
		Type: "payout", Source: "po_1PhzTAB7WZ01zgkWn1Ix4Bq2"})
	fb.fake.AddBalanceTxn(stripefake.BalanceTxn{ID: "txn_radar", Amount: -5, Currency: "usd", Created: T0.Add(3 * time.Minute),
		Type: "stripe_fee", Category: "fee"})
	var got []providers.Sighting
	if err := c.Pull(context.Background(), T0, T0.Add(time.Hour), collect(&got)); err != nil {
		t.Fatal(err)
	}
	byID := map[string]ledger.ProviderTxn{}
	for _, s := range got {
		checkSighting(t, s)
		byID[s.Txn.ID] = s.Txn
	}
	fee := byID[ch.BalanceTxn]
	if fee.Type != ledger.TxnFee || fee.Amount.String() != "USD 2.90" || fee.LinkedID != ch.ID {
		t.Errorf("charge fee = %+v", fee)
	}
	if po := byID["po_1PhzTAB7WZ01zgkWn1Ix4Bq2"]; po.Type != ledger.TxnPayout || po.Amount.String() != "USD 97.10" {
		t.Errorf("payout = %+v", po)
	}
	if radar := byID["txn_radar"]; radar.Type != ledger.TxnFee || radar.Amount.String() != "USD 0.05" {
		t.Errorf("Stripe fee = %+v", radar)
	}
}

// Pulling a window twice into the books adds nothing the second time, on
// both engines; a pull that fails half-way leaves what it stored intact and
// the next pull completes it.
func TestPullIntoTheBooksIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			store := eng.New(t)
			c, fb := setupFake(t, Config{PageSize: 2})
			seedWindow(fb.fake)
			ctx := context.Background()
			type counts struct{ txns, sources int }
			pull := func() (counts, error) {
				var n counts
				err := c.Pull(ctx, T0, T0.Add(time.Hour), func(s providers.Sighting) error {
					u, err := store.UpsertProviderTxn(ctx, s.Txn, s.Source)
					if u.Created {
						n.txns++
					}
					if u.SourceAdded {
						n.sources++
					}
					return err
				})
				return n, err
			}

			fb.fake.InjectFault(stripefake.Fault{Method: "GET", Path: "/v1/refunds", Mode: stripefake.Answer, Status: 500})
			first, err := pull()
			if err == nil || providers.KindOf(err) != providers.Ambiguous || !strings.Contains(err.Error(), "refunds") {
				t.Fatalf("pull with a failing refunds list: err = %v", err)
			}
			if first.txns != 6 {
				t.Errorf("before the failure: %d new transactions, want 5 charges and 1 embedded refund", first.txns)
			}
			second, err := pull()
			if err != nil {
				t.Fatal(err)
			}
			if second.txns != 1 || second.sources != 1 {
				t.Errorf("completing pull added %+v, want the 1 missing refund", second)
			}
			third, err := pull()
			if err != nil {
				t.Fatal(err)
			}
			if third != (counts{}) {
				t.Errorf("a second pull of the same window added %+v", third)
			}
			var stored []string
			err = store.ListProviderTxns(ctx, ledger.TxnFilter{Provider: Provider, From: T0.Add(-time.Hour), To: T0.Add(2 * time.Hour)},
				func(x ledger.ProviderTxn) error { stored = append(stored, x.ID); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != 7 {
				t.Errorf("%d transactions stored, want 7", len(stored))
			}
		})
	}
}

func TestPullReportsBadObjectsAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{})
	good := fb.fake.AddCharge(stripefake.Charge{Amount: 100, Currency: "usd", Created: T0})
	fb.fake.AddCharge(stripefake.Charge{ID: "ch_badcurrency", Amount: 100, Currency: "xyz", Created: T0.Add(time.Second)})
	fb.fake.AddCharge(stripefake.Charge{ID: "ch_negative", Amount: -5, Currency: "usd", Created: T0.Add(2 * time.Second)})
	var got []providers.Sighting
	err := c.Pull(context.Background(), T0, T0.Add(time.Hour), collect(&got))
	if len(got) != 1 || got[0].Txn.ID != good.ID {
		t.Errorf("emitted %v, want only %s", renderSightings(got), good.ID)
	}
	var perr *ledger.ParseError
	if !errors.As(err, &perr) {
		t.Fatalf("err = %v, want parse errors", err)
	}
	for _, want := range []string{"ch_badcurrency: field currency", "ch_negative: field amount: -5 is negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
	stop := errors.New("stop")
	if err := c.Pull(context.Background(), T0, T0.Add(time.Hour), func(providers.Sighting) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("a failing emit gave %v", err)
	}
}

func TestNormaliseFixtures(t *testing.T) {
	t.Parallel()
	s := sighter{channel: ChannelAPI, ref: func(id string) string { return id }, receivedAt: T0}
	charge, err := os.ReadFile("testdata/api/charge.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := chargeSightings(charge, "", s)
	if err != nil {
		t.Fatal(err)
	}
	bt, err := os.ReadFile("testdata/api/balance_transaction.json")
	if err != nil {
		t.Fatal(err)
	}
	fees, err := balanceTxnSightings(bt, "", s)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, fees...)
	for _, x := range got {
		checkSighting(t, x)
	}
	golden.Assert(t, "testdata/api/fixtures.golden", renderSightings(got))
}

// TestPullQuarantinesObjectsBeyondTheLimits: with OnReject, an object
// beyond the limits at the edge (an amount above the currency's maximum)
// is handed over with its id, its field and its JSON, and the pull goes on
// through the following pages; a failing OnReject stops it.
func TestPullQuarantinesObjectsBeyondTheLimits(t *testing.T) {
	t.Parallel()
	type rejected struct {
		perr *ledger.ParseError
		raw  string
	}
	var got []rejected
	c, fb := setupFake(t, Config{PageSize: 2, OnReject: func(_ context.Context, perr *ledger.ParseError, raw []byte) error {
		got = append(got, rejected{perr, string(raw)})
		return nil
	}})
	var good []string
	for i := range 5 {
		id := fb.fake.AddCharge(stripefake.Charge{Amount: int64(100 + i), Currency: "usd", Created: T0.Add(time.Duration(2*i) * time.Second)}).ID
		good = append(good, id)
	}
	fb.fake.AddCharge(stripefake.Charge{ID: "ch_huge", Amount: ledger.DefaultMaxMinor + 1, Currency: "usd", Created: T0.Add(3 * time.Second)})
	var emitted []providers.Sighting
	if err := c.Pull(context.Background(), T0, T0.Add(time.Hour), collect(&emitted)); err != nil {
		t.Fatalf("pull with an object beyond the limits: %v", err)
	}
	var ids []string
	for _, s := range emitted {
		ids = append(ids, s.Txn.ID)
	}
	sort.Strings(ids)
	sort.Strings(good)
	if strings.Join(ids, " ") != strings.Join(good, " ") {
		t.Errorf("emitted %v, want every good charge %v", ids, good)
	}
	if len(got) != 1 {
		t.Fatalf("rejected %d objects, want 1: %+v", len(got), got)
	}
	r := got[0]
	if r.perr.File != "stripe /v1/charges ch_huge" || r.perr.Field != "amount" || !errors.Is(r.perr.Err, ledger.ErrOutOfRange) {
		t.Errorf("rejection: file %q field %q: %v", r.perr.File, r.perr.Field, r.perr.Err)
	}
	if !strings.Contains(r.raw, `"id":"ch_huge"`) && !strings.Contains(r.raw, `"id": "ch_huge"`) {
		t.Errorf("the rejected object's JSON is not kept: %s", r.raw)
	}

	// Without OnReject the object is reported in the error, after the rest.
	plain, fb2 := setupFake(t, Config{PageSize: 2})
	fb2.fake.AddCharge(stripefake.Charge{ID: "ch_huge", Amount: ledger.DefaultMaxMinor + 1, Currency: "usd", Created: T0})
	fb2.fake.AddCharge(stripefake.Charge{Amount: 100, Currency: "usd", Created: T0.Add(time.Second)})
	emitted = nil
	err := plain.Pull(context.Background(), T0, T0.Add(time.Hour), collect(&emitted))
	if len(emitted) != 1 || err == nil || !strings.Contains(err.Error(), "ch_huge: field amount") {
		t.Errorf("without OnReject: %d emitted, err %v", len(emitted), err)
	}

	// A failing OnReject stops the pull.
	stop := errors.New("quarantine unavailable")
	failing, fb3 := setupFake(t, Config{PageSize: 2, OnReject: func(context.Context, *ledger.ParseError, []byte) error { return stop }})
	fb3.fake.AddCharge(stripefake.Charge{ID: "ch_huge", Amount: ledger.DefaultMaxMinor + 1, Currency: "usd", Created: T0})
	if err := failing.Pull(context.Background(), T0, T0.Add(time.Hour), collect(&emitted)); !errors.Is(err, stop) {
		t.Errorf("a failing OnReject gave %v", err)
	}
}

// TestConnectedAccountRequests: a client of a connected account makes
// every request, pulls and charges alike, on its behalf (Stripe-Account);
// the platform's client makes none so.
func TestConnectedAccountRequests(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{Account: "acct_1Kenya", PaymentMethod: "pm_card_visa"})
	seedWindow(fb.fake)
	if err := c.Pull(context.Background(), T0, T0.Add(time.Hour), func(providers.Sighting) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Charge(context.Background(), providers.ChargeRequest{IntentKey: "k-connected", Amount: amount(t, "10", "USD"),
		Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	reqs := fb.fake.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Account != "acct_1Kenya" {
			t.Errorf("%s %s acted on account %q, want acct_1Kenya", r.Method, r.Path, r.Account)
		}
	}
	p, pb := setupFake(t, Config{})
	if err := p.Pull(context.Background(), T0, T0.Add(time.Hour), func(providers.Sighting) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, r := range pb.fake.Requests() {
		if r.Account != "" {
			t.Errorf("the platform's %s %s acted on account %q", r.Method, r.Path, r.Account)
		}
	}
}
