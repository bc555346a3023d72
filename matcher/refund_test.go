package matcher_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// stripeRefund is a refund intent of amount (USD) for charge intent of,
// succeeded locally at creation plus a minute, with the refund ids its
// attempts recorded.
func stripeRefund(t testing.TB, key, of, amount string, refs ...string) in {
	r := stripeIntent(t, key, amount, "USD", "")
	r.Kind, r.RefundOf, r.ProviderRefs = ledger.IntentRefund, of, refs
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.Add(time.Hour), r.UpdatedAt.Add(time.Hour)
	return r
}

// refundTxn is a Stripe refund of charge ch; ref is the intent key its
// metadata carries.
func refundTxn(t testing.TB, id, ch, amount, cur, ref string, at time.Duration) tx {
	x := stx(t, id, ledger.TxnRefund, ledger.TxnSucceeded, amount, cur, ch, "pi_1", at)
	x.Reference = ref
	return x
}

func TestRefunds(t *testing.T) {
	t.Parallel()
	m, h := time.Minute, time.Hour
	ok := ledger.TxnSucceeded
	k1 := stripeIntent(t, "k1", "40.00", "USD", "pi_1")
	ch1 := stx(t, "ch_1", ledger.TxnCharge, ok, "40.00", "USD", "", "pi_1", m)
	cases := []struct {
		name    string
		opt     matcher.Options
		intents []in
		txns    []tx
		want    []string
		risk    string
		detail  string
	}{
		{
			name:    "a recorded partial refund, found through its charge: no finding",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00")},
			txns:    []tx{ch1, refundTxn(t, "re_1", "ch_1", "10.00", "USD", "", 2*h)},
		},
		{
			name:    "a recorded refund found by the refund id its attempt recorded",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00", "re_1"), stripeRefund(t, "r2", "k1", "10.00")},
			txns:    []tx{ch1, refundTxn(t, "re_1", "ch_1", "10.00", "USD", "", 2*h)},
			want:    []string{"missing_at_provider r2 [] medium"},
		},
		{
			name:    "a recorded refund found by the intent key in its metadata, charge not in the window",
			intents: []in{stripeRefund(t, "r1", "k0", "10.00")},
			txns:    []tx{refundTxn(t, "re_1", "ch_0", "10.00", "USD", "r1", 2*h)},
		},
		{
			name:    "a charge refunded in full and recorded: never a status mismatch",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "40.00")},
			txns:    []tx{ch1, refundTxn(t, "re_1", "ch_1", "40.00", "USD", "", 2*h)},
		},
		{
			name:    "an unrecorded partial refund: unrecorded_refund, at risk the refunded amount",
			intents: []in{k1},
			txns:    []tx{ch1, refundTxn(t, "re_1", "ch_1", "15.00", "USD", "", 2*h)},
			want:    []string{"unrecorded_refund k1 [re_1] medium"},
			risk:    "USD 15.00",
			detail:  `provider refunded USD 15.00 of ch_1 of charge intent "k1" with no refund intent recorded`,
		},
		{
			name: "an unrecorded refund of a charge no intent knows: unrecorded_refund",
			txns: []tx{refundTxn(t, "re_9", "ch_9", "15.00", "USD", "", 2*h)},
			want: []string{"unrecorded_refund  [re_9] medium"},
			risk: "USD 15.00",
		},
		{
			name:    "a refunded duplicate charge: net one charge, no finding",
			intents: []in{k1},
			txns: []tx{ch1, stx(t, "ch_2", ledger.TxnCharge, ok, "40.00", "USD", "", "pi_1", 5*m),
				refundTxn(t, "re_2", "ch_2", "40.00", "USD", "", 2*h)},
		},
		{
			name: "a refunded unrecorded charge (no intent): no finding",
			txns: []tx{stx(t, "ch_7", ledger.TxnCharge, ok, "40.00", "USD", "", "pi_7", m),
				refundTxn(t, "re_7", "ch_7", "40.00", "USD", "", 2*h)},
		},
		{
			name:    "two provider refunds for one refund intent: duplicate_refund",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00")},
			txns: []tx{ch1, refundTxn(t, "re_1", "ch_1", "10.00", "USD", "r1", 2*h),
				refundTxn(t, "re_2", "ch_1", "10.00", "USD", "r1", 3*h)},
			want: []string{"duplicate_refund r1 [re_1,re_2] high"},
			risk: "USD 10.00",
		},
		{
			name:    "a refund succeeded locally with no provider refund after the grace: missing_at_provider",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00")},
			txns:    []tx{ch1},
			want:    []string{"missing_at_provider r1 [] medium"},
			detail:  "refund succeeded locally but the provider shows no refund",
		},
		{
			name:    "within the grace a missing refund is no finding yet",
			opt:     matcher.Options{Grace: 24 * h},
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00")},
			txns:    []tx{ch1},
		},
		{
			name:    "the provider refunded more than the refund intent: amount_mismatch",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00")},
			txns:    []tx{ch1, refundTxn(t, "re_1", "ch_1", "12.50", "USD", "", 2*h)},
			want:    []string{"amount_mismatch r1 [re_1] high"},
			risk:    "USD 2.50",
			detail:  "provider refunded USD 12.50 for a refund intent of USD 10.00: USD 2.50 more",
		},
		{
			name:    "the provider refunded in another currency: currency_mismatch",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00")},
			txns:    []tx{ch1, refundTxn(t, "re_1", "", "10.00", "EUR", "r1", 2*h)},
			want:    []string{"currency_mismatch r1 [re_1] high"},
		},
		{
			name:    "a refund recorded as failed that the provider made: status_mismatch",
			intents: []in{k1, func() in { r := stripeRefund(t, "r1", "k1", "10.00"); r.State = ledger.StateFailed; return r }()},
			txns:    []tx{ch1, refundTxn(t, "re_1", "ch_1", "10.00", "USD", "r1", 2*h)},
			want:    []string{"status_mismatch r1 [re_1] high"},
		},
		{
			name:    "two refund intents of one charge, two provider refunds: each finds its own",
			intents: []in{k1, stripeRefund(t, "r1", "k1", "10.00"), stripeRefund(t, "r2", "k1", "5.00")},
			txns:    []tx{ch1, refundTxn(t, "re_2", "ch_1", "5.00", "USD", "", 2*h), refundTxn(t, "re_1", "ch_1", "10.00", "USD", "", 3*h)},
		},
		{
			name:    "M-Pesa: a reversal of the original receipt finds its refund intent",
			opt:     matcher.Options{Provider: "mpesa", ReversalsAreRefunds: true},
			intents: []in{intent(t, "c1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1"), mpesaRefund(t, "r1", "c1", "1500", 11*h)},
			txns:    []tx{charge(t, "NLJ7RT61SV", ok, "1500", 10*h+m, "", "ws_CO_1"), reversal(t, "NLK1RV00AA", "NLJ7RT61SV", "1500", 12*h)},
		},
		{
			name:    "M-Pesa: an unrecorded reversal is an unrecorded refund, not a status mismatch",
			opt:     matcher.Options{Provider: "mpesa", ReversalsAreRefunds: true},
			intents: []in{intent(t, "c1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "NLJ7RT61SV", ok, "1500", 10*h+m, "", "ws_CO_1"), reversal(t, "NLK1RV00AA", "NLJ7RT61SV", "1500", 12*h)},
			want:    []string{"unrecorded_refund c1 [NLK1RV00AA] medium"},
			detail:  "provider reversed KES 1,500.00 of NLJ7RT61SV",
		},
		{
			name:    "M-Pesa: a reversed duplicate STK payment is no finding",
			opt:     matcher.Options{Provider: "mpesa", ReversalsAreRefunds: true},
			intents: []in{intent(t, "c1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns: []tx{charge(t, "NLJ7RT61SV", ok, "1500", 10*h+m, "", "ws_CO_1"), charge(t, "NLJ7RT61SW", ok, "1500", 10*h+2*m, "", "ws_CO_1"),
				reversal(t, "NLK1RV00AA", "NLJ7RT61SW", "1500", 12*h)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opt := c.opt
			if opt.Provider == "" {
				opt.Provider = "stripe"
			}
			res := run(t, opt, c.intents, c.txns)
			if got := brief(res.Findings); !slices.Equal(got, c.want) {
				t.Fatalf("findings:\n%q\nwant:\n%q", got, c.want)
			}
			if c.detail != "" && !strings.Contains(res.Findings[0].Detail, c.detail) {
				t.Errorf("detail %q lacks %q", res.Findings[0].Detail, c.detail)
			}
			if c.risk != "" {
				if got := res.Findings[0].AtRisk.Currency + " " + res.Findings[0].AtRisk.Text(); got != c.risk {
					t.Errorf("at risk %s, want %s", got, c.risk)
				}
			}
		})
	}
}

func mpesaRefund(t testing.TB, key, of, amount string, at time.Duration) in {
	r := intent(t, key, ledger.StateSucceeded, amount, at)
	r.Kind, r.RefundOf = ledger.IntentRefund, of
	return r
}

// TestRefundReferenceNormalForm: a refund that echoes its refund intent's
// reference links to it when the reference is typed with other separators
// or case: it is compared in normal form, as a charge's reference is (or as
// given, case aside, with exact references).
func TestRefundReferenceNormalForm(t *testing.T) {
	t.Parallel()
	k1 := stripeIntent(t, "k1", "40.00", "USD", "pi_1")
	r1 := stripeRefund(t, "refund:k1:1", "k1", "10.00")
	r1.Reference = "RF-1001"
	// r2 is created later than r1: through the charge alone, the refund
	// would be given to r1, the nearest.
	r2 := stripeRefund(t, "refund:k1:2", "k1", "10.00")
	r2.Reference = "RF-2002"
	r2.CreatedAt, r2.UpdatedAt = r2.CreatedAt.Add(3*time.Hour), r2.UpdatedAt.Add(3*time.Hour)
	ch := stx(t, "ch_1", ledger.TxnCharge, ledger.TxnSucceeded, "40.00", "USD", "", "pi_1", time.Minute)
	for _, c := range []struct {
		exact bool
		ref   string
	}{{false, "rf 2002"}, {false, "ＲＦ-２００２"}, {false, "RF-2002"}, {true, " rf-2002 "}} {
		re := refundTxn(t, "re_1", "ch_1", "10.00", "USD", c.ref, time.Hour)
		res := run(t, matcher.Options{Provider: "stripe", ExactReferences: c.exact}, []in{k1, r1, r2}, []tx{ch, re})
		want := matcher.Link{TxnID: "re_1", IntentKey: "refund:k1:2", Method: matcher.ByReference}
		if i := slices.IndexFunc(res.Links, func(l matcher.Link) bool { return l.TxnID == "re_1" }); i < 0 || res.Links[i] != want {
			t.Errorf("reference %q (exact %v): links %+v, want %+v", c.ref, c.exact, res.Links, want)
		}
	}
}
