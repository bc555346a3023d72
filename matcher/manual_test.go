package matcher_test

import (
	"errors"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// TestManualLink: a link made by hand comes first in the linking order,
// before a provider reference another intent recorded.
func TestManualLink(t *testing.T) {
	t.Parallel()
	k1 := intent(t, "k1", ledger.StateSucceeded, "100", 0)
	k1.Reference = "INV1001"
	k2 := intent(t, "k2", ledger.StateSucceeded, "100", 0, "ws_CO_9")
	k2.Reference = "INV2002"
	typo := charge(t, "T1", ledger.TxnSucceeded, "100", 0, "inv 1O01", "ws_CO_9")
	m, err := matcher.New(matcher.Options{Provider: "mpesa", From: day, To: next, Now: now, KeepLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []in{k1, k2} {
		if err := m.AddIntent(in); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := m.AddManualLink("T1", "nope"); ok || err != nil {
		t.Fatalf("link to an intent not added: %v, %v", ok, err)
	}
	if ok, err := m.AddManualLink("T1", "k1"); !ok || err != nil {
		t.Fatalf("link: %v, %v", ok, err)
	}
	if err := m.AddTxn(typo); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AddManualLink("T2", "k1"); !errors.Is(err, matcher.ErrOrder) {
		t.Fatalf("link after a transaction: %v", err)
	}
	res, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 1 || res.Links[0] != (matcher.Link{TxnID: "T1", IntentKey: "k1", Method: matcher.Manual}) {
		t.Fatalf("links %+v", res.Links)
	}
	// k2 lost the charge its reference named: it is missing, k1 is not.
	if got := brief(res.Findings); len(got) != 1 || got[0] != "missing_at_provider k2 [] medium" {
		t.Fatalf("findings %q", got)
	}
}
