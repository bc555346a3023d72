package matcher_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/money"
)

// maxAmount is the largest amount the matcher takes, in KES.
func maxAmount(t testing.TB) money.Amount {
	a, err := money.FromMinor(ledger.CeilingMaxMinor, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSumsBeyondTheRange: every sum the matcher makes of many amounts is
// checked. One that leaves its range (ten times the largest amount) makes
// what it is about unreadable, whatever order the evidence comes in,
// instead of wrapping around int64 or being judged on a partial sum.
func TestSumsBeyondTheRange(t *testing.T) {
	t.Parallel()
	big := maxAmount(t)
	h := time.Hour
	// An intent paid by charge C of the largest amount.
	paid := intent(t, "k1", ledger.StateSucceeded, "1", h, "ws_1")
	paid.Amount = big
	c := charge(t, "C", ledger.TxnSucceeded, "1", h, "", "ws_1")
	c.Amount = big
	series := func(prefix string, n int, typ ledger.TxnType, linked string) []tx {
		var out []tx
		for i := range n {
			x := charge(t, fmt.Sprintf("%s%03d", prefix, i), ledger.TxnSucceeded, "1", 2*h+time.Duration(i)*time.Minute, "", "")
			x.Type, x.Amount, x.LinkedID = typ, big, linked
			out = append(out, x)
		}
		return out
	}
	refundIntent := intent(t, "refund:k1", ledger.StateSucceeded, "1", h)
	refundIntent.Kind, refundIntent.RefundOf, refundIntent.Amount = ledger.IntentRefund, "k1", big
	// refunds of the refund intent, echoing its key.
	refunds := func(n int) []tx {
		out := series("RE", n, ledger.TxnRefund, "")
		for i := range out {
			out[i].Reference = "refund:k1"
		}
		return out
	}
	cases := []struct {
		name    string
		intents []in
		txns    []tx
		want    []string
	}{{
		// 100 refunds of one refund intent sum to 10^19 minor units,
		// beyond int64.
		name:    "refunds of a refund intent",
		intents: []in{paid, refundIntent},
		txns:    append([]tx{c}, refunds(100)...),
		want:    []string{"unreadable_record refund:k1 []"},
	}, {
		name:    "refunds of a refund intent, beyond the range only",
		intents: []in{paid, refundIntent},
		txns:    append([]tx{c}, refunds(11)...),
		want:    []string{"unreadable_record refund:k1 []"},
	}, {
		// 100 disputes of one charge: the disputed amount wraps around
		// int64 unless checked. The first dispute is unreadable.
		name:    "disputes of a charge",
		intents: []in{paid},
		txns:    append([]tx{c}, series("DP", 100, ledger.TxnDispute, "C")...),
		want:    []string{"unreadable_record  [DP000]"},
	}, {
		// Eleven refunds and eleven refund failures of one charge: the
		// money back sums beyond the range, whether or not the failures
		// come between the refunds. The refunds are left out with their
		// charge: its intent's unreadable_record stands for them.
		name:    "refunds and refund failures of a charge, interleaved",
		intents: []in{paid},
		txns: append([]tx{c}, interleave(series("RE", 11, ledger.TxnRefund, "C"),
			series("RF", 11, ledger.TxnRefundFailure, "C"))...),
		want: []string{"unreadable_record k1 []"},
	}, {
		// The same for a charge that links to no intent: it is unreadable,
		// not dropped because a partial sum left it refunded in full.
		name:    "refunds and refund failures of an unknown charge",
		intents: nil,
		txns: append([]tx{c}, append(series("RE", 12, ledger.TxnRefund, "C"),
			series("RF", 11, ledger.TxnRefundFailure, "C")...)...),
		want: []string{"unreadable_record  [C]"},
	}, {
		// 100 refund failures of one charge.
		name:    "refund failures of a charge",
		intents: []in{paid},
		txns:    append([]tx{c}, series("RF", 100, ledger.TxnRefundFailure, "C")...),
		want:    []string{"unreadable_record k1 []"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opt := matcher.Options{Provider: "mpesa"}
			want := run(t, opt, tc.intents, tc.txns)
			if got := briefNoSeverity(want.Findings); !slices.Equal(got, tc.want) {
				t.Fatalf("findings %q, want %q", got, tc.want)
			}
			// The same evidence in the other order decides the same.
			rev := slices.Clone(tc.txns)
			slices.Reverse(rev)
			if got := run(t, opt, tc.intents, rev); !slices.Equal(canon(got.Findings), canon(want.Findings)) {
				t.Fatalf("reversed input: findings %q, want %q", canon(got.Findings), canon(want.Findings))
			}
		})
	}
}

// interleave returns a[0], b[0], a[1], b[1], ...
func interleave(a, b []tx) []tx {
	var out []tx
	for i := range max(len(a), len(b)) {
		if i < len(a) {
			out = append(out, a[i])
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

func briefNoSeverity(fs []ledger.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %v", f.Kind, f.IntentKey, f.ProviderTxnIDs))
	}
	return out
}
