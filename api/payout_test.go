package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/openapitest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestPayoutFindingAPI: GET /v1/findings/{id} of a bank account's finding
// answers with its payout, what the payout carries (and what the books
// lack of it) and the account's lines, as docs/openapi.yaml describes, on
// both engines.
func TestPayoutFindingAPI(t *testing.T) {
	t.Parallel()
	for name, newURL := range map[string]func(testing.TB) string{"postgres": dbtest.PostgresURL, "sqlite": dbtest.SQLiteURL} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := openapitest.New(t)
			store, err := database.Open(ctx, newURL(t), database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(store.Close)
			kes := func(v string) money.Amount {
				a, err := money.Parse(v, "KES")
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			at := time.Date(2026, 3, 13, 15, 0, 0, 0, time.UTC)
			for _, x := range []ledger.ProviderTxn{
				{Provider: "mpesa", ID: "SCF1AA0013", Type: ledger.TxnPayout, Status: ledger.TxnSucceeded, Amount: kes("1000.00"), OccurredAt: at},
				{Provider: "mpesa", ID: "SCE1AB2CD3", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kes("1000.00"), OccurredAt: at.Add(-time.Hour)},
			} {
				if _, err := store.UpsertProviderTxn(ctx, x, ledger.Source{Channel: "statement", Ref: x.ID, ReceivedAt: at}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := store.RecordPayouts(ctx, []ledger.Payout{{Provider: "mpesa", ID: "SCF1AA0013", InitiatedAt: at,
				Descriptor: "Organization Settle to Bank", Carried: kes("0.00"), Left: kes("0.00"), FirstSeenAt: at}}); err != nil {
				t.Fatal(err)
			}
			if _, err := store.RecordPayoutItems(ctx, []ledger.PayoutItem{{Provider: "mpesa", PayoutID: "SCF1AA0013", TxnID: "SCE1AB2CD3"},
				{Provider: "mpesa", PayoutID: "SCF1AA0013", TxnID: "SCE9ZZ9ZZ9"}}); err != nil {
				t.Fatal(err)
			}
			f := ledger.Finding{ID: ledger.FindingID(ledger.KindPayoutMissingAtBank, "", []string{"mpesa/SCF1AA0013"}),
				Kind: ledger.KindPayoutMissingAtBank, Severity: ledger.SeverityHigh, Provider: "bank:equity-kes",
				ProviderTxnIDs: []string{"mpesa/SCF1AA0013"}, Expected: kes("1000.00"), Actual: kes("0"), AtRisk: kes("1000.00"),
				Detail: "M-Pesa payout SCF1AA0013 of KES 1000.00 has not reached bank:equity-kes", OccurredAt: at}
			if _, err := store.UpsertFindings(ctx, []ledger.Finding{f}, 1, at); err != nil {
				t.Fatal(err)
			}
			base := openapiServer(t, store)
			ex := c.Do(base, "GET", "/v1/findings/"+f.ID, nil, http.Header{"Authorization": {"Bearer " + testAPIToken}})
			if ex.Code != 200 {
				t.Fatalf("%d %s", ex.Code, ex.Body)
			}
			var out struct {
				Payout struct {
					Payouts []struct {
						ID      string `json:"id"`
						Amount  struct{ Amount string }
						Carried struct{ Amount string }
						Items   []struct {
							TxnID  string `json:"txn_id"`
							InBook bool   `json:"in_books"`
						} `json:"items"`
					} `json:"payouts"`
					Lines []any `json:"bank_lines"`
				} `json:"payout"`
			}
			if err := json.Unmarshal([]byte(ex.Body), &out); err != nil {
				t.Fatal(err)
			}
			p := out.Payout
			if len(p.Payouts) != 1 || p.Payouts[0].ID != "SCF1AA0013" || p.Payouts[0].Amount.Amount != "1000.00" ||
				p.Payouts[0].Carried.Amount != "0.00" || len(p.Payouts[0].Items) != 2 || !p.Payouts[0].Items[0].InBook ||
				p.Payouts[0].Items[1].InBook || len(p.Lines) != 0 {
				t.Errorf("payout: %s", ex.Body)
			}
		})
	}
}
