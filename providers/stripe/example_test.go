package stripe_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/stripe"
)

func ExampleReportParser() {
	report := "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_metadata[intent_key]\n" +
		"txn_1,2024-11-23 14:05:06,usd,100.00,3.20,96.80,charge,ch_1,ch_1,charge:order-4471\n" +
		"txn_2,2024-11-24 09:00:00,usd,-40.00,0.00,-40.00,refund,re_1,ch_1,charge:order-4471\n" +
		"txn_3,2024-11-24 10:00:00,usd,12.345,0.00,12.345,charge,ch_2,ch_2,charge:order-4472\n"
	p := stripe.ReportParser{Clock: func() time.Time { return time.Date(2024, 11, 25, 0, 0, 0, 0, time.UTC) }}
	err := p.ParseStatement(strings.NewReader(report), "payouts.csv",
		func(s providers.Sighting) error {
			x := s.Txn
			fmt.Println(x.Type, x.ID, x.Amount, "linked="+x.LinkedID, "ref="+x.Reference)
			return nil
		},
		func(perr *ledger.ParseError, raw []byte) error {
			fmt.Println("rejected:", perr)
			return nil
		})
	fmt.Println("error:", err)
	// Output:
	// charge ch_1 USD 100.00 linked= ref=charge:order-4471
	// fee txn_1 USD 3.20 linked=ch_1 ref=
	// refund re_1 USD 40.00 linked=ch_1 ref=charge:order-4471
	// rejected: payouts.csv line 4: field gross: 12.345 in USD (at most 2): more decimal places than the currency allows
	// error: <nil>
}

func ExampleEventParser() {
	body := `{"id":"evt_1","object":"event","type":"payment_intent.payment_failed","created":1732400001,` +
		`"data":{"object":{"id":"pi_1","object":"payment_intent","amount":1050,"currency":"usd","status":"requires_payment_method",` +
		`"last_payment_error":{"code":"card_declined","decline_code":"insufficient_funds","message":"Your card has insufficient funds."}}}}`
	ev, err := stripe.EventParser{}.ParseCallback([]byte(body), "callback:42", time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	o := ev.Outcomes[0]
	fmt.Println(ev.Kind, o.ProviderRef, o.Status, o.Amount, o.Code)
	// Output:
	// payment_intent.payment_failed pi_1 failed USD 10.50 insufficient_funds
}
