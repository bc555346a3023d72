package matcher_test

import (
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// TestSuggestions pairs the leftovers of a window: each unknown_charge and
// missing_at_provider of the same amount gets its one best counterpart.
func TestSuggestions(t *testing.T) {
	t.Parallel()
	mk := func(key, ref, amount, cust string) in {
		it := intent(t, key, ledger.StateSucceeded, amount, 0)
		it.Reference, it.Customer = ref, cust
		return it
	}
	pay := func(id, ref, amount, cp string) tx {
		c := charge(t, id, ledger.TxnSucceeded, amount, 0, ref, "")
		c.Counterparty = cp
		return c
	}
	cases := []struct {
		name     string
		intents  []in
		txns     []tx
		want     map[string]string // finding's intent key or txn id -> suggested txn id or intent key, "" for none
		inReason string
	}{
		{"typo", []in{mk("k1", "INV1001", "100", "254711111111")}, []tx{pay("T1", "INV1011", "100", "2547****2222")},
			map[string]string{"k1": "T1", "T1": "k1"}, "one typo"},
		{"two edits", []in{mk("k1", "INV1001", "100", "254711111111")}, []tx{pay("T1", "INV1100", "100", "2547****2222")},
			map[string]string{"k1": "", "T1": ""}, ""},
		{"adjacent swap", []in{mk("k1", "INV1021", "100", "254711111111")}, []tx{pay("T1", "inv-1201", "100", "2547****2222")},
			map[string]string{"k1": "T1", "T1": "k1"}, "one typo"},
		// A non-ASCII letter is one character, though several bytes.
		{"swap with a non-ASCII letter", []in{mk("k1", "Ö2L", "100", "254711111111")}, []tx{pay("T1", "2_öl", "100", "2547****2222")},
			map[string]string{"k1": "T1", "T1": "k1"}, "one typo"},
		{"non-ASCII letter added", []in{mk("k1", "INV1001", "100", "254711111111")}, []tx{pay("T1", "INV1001Ж", "100", "2547****2222")},
			map[string]string{"k1": "T1", "T1": "k1"}, "one typo"},
		{"non-ASCII letter changed", []in{mk("k1", "ÅB12", "100", "254711111111")}, []tx{pay("T1", "ЖB12", "100", "2547****2222")},
			map[string]string{"k1": "T1", "T1": "k1"}, "one typo"},
		{"look-alike", []in{mk("k1", "INV1001", "100", "254711111111")}, []tx{pay("T1", "inv 1O01", "100", "2547****2222")},
			map[string]string{"k1": "T1", "T1": "k1"}, "look-alike"},
		{"other amount", []in{mk("k1", "INV1001", "100", "254711111111")}, []tx{pay("T1", "INV1011", "101", "2547****1111")},
			map[string]string{"k1": "", "T1": ""}, ""},
		{"same customer", []in{mk("k1", "ABC", "100", "254711111111")}, []tx{pay("T1", "XYZ", "100", "2547****1111")},
			map[string]string{"k1": "T1", "T1": "k1"}, "same customer"},
		// The counterparty of every C2B callback and statement row names
		// the payer: "2547****0342 - CHEBET".
		{"same customer as a C2B counterparty", []in{mk("k1", "ABC", "100", "0712340342")}, []tx{pay("T1", "XYZ", "100", "2547****0342 - CHEBET")},
			map[string]string{"k1": "T1", "T1": "k1"}, "same customer 2547****0342"},
		{"the payer typed their phone as the account", []in{mk("k1", "INV77", "100", "254712340342")}, []tx{pay("T1", "0712 340 342", "100", "")},
			map[string]string{"k1": "T1", "T1": "k1"}, "same customer"},
		// One typo from two invoices: the payer's own wins over another
		// customer's nearer in time.
		{"the payer's own invoice", []in{mk("k1", "INV1001", "100", "254711111111"), mk("k2", "INV1002", "100", "254722222222")},
			[]tx{pay("T1", "INV1003", "100", "2547****2222 - WANJIKU")},
			map[string]string{"k1": "T1", "k2": "T1", "T1": "k2"}, "one typo"},
		{"ranked", []in{mk("k1", "INV1001", "100", "254711111111"), mk("k2", "INV2002", "100", "254722222222")},
			[]tx{pay("T1", "INV2O02", "100", "2547****1111"), pay("T2", "INV1009", "100", "2547****3333")},
			// T1 is a look-alike of k2 and has k1's customer: the reference wins.
			// k1 has T1 (same customer) and T2 (one typo): the typo wins.
			map[string]string{"k1": "T2", "k2": "T1", "T1": "k2", "T2": "k1"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, matcher.Options{}, c.intents, c.txns)
			seen := 0
			byID := map[string]ledger.Finding{}
			for _, f := range res.Findings {
				byID[f.ID] = f
			}
			for _, f := range res.Findings {
				var who, got string
				switch f.Kind {
				case ledger.KindMissingAtProvider:
					who, got = f.IntentKey, f.Suggestion.TxnID
				case ledger.KindUnknownCharge:
					who, got = f.ProviderTxnIDs[0], f.Suggestion.IntentKey
				default:
					t.Fatalf("unexpected %s", f.Kind)
				}
				want, ok := c.want[who]
				if !ok {
					t.Fatalf("unexpected finding for %s", who)
				}
				seen++
				if got != want {
					t.Errorf("%s: suggested %q, want %q (%+v)", who, got, want, f.Suggestion)
				}
				if want == "" {
					continue
				}
				other, ok := byID[f.Suggestion.FindingID]
				if !ok || other.Kind == f.Kind {
					t.Errorf("%s: suggestion names finding %q, not the other half", who, f.Suggestion.FindingID)
				}
				if !strings.Contains(f.Suggestion.Reason, c.inReason) {
					t.Errorf("%s: reason %q lacks %q", who, f.Suggestion.Reason, c.inReason)
				}
			}
			if seen != len(c.want) {
				t.Errorf("%d findings, want %d", seen, len(c.want))
			}
		})
	}
}
