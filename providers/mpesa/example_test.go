package mpesa_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

func ExampleCallbackParser_ParseCallback() {
	body := []byte(`{"TransactionType":"Pay Bill","TransID":"SB62A1SVRK","TransTime":"20240206175204","TransAmount":"1.00",
		"BusinessShortCode":"4130669","BillRefNumber":"peter","InvoiceNumber":"","OrgAccountBalance":"161.00",
		"ThirdPartyTransID":"","MSISDN":"2547 ***** 845","FirstName":"PETER"}`)
	ev, err := mpesa.CallbackParser{}.ParseCallback(body, "callback:1", time.Date(2024, 2, 6, 15, 0, 0, 0, time.UTC))
	if err != nil {
		fmt.Println(err)
		return
	}
	tx := ev.Sightings[0].Txn
	fmt.Println(ev.Kind, tx.ID, tx.Type, tx.Amount, tx.OccurredAt.Format(time.RFC3339))
	fmt.Printf("reference %q, counterparty %q\n", tx.Reference, tx.Counterparty)
	fmt.Printf("answer %s\n", ev.Ack)
	// Output:
	// c2b_confirmation SB62A1SVRK charge KES 1.00 2024-02-06T14:52:04Z
	// reference "peter", counterparty "2547*****845 - PETER"
	// answer {"ResultCode":0,"ResultDesc":"Success"}
}

func ExampleStatementParser_ParseStatement() {
	export := "\ufeffOrganization Name,ACME HOMES\r\n\r\n" +
		"Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\r\n" +
		"SB62A1SVRK,06-02-2024 17:52:04,,Pay Bill from 2547****0845 - PETER K Acc. INV-1001,Completed,\"1,000.00\",,,true,Pay Bill Online,2547****0845 - PETER K,,INV-1001\r\n" +
		"SB6AAB12CD,06-02-2024 18:00:10,,Business Pay Bill Charge,Completed,,-15.00,,true,Business Pay Bill Charge,,SB62A1SVRK,\r\n" +
		"SB6AAB12CE,06-02-2024 18:05,,Pay Bill,Completed,12.345,,,true,Pay Bill Online,,,INV-1002\r\n"
	err := mpesa.StatementParser{}.ParseStatement(strings.NewReader(export), "march.csv",
		func(s providers.Sighting) error {
			t := s.Txn
			fmt.Println(t.ID, t.Type, t.Amount, t.OccurredAt.Format(time.RFC3339), t.Reference, t.LinkedID, s.Source.Ref)
			return nil
		},
		func(perr *ledger.ParseError, raw []byte) error {
			fmt.Println("rejected:", perr)
			return nil
		})
	fmt.Println("file error:", err)
	// Output:
	// SB62A1SVRK charge KES 1000.00 2024-02-06T14:52:04Z INV-1001  statement:SB62A1SVRK
	// SB6AAB12CD fee KES 15.00 2024-02-06T15:00:10Z  SB62A1SVRK statement:SB6AAB12CD
	// rejected: march.csv line 6: field Paid In: 12.345 in KES (at most 2): more decimal places than the currency allows
	// file error: <nil>
}

// ExampleCharger pushes a prompt to the fake Daraja, which delivers the
// callback once the customer pays; the query then agrees.
func ExampleCharger() {
	ctx := context.Background()
	clock := func() time.Time { return time.Date(2024, 2, 6, 14, 52, 0, 0, time.UTC) }
	callbacks := make(chan []byte, 1)
	fake := mpesafake.New(mpesafake.Config{Seed: 1, Clock: clock,
		Deliver: func(_ context.Context, url string, body []byte) error { callbacks <- body; return nil }})
	base := fake.Start()
	defer fake.Close()
	short, pass, key, secret := fake.Credentials()
	charger, err := mpesa.NewCharger(mpesa.Config{BaseURL: base, ShortCode: short, PassKey: pass, ConsumerKey: key,
		ConsumerSecret: secret, CallbackURL: "https://pay.example.com/daraja/TOKEN/stk", Clock: clock})
	if err != nil {
		fmt.Println(err)
		return
	}
	amount, _ := money.Parse("1500", "KES")
	res, err := charger.Charge(ctx, providers.ChargeRequest{IntentKey: "charge:order-4471", Amount: amount,
		Customer: "0712345678", Reference: "ORDER4471"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("push:", res.Status)
	q, _ := charger.QueryStatus(ctx, res.ProviderRef)
	fmt.Println("query while the prompt is open:", q.Status)

	_ = fake.Settle(ctx, res.ProviderRef)
	ev, _ := mpesa.CallbackParser{}.ParseCallback(<-callbacks, "callback:1", clock())
	o := ev.Outcomes[0]
	fmt.Println("callback:", o.Status, o.Amount, o.ProviderRef == res.ProviderRef)
	q, _ = charger.QueryStatus(ctx, res.ProviderRef)
	fmt.Println("query after paying:", q.Status)
	// Output:
	// push: pending
	// query while the prompt is open: pending
	// callback: succeeded KES 1500.00 true
	// query after paying: succeeded
}

// ExampleCharger_Refund reverses a payment at the fake Daraja. The request
// is only accepted at first; the result callback names the attempt by the
// ProviderRef Refund returned and settles it. When the result is lost, the
// status query's own callback does the same.
func ExampleCharger_Refund() {
	ctx := context.Background()
	clock := func() time.Time { return time.Date(2024, 2, 6, 14, 52, 0, 0, time.UTC) }
	type posted struct {
		url  string
		body []byte
	}
	callbacks := make(chan posted, 4)
	fake := mpesafake.New(mpesafake.Config{Seed: 1, Clock: clock,
		// The reversal's result is lost; only a status query can tell.
		DecideReversal: func(mpesafake.Reversal, *rand.Rand) mpesafake.ReversalOutcome {
			return mpesafake.ReversalOutcome{Callback: mpesafake.DeliverNever}
		},
		Deliver: func(_ context.Context, url string, body []byte) error { callbacks <- posted{url, body}; return nil }})
	base := fake.Start()
	defer fake.Close()
	short, pass, key, secret := fake.Credentials()
	initiator, credential := fake.InitiatorCredentials()
	hcfg := mpesa.HandlerConfig{PathToken: "0123456789abcdef0123456789abcdef"}
	charger, err := mpesa.NewCharger(mpesa.Config{BaseURL: base, ShortCode: short, PassKey: pass, ConsumerKey: key,
		ConsumerSecret: secret, CallbackURL: hcfg.CallbackURL("https://pay.example.com", "stk"), Clock: clock,
		Initiator: initiator, SecurityCredential: credential,
		ReversalURLs: hcfg.ResultURLsAt("https://pay.example.com", "reversal"),
		StatusURLs:   hcfg.ResultURLsAt("https://pay.example.com", "status")})
	if err != nil {
		fmt.Println(err)
		return
	}
	payment, _, _ := fake.AddC2B(ctx, mpesafake.C2BPayment{Amount: "1500.00", BillRef: "ORDER4471"}, false)
	amount, _ := money.Parse("1500", "KES")
	req := providers.RefundRequest{RefundKey: "refund:order-4471:1", ChargeKey: "charge:order-4471",
		ChargeTxnID: payment.TransID, Amount: amount, Reason: "Paid twice"}
	res, err := charger.Refund(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("reversal:", res.Status)
	_ = fake.SettleReversal(ctx, res.ProviderRef)

	q, _ := charger.QueryRefundStatus(ctx, req, res.ProviderRef)
	fmt.Println("status query:", q.Status)
	p := <-callbacks
	ev, _ := mpesa.CallbackParser{}.ParseCallbackKind(mpesa.KindTransactionStatus, p.body, "callback:1", clock())
	o, tx := ev.Outcomes[0], ev.Sightings[0].Txn
	fmt.Println("posted to:", strings.TrimPrefix(p.url, "https://pay.example.com"))
	fmt.Println("verdict:", o.Status, o.Amount, o.ProviderRef == res.ProviderRef)
	fmt.Println("seen:", tx.Type, "of", tx.LinkedID == payment.TransID)
	// Output:
	// reversal: pending
	// status query: unknown
	// posted to: /daraja/0123456789abcdef0123456789abcdef/status/result
	// verdict: succeeded KES 1500.00 true
	// seen: reversal of true
}
