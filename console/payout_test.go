package console

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestPayoutPageGolden: the page of a bank account's finding shows the
// payout with what it carries in the books (and what the books lack), and
// the account's line, on both engines.
func TestPayoutPageGolden(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, e.New)
			ctx := context.Background()
			s := b.store
			usd := func(v string) money.Amount {
				a, err := money.Parse(v, "USD")
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			at := time.Date(2026, 11, 2, 14, 0, 0, 0, time.UTC)
			for _, x := range []ledger.ProviderTxn{
				{Provider: "stripe", ID: "po_1QxA2b", Type: ledger.TxnPayout, Status: ledger.TxnSucceeded, Amount: usd("300.00"), OccurredAt: at},
				{Provider: "stripe", ID: "ch_1", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: usd("309.00"), OccurredAt: at.Add(-48 * time.Hour)},
				{Provider: "stripe", ID: "txn_1", Type: ledger.TxnFee, Status: ledger.TxnSucceeded, Amount: usd("9.00"), OccurredAt: at.Add(-48 * time.Hour), LinkedID: "ch_1"},
				{Provider: "bank:chase-usd", ID: "0311ACH000142@7#2-1.1", Type: ledger.TxnBankCredit, Status: ledger.TxnSucceeded,
					Amount: usd("290.00"), OccurredAt: at.Add(24 * time.Hour), Reference: "po_1QxA2b", ProviderRef: "po_1QxA2b"},
			} {
				_, err := s.UpsertProviderTxn(ctx, x, ledger.Source{Channel: "statement", Ref: x.ID, ReceivedAt: at})
				must(err)
			}
			_, err := s.RecordPayouts(ctx, []ledger.Payout{{Provider: "stripe", ID: "po_1QxA2b", InitiatedAt: at,
				ArrivalAt: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC), TraceID: "021000021234567", Descriptor: "STRIPE", FirstSeenAt: at}})
			must(err)
			_, err = s.RecordPayoutItems(ctx, []ledger.PayoutItem{{Provider: "stripe", PayoutID: "po_1QxA2b", TxnID: "ch_1"},
				{Provider: "stripe", PayoutID: "po_1QxA2b", TxnID: "txn_1"}, {Provider: "stripe", PayoutID: "po_1QxA2b", TxnID: "ch_2"}})
			must(err)
			d := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
			_, err = s.RecordBankEntries(ctx, []ledger.BankEntry{{Provider: "bank:chase-usd", TxnID: "0311ACH000142@7#2-1.1",
				Statement: "7 #2/1", Index: 1, BookingDate: d, ValueDate: d, BankRef: "0311ACH000142", EndToEndID: "po_1QxA2b",
				Text: "STRIPE PAYOUT po_1QxA2b STRIPE"}})
			must(err)
			f := ledger.Finding{ID: ledger.FindingID(ledger.KindPayoutAmountMismatch, "", []string{"stripe/po_1QxA2b"}),
				Kind: ledger.KindPayoutAmountMismatch, Severity: ledger.SeverityHigh, Provider: "bank:chase-usd",
				ProviderTxnIDs: []string{"0311ACH000142@7#2-1.1", "stripe/po_1QxA2b"}, Expected: usd("300.00"), Actual: usd("290.00"),
				AtRisk: usd("10.00"), Detail: "Stripe payout po_1QxA2b of USD 300.00 arrived as USD 290.00 (0311ACH000142 on 2026-11-03): USD 10.00 short",
				OccurredAt: d}
			_, err = s.UpsertFindings(ctx, []ledger.Finding{f}, 1, at)
			must(err)
			p := b.get(t, ops, "/console/findings/"+f.ID)
			if p.status != http.StatusOK {
				t.Fatalf("%d\n%s", p.status, p.body)
			}
			for _, want := range []string{"Payout stripe/po_1QxA2b", "not in the books", "0311ACH000142", "Bank lines"} {
				if !strings.Contains(p.body, want) {
					t.Errorf("the page does not show %q", want)
				}
			}
			golden.Assert(t, "testdata/finding_payout.html.golden", p.body)
		})
	}
}
