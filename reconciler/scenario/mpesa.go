package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Mpesa builds an M-Pesa day (Nairobi midnight to midnight) of about n
// intents: STK pushes confirmed by callback and often by the portal
// statement too, PayBill payments that arrive as C2B confirmations, failed
// prompts, statement fees; one of each anomaly and each trap.
func Mpesa(seed uint64, date time.Time, n int) *Day {
	from := time.Date(date.Year(), date.Month(), date.Day(), 0, 0, 0, 0, EAT).UTC()
	d := &Day{Name: "mpesa", Provider: "mpesa", From: from, To: from.Add(24 * time.Hour),
		Now: from.Add(24*time.Hour + 30*time.Minute), Grace: time.Hour}
	b := newBuilder(seed, d)
	m := mpesa{builder: b, line: 1}
	for range n {
		switch p := b.r.IntN(100); {
		case p < 75:
			m.stk(b.at(from, 23*time.Hour), ledger.StateSucceeded)
		case p < 90:
			m.paybill(b.at(from, 23*time.Hour))
		case p < 97:
			m.failedPrompt(b.at(from, 23*time.Hour))
		default:
			// A prompt still on the customer's phone at the end of the day.
			created := d.To.Add(-time.Duration(1+b.r.IntN(20)) * time.Minute)
			b.intent(b.key("charge:order"), b.phone(), m.amount(), ledger.StateProcessing, created,
				Attempt{Ref: m.checkout(created), Outcome: ledger.OutcomeStarted, At: created})
		}
	}
	m.traps()
	m.anomalies()
	return b.finish()
}

type mpesa struct {
	*builder
	line int
}

func (m *mpesa) amount() money.Amount { return mustAmount(int64(50+m.r.IntN(250)*100)*100, "KES") }

func (m *mpesa) receipt() string { return m.code("SB", 8, alnum) }

func (m *mpesa) checkout(at time.Time) string {
	return fmt.Sprintf("ws_CO_%s%03d%s", at.In(EAT).Format("02012006150405"), m.r.IntN(1000), m.phone())
}

func (m *mpesa) stkBody(checkout, receipt string, t ledger.ProviderTxn, phone string) string {
	return fmt.Sprintf(`{"Body":{"stkCallback":{"MerchantRequestID":"%d-%d-1","CheckoutRequestID":"%s","ResultCode":0,`+
		`"ResultDesc":"The service request is processed successfully.","CallbackMetadata":{"Item":[`+
		`{"Name":"Amount","Value":%s},{"Name":"MpesaReceiptNumber","Value":"%s"},{"Name":"Balance"},`+
		`{"Name":"TransactionDate","Value":%s},{"Name":"PhoneNumber","Value":%s}]}}}}`,
		m.r.IntN(99999), m.r.IntN(99999999), checkout, t.Amount.Text(), receipt,
		t.OccurredAt.In(EAT).Format("20060102150405"), phone)
}

func (m *mpesa) c2bBody(t ledger.ProviderTxn, billRef, msisdn string) string {
	return fmt.Sprintf(`{"TransactionType":"Pay Bill","TransID":"%s","TransTime":"%s","TransAmount":"%s",`+
		`"BusinessShortCode":"4130669","BillRefNumber":"%s","InvoiceNumber":"","OrgAccountBalance":"",`+
		`"ThirdPartyTransID":"","MSISDN":"%s","FirstName":"PETER"}`,
		t.ID, t.OccurredAt.In(EAT).Format("20060102150405"), t.Amount.Text(), billRef, msisdn)
}

func (m *mpesa) statementRow(t ledger.ProviderTxn, acc string) (string, string) {
	m.line++
	ref := fmt.Sprintf("org_4130669_statement_%s.csv:%d", m.d.From.In(EAT).Format("20060102"), m.line)
	ts := t.OccurredAt.In(EAT).Format("02-01-2006 15:04:05")
	return ref, fmt.Sprintf("%s,%s,%s,Pay Bill from %s - PETER K Acc. %s,Completed,%s,,,true,Pay Bill Online,%s - PETER K,,%s",
		t.ID, ts, ts, t.Counterparty, acc, t.Amount.Text(), t.Counterparty, acc)
}

// stk plants a prompt that the customer paid: the callback, and for some
// the statement row and its charge.
func (m *mpesa) stk(created time.Time, state ledger.State) (*Intent, ledger.ProviderTxn) {
	phone := m.phone()
	co := m.checkout(created)
	in := m.intent(m.key("charge:order"), phone, m.amount(), state, created,
		Attempt{Ref: co, Outcome: ledger.OutcomeSucceeded, At: created})
	t := m.charge(in, co, created.Add(time.Duration(15+m.r.IntN(80))*time.Second))
	m.see(t, "stk_callback", "callback:"+co, m.stkBody(co, t.ID, t, phone), t.OccurredAt.Add(2*time.Second))
	if m.r.IntN(10) < 4 {
		m.statement(t, in.Reference)
	}
	return in, t
}

func (m *mpesa) charge(in *Intent, checkout string, at time.Time) ledger.ProviderTxn {
	return ledger.ProviderTxn{ID: m.receipt(), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: in.Amount,
		OccurredAt: at.UTC(), ProviderRef: checkout, Counterparty: ledger.MaskCustomer(in.Customer)}
}

// statement adds the portal statement row of t (it names the account
// reference) and, for some, the Pay Bill charge that the portal books
// against it.
func (m *mpesa) statement(t ledger.ProviderTxn, acc string) {
	row := t
	row.Reference, row.ProviderRef = acc, ""
	ref, raw := m.statementRow(row, acc)
	m.see(row, "statement", ref, raw, m.d.To.Add(20*time.Minute))
	if m.r.IntN(5) == 0 {
		fee := ledger.ProviderTxn{ID: m.receipt(), Type: ledger.TxnFee, Status: ledger.TxnSucceeded,
			Amount: mustAmount(1500, "KES"), OccurredAt: t.OccurredAt.Add(time.Second), LinkedID: t.ID}
		m.line++
		m.see(fee, "statement", fmt.Sprintf("org_4130669_statement_%s.csv:%d", m.d.From.In(EAT).Format("20060102"), m.line),
			fee.ID+",,,Business Pay Bill Charge,Completed,,-15.00,,true,Business Pay Bill Charge,,"+t.ID+",", m.d.To.Add(20*time.Minute))
	}
}

// paybill plants a customer who paid to the PayBill with the intent's
// reference as the account number, confirmed by C2B.
func (m *mpesa) paybill(created time.Time) (*Intent, ledger.ProviderTxn) {
	phone := m.phone()
	in := m.intent(m.key("charge:invoice"), phone, m.amount(), ledger.StateSucceeded, created)
	acc := in.Reference
	if m.r.IntN(3) == 0 {
		acc = strings.ToLower(acc) // payers type it as they like
	}
	t := ledger.ProviderTxn{ID: m.receipt(), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: in.Amount,
		OccurredAt: created.Add(time.Duration(60+m.r.IntN(600)) * time.Second), Reference: acc,
		Counterparty: ledger.MaskCustomer(hashedMSISDN(phone))}
	m.see(t, "c2b_confirmation", t.ID, m.c2bBody(t, acc, hashedMSISDN(phone)), t.OccurredAt.Add(time.Second))
	return in, t
}

func (m *mpesa) failedPrompt(created time.Time) {
	co := m.checkout(created)
	m.intent(m.key("charge:order"), m.phone(), m.amount(), ledger.StateFailed, created,
		Attempt{Ref: co, Outcome: ledger.OutcomeFailed, At: created})
}

func (m *mpesa) traps() {
	d := m.d
	// The same STK callback delivered three times.
	in, t := m.stk(m.at(d.From, 20*time.Hour), ledger.StateSucceeded)
	last := d.Sightings[len(d.Sightings)-1]
	if last.Txn.ID != t.ID {
		last = d.Sightings[len(d.Sightings)-2]
	}
	d.Sightings = append(d.Sightings, last, last)
	d.Traps = append(d.Traps, "callback delivered three times: "+in.Key)

	// One receipt through the STK callback, the C2B confirmation and the
	// statement.
	in, t = m.stk(m.at(d.From, 20*time.Hour), ledger.StateSucceeded)
	c2b := t
	c2b.ProviderRef, c2b.Reference = "", in.Reference
	m.see(c2b, "c2b_confirmation", t.ID, m.c2bBody(c2b, in.Reference, "2547 ***** "+in.Customer[len(in.Customer)-3:]), t.OccurredAt.Add(3*time.Second))
	if !m.hasChannel(t.ID, "statement") {
		m.statement(t, in.Reference)
	}
	d.Traps = append(d.Traps, "one receipt via STK callback, C2B confirmation and statement: "+in.Key)

	// An intent at 23:59:50 whose receipt says 00:00:20 the next day, and
	// the same across this window's opening edge.
	for _, created := range []time.Time{d.To.Add(-10 * time.Second), d.From.Add(-10 * time.Second)} {
		phone := m.phone()
		co := m.checkout(created)
		in := m.intent(m.key("charge:order"), phone, m.amount(), ledger.StateSucceeded, created,
			Attempt{Ref: co, Outcome: ledger.OutcomeSucceeded, At: created})
		t := m.charge(in, co, created.Add(30*time.Second))
		m.see(t, "stk_callback", "callback:"+co, m.stkBody(co, t.ID, t, phone), t.OccurredAt.Add(time.Second))
		d.Traps = append(d.Traps, "intent at 23:59:50, receipt at 00:00:20: "+in.Key)
	}

	// A duplicate charge that was reversed.
	created := m.at(d.From, 20*time.Hour)
	phone := m.phone()
	co1, co2 := m.checkout(created), m.checkout(created.Add(2*time.Minute))
	in = m.intent(m.key("charge:order"), phone, m.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: co1, Outcome: ledger.OutcomeUnknown, At: created},
		Attempt{Ref: co2, Outcome: ledger.OutcomeSucceeded, At: created.Add(2 * time.Minute)})
	t1, t2 := m.charge(in, co1, created.Add(40*time.Second)), m.charge(in, co2, created.Add(150*time.Second))
	m.see(t1, "stk_callback", "callback:"+co1, m.stkBody(co1, t1.ID, t1, phone), t1.OccurredAt.Add(time.Second))
	m.see(t2, "stk_callback", "callback:"+co2, m.stkBody(co2, t2.ID, t2, phone), t2.OccurredAt.Add(time.Second))
	rev := ledger.ProviderTxn{ID: m.receipt(), Type: ledger.TxnReversal, Status: ledger.TxnSucceeded, Amount: in.Amount,
		OccurredAt: t2.OccurredAt.Add(3 * time.Hour), LinkedID: t2.ID}
	m.see(rev, "reversal_result", "AG_"+rev.OccurredAt.Format("20060102")+"_"+m.code("", 16, "0123456789abcdef"),
		fmt.Sprintf(`{"Result":{"ResultType":0,"ResultCode":0,"TransactionID":"%s","ResultParameters":{"ResultParameter":[{"Key":"OriginalTransactionID","Value":"%s"}]}}}`, rev.ID, t2.ID),
		rev.OccurredAt.Add(time.Second))
	d.Traps = append(d.Traps, "duplicate charge reversed: "+in.Key)

	// A late success callback for an intent marked unknown: settled.
	created = m.at(d.From, 18*time.Hour)
	phone = m.phone()
	co := m.checkout(created)
	in = m.intent(m.key("charge:order"), phone, m.amount(), ledger.StateUnknown, created,
		Attempt{Ref: co, Outcome: ledger.OutcomeUnknown, At: created})
	t = m.charge(in, co, created.Add(50*time.Second))
	m.see(t, "stk_callback", "callback:"+co, m.stkBody(co, t.ID, t, phone), created.Add(4*time.Hour))
	d.Settled = append(d.Settled, in.Key)
	d.Traps = append(d.Traps, "late success for an unknown intent: "+in.Key)

	// A pending charge inside the settlement grace.
	created = d.To.Add(-12 * time.Minute)
	co = m.checkout(created)
	in = m.intent(m.key("charge:order"), m.phone(), m.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: co, Outcome: ledger.OutcomeSucceeded, At: created})
	t = m.charge(in, co, created.Add(time.Minute))
	t.Status = ledger.TxnPending
	m.see(t, "transaction_status_result", "AG_"+m.code("", 16, "0123456789abcdef"),
		`{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"TransactionStatus","Value":"Pending"}]}}}`,
		t.OccurredAt.Add(time.Minute))
	d.Traps = append(d.Traps, "pending charge inside the grace: "+in.Key)
}

func (m *mpesa) hasChannel(id, channel string) bool {
	for _, s := range m.d.Sightings {
		if s.Txn.ID == id && s.Source.Channel == channel {
			return true
		}
	}
	return false
}

func (m *mpesa) anomalies() {
	d := m.d
	// duplicate_charge: the first prompt timed out, a second was pushed,
	// and the customer paid both.
	created := m.at(d.From, 20*time.Hour)
	phone := m.phone()
	co1, co2 := m.checkout(created), m.checkout(created.Add(90*time.Second))
	in := m.intent(m.key("charge:order"), phone, m.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: co1, Outcome: ledger.OutcomeUnknown, At: created},
		Attempt{Ref: co2, Outcome: ledger.OutcomeSucceeded, At: created.Add(90 * time.Second)})
	t1, t2 := m.charge(in, co1, created.Add(70*time.Second)), m.charge(in, co2, created.Add(130*time.Second))
	m.see(t1, "stk_callback", "callback:"+co1, m.stkBody(co1, t1.ID, t1, phone), t1.OccurredAt.Add(time.Second))
	m.see(t2, "stk_callback", "callback:"+co2, m.stkBody(co2, t2.ID, t2, phone), t2.OccurredAt.Add(time.Second))
	m.expect(ledger.KindDuplicateCharge, in.Key, t1.ID, t2.ID)

	// missing_at_provider: marked succeeded, but no callback and no
	// statement row. The statement row arrives late.
	created = m.at(d.From, 16*time.Hour)
	co := m.checkout(created)
	in = m.intent(m.key("charge:order"), m.phone(), m.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: co, Outcome: ledger.OutcomeSucceeded, At: created})
	m.expect(ledger.KindMissingAtProvider, in.Key)
	d.Remedied = Expected{Kind: ledger.KindMissingAtProvider, IntentKey: in.Key, TxnIDs: []string{}}
	late := m.charge(in, "", created.Add(time.Minute))
	late.Reference = in.Reference
	ref, raw := m.statementRow(late, late.Reference)
	d.Late = append(d.Late, sighting(d.Provider, late, "statement", ref, raw, d.Now.Add(time.Hour)))

	// unknown_charge: a PayBill payment to an account number nobody issued.
	t := ledger.ProviderTxn{ID: m.receipt(), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: mustAmount(250000, "KES"),
		OccurredAt: m.at(d.From, 23*time.Hour), Reference: "INV-99017", Counterparty: ledger.MaskCustomer(m.phone())}
	m.see(t, "c2b_confirmation", t.ID, m.c2bBody(t, t.Reference, "2547 ***** 118"), t.OccurredAt.Add(time.Second))
	m.expect(ledger.KindUnknownCharge, "", t.ID)

	// amount_mismatch: the payer typed 1,000 for a 1,500 invoice.
	in, t = m.paybill(m.at(d.From, 20*time.Hour))
	in.Amount = mustAmount(150000, "KES")
	last := &d.Sightings[len(d.Sightings)-1]
	last.Txn.Amount = mustAmount(100000, "KES")
	last.Source.Raw = []byte(m.c2bBody(last.Txn, last.Txn.Reference, hashedMSISDN(in.Customer)))
	m.expect(ledger.KindAmountMismatch, in.Key, t.ID)

	// status_mismatch: the prompt was given up as failed, then the
	// customer paid it.
	created = m.at(d.From, 20*time.Hour)
	phone = m.phone()
	co = m.checkout(created)
	in = m.intent(m.key("charge:order"), phone, m.amount(), ledger.StateFailed, created,
		Attempt{Ref: co, Outcome: ledger.OutcomeFailed, At: created})
	t = m.charge(in, co, created.Add(100*time.Second))
	m.see(t, "stk_callback", "callback:"+co, m.stkBody(co, t.ID, t, phone), t.OccurredAt.Add(time.Second))
	m.expect(ledger.KindStatusMismatch, in.Key, t.ID)

	// stuck_intent: a worker claimed it, recorded the attempt and died.
	created = m.at(d.From, 12*time.Hour)
	in = m.intent(m.key("charge:order"), m.phone(), m.amount(), ledger.StateProcessing, created,
		Attempt{Ref: "", Outcome: ledger.OutcomeStarted, At: created})
	m.expect(ledger.KindStuckIntent, in.Key)

	// unrecorded_refund: a payment reversed from the M-PESA portal, with no
	// refund intent in the books.
	in, t = m.stk(m.at(d.From, 20*time.Hour), ledger.StateSucceeded)
	rev := m.reversal(t)
	m.expect(ledger.KindUnrecordedRefund, in.Key, rev.ID)

	// A reversal the books hold as a refund intent: found through the
	// original receipt, no finding.
	in, t = m.stk(m.at(d.From, 20*time.Hour), ledger.StateSucceeded)
	key, customer := in.Key, in.Customer
	rev = m.reversal(t)
	r := m.intent(m.key("refund:"+key), customer, t.Amount, ledger.StateSucceeded, rev.OccurredAt.Add(-time.Minute))
	r.Kind, r.RefundOf = ledger.IntentRefund, key
	d.Traps = append(d.Traps, "reversal recorded as a refund: "+key)
}

// reversal reverses t in full, seen through the Reversal API's result.
func (m *mpesa) reversal(t ledger.ProviderTxn) ledger.ProviderTxn {
	rev := ledger.ProviderTxn{ID: m.receipt(), Type: ledger.TxnReversal, Status: ledger.TxnSucceeded, Amount: t.Amount,
		OccurredAt: t.OccurredAt.Add(3 * time.Hour), LinkedID: t.ID}
	m.see(rev, "reversal_result", "AG_"+rev.OccurredAt.Format("20060102")+"_"+m.code("", 16, "0123456789abcdef"),
		fmt.Sprintf(`{"Result":{"ResultType":0,"ResultCode":0,"TransactionID":"%s","ResultParameters":{"ResultParameter":[{"Key":"OriginalTransactionID","Value":"%s"}]}}}`, rev.ID, t.ID),
		rev.OccurredAt.Add(time.Second))
	return rev
}
