package main

import (
	"strings"
	"testing"
)

// TestMoneyAcrossDaysFromTheCommandLine runs, as a user on the embedded
// default or on PostgreSQL would, daily windows of the three cases that
// crossed days or came in parts, with the documented file formats: an
// invoice paid two days later (its missing payment of the 12th resolved by
// the run of the 14th, with the reason, and no unknown charge), an invoice
// paid in two instalments (no finding), and a Stripe refund of an earlier
// day's charge (an unrecorded refund naming the charge's intent).
func TestMoneyAcrossDaysFromTheCommandLine(t *testing.T) {
	t.Parallel()
	onBothEngines(t, func(t *testing.T, u *cliUser) {
		write, do := u.write, u.stdout
		do(0, "migrate")
		// The intents name no kind: M-Pesa's default makes them
		// expected payments (a paybill invoice).
		do(0, "import", "intents", write("intents.csv", `key,provider,amount,currency,status,created_at,reference
inv:3001,mpesa,1500,KES,succeeded,2026-03-12T09:00:00+03:00,INV3001
inv:2001,mpesa,1500,KES,pending,2026-03-13T08:00:00+03:00,INV2001
order:4471,stripe,40.00,USD,succeeded,2026-11-07T14:05:00Z,
`))
		header := "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"
		out := do(0, "run", "--provider", "mpesa", "--from", "2026-03-12", "--no-pull")
		if !strings.Contains(out, "missing_at_provider  1") {
			t.Fatalf("day 12:\n%s", out)
		}
		do(0, "import", "statement", "--provider", "mpesa", write("mpesa-13.csv", header+
			`SCG1AA0002,13-03-2026 10:00:00,13-03-2026 10:00:00,Pay Bill from 2547****0342 - CHEBET Acc. INV2001,Completed,"1,000.00",,"1,000.00",TRUE,Pay Bill Online,2547****0342 - CHEBET,,INV2001
SCG1AA0003,13-03-2026 12:00:00,13-03-2026 12:00:00,Pay Bill from 2547****0342 - CHEBET Acc. inv 2001,Completed,500.00,,"1,500.00",TRUE,Pay Bill Online,2547****0342 - CHEBET,,inv 2001
`))
		if out := do(0, "run", "--provider", "mpesa", "--from", "2026-03-13", "--no-pull"); !strings.Contains(out, "No findings.") {
			t.Fatalf("day 13 (an invoice paid in two instalments):\n%s", out)
		}
		do(0, "import", "statement", "--provider", "mpesa", write("mpesa-14.csv", header+
			`SCG1AA0001,14-03-2026 10:00:00,14-03-2026 10:00:00,Pay Bill from 2547****0342 - CHEBET Acc. INV3001,Completed,"1,500.00",,"3,000.00",TRUE,Pay Bill Online,2547****0342 - CHEBET,,INV3001
`))
		out = do(0, "run", "--provider", "mpesa", "--from", "2026-03-14", "--no-pull")
		if !strings.Contains(out, "No findings.") || !strings.Contains(out, "1 resolved") ||
			!strings.Contains(out, "missing_at_provider inv:3001: paid 2026-03-14 10:00 EAT (+03:00), SCG1AA0001, 2 days after the intent") {
			t.Fatalf("day 14:\n%s", out)
		}
		// The resolved finding is listed with every status, not among
		// the open ones.
		if out := do(0, "findings", "list", "--status", "all", "--format", "csv"); !strings.Contains(out, "missing_at_provider") ||
			!strings.Contains(out, "inv:3001") || !strings.Contains(out, "resolved") {
			t.Fatalf("findings list --status all:\n%s", out)
		}
		if out := do(0, "findings", "list"); strings.Contains(out, "inv:3001") {
			t.Fatalf("findings list:\n%s", out)
		}
		for _, day := range []string{"2026-03-12", "2026-03-13", "2026-03-14"} {
			if out := do(0, "run", "--provider", "mpesa", "--from", day, "--no-pull", "--fail-on-findings"); !strings.Contains(out, "No findings.") {
				t.Fatalf("%s again:\n%s", day, out)
			}
		}

		do(0, "import", "statement", "--provider", "stripe", write("stripe.csv",
			`balance_transaction_id,created_utc,charge_created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_intent_id,customer_id,customer_email,automatic_payout_id,description,payment_metadata[intent_key]
txn_1,2026-11-07 14:05:06,2026-11-07 14:05:04,usd,40.00,1.46,38.54,charge,ch_1,ch_1,pi_1,,,po_1,Order 4471,order:4471
txn_2,2026-11-10 09:00:00,2026-11-07 14:05:04,usd,-40.00,0.00,-40.00,refund,re_1,ch_1,pi_1,,,po_2,Refund for order 4471,order:4471
`))
		if out := do(0, "run", "--provider", "stripe", "--from", "2026-11-07", "--no-pull"); !strings.Contains(out, "No findings.") {
			t.Fatalf("stripe day 7:\n%s", out)
		}
		out = do(0, "run", "--provider", "stripe", "--from", "2026-11-10", "--no-pull", "--format", "json")
		if !strings.Contains(out, `"kind": "unrecorded_refund"`) || !strings.Contains(out, `"intent_key": "order:4471"`) {
			t.Fatalf("stripe day 10:\n%s", out)
		}
	})
}
