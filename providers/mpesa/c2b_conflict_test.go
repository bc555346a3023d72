package mpesa

import (
	"context"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// TestC2BSameTransIDAnotherAmount: two C2B confirmations naming one TransID
// with amounts 10 and 20 (both "c2b:<TransID>" sightings) keep the first and
// quarantine the second, over HTTP and from a callbacks file, and seeing
// either again changes nothing.
func TestC2BSameTransIDAnotherAmount(t *testing.T) {
	t.Parallel()
	c2b := func(id, amount string) string {
		return `{"TransactionType":"Pay Bill","TransID":"` + id + `","TransTime":"20191122063845","TransAmount":"` + amount +
			`","BusinessShortCode":"600638","BillRefNumber":"invoice008","InvoiceNumber":"","OrgAccountBalance":"",` +
			`"ThirdPartyTransID":"","MSISDN":"25470****149","FirstName":"John","MiddleName":"","LastName":"Doe"}`
	}
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		e := setupEnv(t, newStore, HandlerConfig{})
		check := func(id string) {
			t.Helper()
			got, err := e.store.GetProviderTxn(ctx, Provider, id)
			if err != nil || got.Amount.Text() != "10.00" || len(got.Sources) != 1 {
				t.Fatalf("%s = %+v, %v", id, got, err)
			}
			q, err := e.store.ListQuarantine(ctx, Provider+"_conflict", 10)
			n := 0
			for _, it := range q {
				if it.Field == "provider_txn "+id {
					n++
					if !strings.Contains(it.Reason, "amount KES 20.00, stored KES 10.00") || !strings.Contains(string(it.Raw), `"20"`) {
						t.Errorf("quarantined %+v", it)
					}
				}
			}
			if err != nil || n != 1 {
				t.Fatalf("%s quarantined %d times: %+v, %v", id, n, q, err)
			}
		}
		for range 2 {
			for _, amount := range []string{"10", "20"} {
				if rec := e.post("/daraja/"+testToken+"/c2b/confirmation", []byte(c2b("RKTQDM7W6S", amount))); rec.Code != 200 {
					t.Fatalf("answered %d", rec.Code)
				}
			}
		}
		check("RKTQDM7W6S")

		file := c2b("RKTQDM7W6T", "10") + "\n" + c2b("RKTQDM7W6T", "20") + "\n"
		for range 2 {
			if _, err := e.proc.ImportFile(ctx, intake.FileImport{Provider: Provider, Parser: CallbackParser{}, Name: "cb.jsonl",
				Data: strings.NewReader(file)}); err != nil {
				t.Fatal(err)
			}
		}
		check("RKTQDM7W6T")
	})
}
