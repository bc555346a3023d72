package providers_test

import (
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// TestExtrasPayoutOfItsAccount: a payout told of by a transaction of an
// account is that account's.
func TestExtrasPayoutOfItsAccount(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	var x providers.Extras
	for _, account := range []string{"acct_1", ""} {
		x.Add(providers.Sighting{Txn: ledger.ProviderTxn{Provider: "stripe", Account: account, ID: "ch_" + account},
			Payout: &ledger.Payout{Provider: "stripe", ID: "po_" + account, ArrivalAt: at}})
	}
	if len(x.Payouts) != 2 || x.Payouts[0].Account != "acct_1" || x.Payouts[1].Account != "" {
		t.Errorf("payouts %+v", x.Payouts)
	}
}
