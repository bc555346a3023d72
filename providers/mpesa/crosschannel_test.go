package mpesa

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
	"github.com/reconcilehq/reconcile/providers/statement"
)

// TestOneReceiptManyChannels: the same receipt seen in an STK callback, a C2B
// confirmation, a portal statement row and the Pull API is one provider
// transaction with four sources; each channel fills what the others lacked,
// and seeing any of them again changes nothing.
func TestOneReceiptManyChannels(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		e := setupEnv(t, newStore, HandlerConfig{})
		stk := readFixture(t, "testdata/callbacks/stk_success.json")
		c2b := []byte(`{"TransactionType":"Pay Bill","TransID":"NLJ7RT61SV","TransTime":"20191219102115","TransAmount":"1.00","BusinessShortCode":"174379","BillRefNumber":"ORDER4471","InvoiceNumber":"","OrgAccountBalance":"161.00","ThirdPartyTransID":"","MSISDN":"2547 ***** 149","FirstName":"JOHN"}`)
		stmt := "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n" +
			"nlj7rt61sv,19-12-2019 10:21:15,19-12-2019 10:21:10,Pay Bill Online,Completed,1.00,,161.00,true,Pay Bill Online,2547****4149 - JOHN DOE,,ORDER4471\n"

		for range 2 {
			for _, d := range []struct {
				path string
				body []byte
			}{{"stk", stk}, {"c2b/confirmation", c2b}} {
				if rec := e.post("/daraja/"+testToken+"/"+d.path, d.body); rec.Code != 200 {
					t.Fatalf("%s answered %d", d.path, rec.Code)
				}
			}
			im := &statement.Importer{Store: e.store, Clock: func() time.Time { return t0 }}
			if _, err := im.Import(ctx, statement.File{Name: "dec.csv", Reader: strings.NewReader(stmt),
				Parser: StatementParser{Clock: func() time.Time { return t0 }}, Source: "mpesa_statement"}); err != nil {
				t.Fatal(err)
			}
			pullFromFake(t, e.store)
		}

		got, err := e.store.GetProviderTxn(ctx, "mpesa", "NLJ7RT61SV")
		if err != nil {
			t.Fatal(err)
		}
		var channels []string
		for _, s := range got.Sources {
			channels = append(channels, s.Channel)
		}
		slices.Sort(channels)
		if !slices.Equal(channels, []string{"c2b_confirmation", "pull", "statement", "stk_callback"}) {
			t.Errorf("channels = %v", channels)
		}
		if got.Reference != "ORDER4471" || got.ProviderRef != "ws_CO_191220191020363925" || !got.Amount.Equal(kes(t, "1")) ||
			got.Type != ledger.TxnCharge || got.Status != ledger.TxnSucceeded {
			t.Errorf("txn = %+v", got)
		}
		if n := txnCount(t, e.store); n != 1 {
			t.Errorf("txns = %d, want 1", n)
		}
	})
}

// pullFromFake pulls the receipt through the Pull API of a fake that holds it.
func pullFromFake(t *testing.T, store ledger.Store) {
	t.Helper()
	ctx := context.Background()
	clock := func() time.Time { return time.Date(2019, 12, 20, 9, 0, 0, 0, time.UTC) }
	fake := mpesafake.New(mpesafake.Config{Seed: 1, Clock: clock})
	base := fake.Start()
	defer fake.Close()
	at := time.Date(2019, 12, 19, 7, 21, 15, 0, time.UTC)
	if _, _, err := fake.AddC2B(ctx, mpesafake.C2BPayment{TransID: "NLJ7RT61SV", At: at, Amount: "1.00", BillRef: "ORDER4471",
		MSISDN: "254708374149"}, false); err != nil {
		t.Fatal(err)
	}
	short, _, key, secret := fake.Credentials()
	p, err := NewPuller(Config{BaseURL: base, ShortCode: short, ConsumerKey: key, ConsumerSecret: secret, Clock: clock},
		PullConfig{NominatedNumber: "254708374149", CallbackURL: "https://pay.example.com/daraja/tok/c2b/confirmation"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Register(ctx); err != nil {
		t.Fatal(err)
	}
	err = store.InTx(ctx, func(tx ledger.Tx) error {
		return p.Pull(ctx, at.Add(-time.Hour), at.Add(time.Hour), func(s providers.Sighting) error {
			_, err := tx.UpsertProviderTxn(ctx, s.Txn, s.Source)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
