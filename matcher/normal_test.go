package matcher_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// refVariants are account numbers as payers type them for an intent whose
// reference is INV1001.
var refVariants = []string{"INV1001", "inv1001", " inv 1001 ", "INV-1001", "inv.1001", "INV/1001", "inv_1001",
	"Inv #1001", "\tINV\u00a01001\n", "ＩＮＶ１００１", "INV-1002", "INV1O01", "1001", "---"}

// TestReferenceVariants links each variant by its normal form, and shows in
// a golden file what links under both settings: the raw reference is kept
// as the evidence.
func TestReferenceVariants(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %-12s %-10s %s\n", "raw", "normal", "normalise", "exact")
	for _, raw := range refVariants {
		link := func(exact bool) string {
			it := intent(t, "k1", ledger.StateSucceeded, "100", 0)
			it.Reference = "INV1001"
			c := charge(t, "TX1", ledger.TxnSucceeded, "100", 0, raw, "")
			res := run(t, matcher.Options{ExactReferences: exact, KeepLinks: true}, []in{it}, []tx{c})
			if len(res.Links) == 0 {
				for _, f := range res.Findings {
					if f.Kind == ledger.KindUnknownCharge && !strings.Contains(f.Detail, fmt.Sprintf("%q", raw)) {
						t.Errorf("%q: unknown_charge detail %q does not keep the raw reference", raw, f.Detail)
					}
				}
				return "-"
			}
			return res.Links[0].Method.String()
		}
		fmt.Fprintf(&b, "%-22q %-12s %-10s %s\n", raw, matcher.NormalReference(raw), link(false), link(true))
	}
	golden.Assert(t, "testdata/reference_variants.golden", b.String())
}

func TestNormalReference(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{"": "", " inv 1001 ": "INV1001", "INV-1001": "INV1001", "inv.1001": "INV1001",
		"a/c no. 12_34": "ACNO1234", "ünï-7": "ÜNÏ7", "---": "", "ＩＮＶ１": "INV1"} {
		if got := matcher.NormalReference(raw); got != want {
			t.Errorf("NormalReference(%q) = %q, want %q", raw, got, want)
		}
	}
}
