package matcher_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// stripeIntent is a Stripe intent of amount in cur, charged under
// PaymentIntent pi.
func stripeIntent(t testing.TB, key, amount, cur, pi string) in {
	created := day.Add(10 * time.Hour)
	return in{IntentParams: ledger.IntentParams{Key: key, Provider: "stripe", Amount: amt(t, amount, cur), Customer: "cus_1"},
		State: ledger.StateSucceeded, CreatedAt: created, UpdatedAt: created.Add(time.Minute), ProviderRefs: []string{pi}}
}

func stx(t testing.TB, id string, typ ledger.TxnType, st ledger.TxnStatus, amount, cur, linked, pi string, at time.Duration) tx {
	return tx{Provider: "stripe", ID: id, Type: typ, Status: st, Amount: amt(t, amount, cur), OccurredAt: day.Add(10*time.Hour + at),
		ProviderRef: pi, LinkedID: linked}
}

func TestDisputesAndPresentment(t *testing.T) {
	t.Parallel()
	m := time.Minute
	ok, pend, failed := ledger.TxnSucceeded, ledger.TxnPending, ledger.TxnFailed
	gbp := func(x tx) tx { x.Settlement, x.ExchangeRate = amt(t, "50.12", "USD"), "1.253"; return x }
	cases := []struct {
		name    string
		intents []in
		txns    []tx
		want    []string
		detail  string // a fragment of the first finding's detail
		risk    string
	}{
		{
			name:    "presented in GBP, settled in USD: compared in GBP, no finding",
			intents: []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")},
			txns:    []tx{gbp(stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "GBP", "", "pi_1", m))},
		},
		{
			name:    "presented amount differs: amount_mismatch, settlement in the detail",
			intents: []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")},
			txns:    []tx{gbp(stx(t, "ch_1", ledger.TxnCharge, ok, "41.00", "GBP", "", "pi_1", m))},
			want:    []string{"amount_mismatch k1 [ch_1] high"},
			detail:  "(settled as USD 50.12 at 1.253)",
		},
		{
			name:    "zero-decimal and three-decimal currencies are exact",
			intents: []in{stripeIntent(t, "k1", "1500", "JPY", "pi_1"), stripeIntent(t, "k2", "12.345", "KWD", "pi_2")},
			txns: []tx{stx(t, "ch_1", ledger.TxnCharge, ok, "1500", "JPY", "", "pi_1", m),
				stx(t, "ch_2", ledger.TxnCharge, ok, "12.346", "KWD", "", "pi_2", m)},
			want: []string{"amount_mismatch k2 [ch_2] high"},
			risk: "KWD 0.001",
		},
		{
			name:    "dispute with funds withdrawn and no reversal (lost or pending): high, never status_mismatch",
			intents: []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")},
			txns: []tx{gbp(stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "GBP", "", "pi_1", m)),
				stx(t, "dp_1", ledger.TxnDispute, ok, "40.00", "GBP", "ch_1", "pi_1", 3*time.Hour),
				stx(t, "txn_dpfee", ledger.TxnFee, ok, "15.00", "USD", "ch_1", "", 3*time.Hour)},
			want:   []string{"disputed_charge k1 [ch_1,dp_1] high"},
			detail: "GBP 40.00 withdrawn",
			risk:   "GBP 40.00",
		},
		{
			name:    "dispute opened, funds not withdrawn: medium",
			intents: []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")},
			txns: []tx{stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "GBP", "", "pi_1", m),
				stx(t, "dp_1", ledger.TxnDispute, pend, "40.00", "GBP", "ch_1", "pi_1", 3*time.Hour)},
			want:   []string{"disputed_charge k1 [ch_1,dp_1] medium"},
			detail: "not withdrawn yet",
		},
		{
			name:    "dispute won: funds reinstated, no finding",
			intents: []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")},
			txns: []tx{stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "GBP", "", "pi_1", m),
				stx(t, "dp_1", ledger.TxnDispute, ok, "40.00", "GBP", "ch_1", "pi_1", 3*time.Hour),
				stx(t, "txn_back", ledger.TxnDisputeReversal, ok, "40.00", "GBP", "ch_1", "pi_1", 5*time.Hour)},
		},
		{
			name:    "inquiry closed without a chargeback: no finding",
			intents: []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")},
			txns: []tx{stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "GBP", "", "pi_1", m),
				stx(t, "dp_1", ledger.TxnDispute, failed, "40.00", "GBP", "ch_1", "pi_1", 3*time.Hour)},
		},
		{
			name:    "dispute whose charge is outside the loaded span links by its PaymentIntent",
			intents: []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")},
			txns:    []tx{stx(t, "dp_1", ledger.TxnDispute, ok, "40.00", "GBP", "ch_old", "pi_1", 3*time.Hour)},
			want:    []string{"disputed_charge k1 [ch_old,dp_1] high", "missing_at_provider k1 [] medium"},
		},
		{
			name:    "refunds without a refund intent are unrecorded; a failed refund gives the money back",
			intents: []in{stripeIntent(t, "k1", "40.00", "USD", "pi_1"), stripeIntent(t, "k2", "10.00", "USD", "pi_2")},
			txns: []tx{stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "USD", "", "pi_1", m),
				stx(t, "re_1", ledger.TxnRefund, ok, "10.00", "USD", "ch_1", "pi_1", time.Hour),
				stx(t, "ch_2", ledger.TxnCharge, ok, "10.00", "USD", "", "pi_2", m),
				stx(t, "re_2", ledger.TxnRefund, ok, "10.00", "USD", "ch_2", "pi_2", time.Hour),
				stx(t, "txn_rf", ledger.TxnRefundFailure, ok, "10.00", "USD", "ch_2", "pi_2", 2*time.Hour)},
			want: []string{"unrecorded_refund k1 [re_1] medium"},
		},
		{
			name:    "a charge refunded in full is no status mismatch: its refund is unrecorded",
			intents: []in{stripeIntent(t, "k2", "10.00", "USD", "pi_2")},
			txns: []tx{stx(t, "ch_2", ledger.TxnCharge, ok, "10.00", "USD", "", "pi_2", m),
				stx(t, "re_2", ledger.TxnRefund, ok, "10.00", "USD", "ch_2", "pi_2", time.Hour)},
			want: []string{"unrecorded_refund k2 [re_2] medium"},
		},
		{
			name:    "partial capture: the charge is compared net of the released part",
			intents: []in{stripeIntent(t, "k1", "30.00", "USD", "pi_1")},
			txns: []tx{stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "USD", "", "pi_1", m),
				stx(t, "txn_pcr", ledger.TxnReversal, ok, "10.00", "USD", "ch_1", "pi_1", m)},
		},
		{
			name:    "adjustments and undocumented lines never link nor become charges",
			intents: []in{stripeIntent(t, "k1", "40.00", "USD", "pi_1")},
			txns: []tx{stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "USD", "", "pi_1", m),
				stx(t, "txn_adj", ledger.TxnAdjustment, ok, "-5.00", "USD", "", "pi_1", m),
				stx(t, "txn_odd", ledger.TxnOther, ok, "40.00", "USD", "", "pi_1", m)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, matcher.Options{Provider: "stripe"}, c.intents, c.txns)
			if got := brief(res.Findings); !slices.Equal(got, c.want) {
				t.Fatalf("findings:\n%q\nwant:\n%q", got, c.want)
			}
			if c.detail != "" && !strings.Contains(res.Findings[len(res.Findings)-1].Detail, c.detail) &&
				!strings.Contains(res.Findings[0].Detail, c.detail) {
				t.Errorf("detail %q lacks %q", res.Findings[0].Detail, c.detail)
			}
			if c.risk != "" {
				f := res.Findings[len(res.Findings)-1]
				if got := f.AtRisk.Currency + " " + f.AtRisk.Text(); got != c.risk {
					t.Errorf("at risk %s, want %s", got, c.risk)
				}
			}
		})
	}
}

// TestDisputeIDIsStable checks that a dispute keeps one finding from opened
// to funds withdrawn, so that the second is an escalation, not a new
// finding.
func TestDisputeIDIsStable(t *testing.T) {
	t.Parallel()
	intents := []in{stripeIntent(t, "k1", "40.00", "GBP", "pi_1")}
	ch := stx(t, "ch_1", ledger.TxnCharge, ledger.TxnSucceeded, "40.00", "GBP", "", "pi_1", time.Minute)
	open := run(t, matcher.Options{Provider: "stripe"}, intents,
		[]tx{ch, stx(t, "dp_1", ledger.TxnDispute, ledger.TxnPending, "40.00", "GBP", "ch_1", "pi_1", time.Hour)}).Findings
	took := run(t, matcher.Options{Provider: "stripe"}, intents,
		[]tx{ch, stx(t, "dp_1", ledger.TxnDispute, ledger.TxnSucceeded, "40.00", "GBP", "ch_1", "pi_1", time.Hour)}).Findings
	if len(open) != 1 || len(took) != 1 || open[0].ID != took[0].ID || !ledger.Escalates(open[0], took[0]) {
		t.Fatalf("opened %+v\nwithdrawn %+v", open, took)
	}
}

// TestDisputesAtTheSameTime: of two disputes of one charge at the same
// time, the one with the smaller id is the first (its counterparty shown,
// its currency counted), whatever order the input comes in.
func TestDisputesAtTheSameTime(t *testing.T) {
	t.Parallel()
	k1 := stripeIntent(t, "k1", "40.00", "USD", "pi_1")
	ch := stx(t, "ch_1", ledger.TxnCharge, ledger.TxnSucceeded, "40.00", "USD", "", "pi_1", time.Minute)
	dpA := stx(t, "dp_a", ledger.TxnDispute, ledger.TxnSucceeded, "40.00", "USD", "ch_1", "", time.Hour)
	dpA.Counterparty = "a***@example.com"
	dpB := stx(t, "dp_b", ledger.TxnDispute, ledger.TxnSucceeded, "30.00", "EUR", "ch_1", "", time.Hour)
	dpB.Counterparty = "b***@example.com"
	for _, txns := range [][]tx{{ch, dpA, dpB}, {ch, dpB, dpA}} {
		res := run(t, matcher.Options{Provider: "stripe"}, []in{k1}, txns)
		if len(res.Findings) != 1 {
			t.Fatalf("findings %q", brief(res.Findings))
		}
		f := res.Findings[0]
		if f.Kind != ledger.KindDisputedCharge || f.Counterparty != "a***@example.com" || f.Actual.Currency != "USD" {
			t.Errorf("input %s, %s: finding %s shows %q and %v, want the first dispute dp_a's", txns[1].ID, txns[2].ID,
				f.Kind, f.Counterparty, f.Actual)
		}
	}
}
