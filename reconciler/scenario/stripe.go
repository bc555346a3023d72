package scenario

import (
	"fmt"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

const b62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Stripe builds a Stripe day (UTC midnight to midnight) of about n intents:
// PaymentIntents whose charges are seen through the balance-transaction
// pull and often the webhook too, fees, partial refunds, declines; one of
// each anomaly and each trap.
func Stripe(seed uint64, date time.Time, n int) *Day {
	from := time.Date(date.Year(), date.Month(), date.Day(), 0, 0, 0, 0, time.UTC)
	d := &Day{Name: "stripe", Provider: "stripe", From: from, To: from.Add(24 * time.Hour),
		Now: from.Add(24*time.Hour + 30*time.Minute), Grace: time.Hour}
	b := newBuilder(seed, d)
	s := stripe{builder: b}
	for range n {
		switch p := b.r.IntN(100); {
		case p < 88:
			in, ch := s.paid(b.at(from, 23*time.Hour), s.amount(), ledger.StateSucceeded)
			if b.r.IntN(20) == 0 {
				s.refund(ch, false, in, true) // recorded: no finding
			}
		case p < 97:
			created := b.at(from, 23*time.Hour)
			b.intent(b.key("charge:sub"), b.email(), s.amount(), ledger.StateFailed, created,
				Attempt{Ref: s.id("pi_"), Outcome: ledger.OutcomeFailed, At: created})
		default:
			// Waiting for its charge: created in the last minutes of the
			// day, inside the settlement grace when the day is reconciled.
			created := b.at(from.Add(23*time.Hour+35*time.Minute), 25*time.Minute)
			b.intent(b.key("charge:sub"), b.email(), s.amount(), ledger.StatePending, created)
		}
	}
	s.traps()
	s.anomalies()
	return b.finish()
}

type stripe struct{ *builder }

func (b *builder) email() string { return fmt.Sprintf("cust%04d@example.com", b.r.IntN(10000)) }

func (s *stripe) id(prefix string) string { return s.code(prefix, 24, b62) }

func (s *stripe) amount() money.Amount {
	cur := "USD"
	if s.r.IntN(5) == 0 {
		cur = "EUR"
	}
	return mustAmount(int64(500+s.r.IntN(20000)), cur)
}

func (s *stripe) chargeOf(in *Intent, pi string, at time.Time) ledger.ProviderTxn {
	return ledger.ProviderTxn{ID: s.id("ch_"), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: in.Amount,
		OccurredAt: at.UTC(), Reference: in.Key, ProviderRef: pi, Counterparty: ledger.MaskCustomer(in.Customer)}
}

func (s *stripe) balanceBody(t ledger.ProviderTxn, txn string) string {
	minor, _ := t.Amount.Minor()
	return fmt.Sprintf(`{"id":"%s","object":"balance_transaction","amount":%d,"currency":"%s","created":%d,`+
		`"reporting_category":"%s","source":"%s","status":"available","type":"%s"}`,
		txn, minor, lower(t.Amount.Currency), t.OccurredAt.Unix(), t.Type, t.ID, t.Type)
}

func (s *stripe) webhookBody(t ledger.ProviderTxn, evt string) string {
	minor, _ := t.Amount.Minor()
	return fmt.Sprintf(`{"id":"%s","object":"event","type":"charge.succeeded","data":{"object":{"id":"%s","object":"charge",`+
		`"amount":%d,"currency":"%s","payment_intent":"%s","status":"succeeded","metadata":{"intent_key":"%s"}}}}`,
		evt, t.ID, minor, lower(t.Amount.Currency), t.ProviderRef, t.Reference)
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// api records t as the balance-transaction pull sees it.
func (s *stripe) api(t ledger.ProviderTxn) {
	txn := s.id("txn_")
	s.see(t, "api", txn, s.balanceBody(t, txn), s.d.To.Add(10*time.Minute))
}

func (s *stripe) webhook(t ledger.ProviderTxn) string {
	evt := s.id("evt_")
	s.see(t, "webhook", evt, s.webhookBody(t, evt), t.OccurredAt.Add(2*time.Second))
	return evt
}

// paid plants a PaymentIntent that succeeded: its charge from the pull,
// often from the webhook too, and the Stripe fee.
func (s *stripe) paid(created time.Time, amount money.Amount, state ledger.State) (*Intent, ledger.ProviderTxn) {
	pi := s.id("pi_")
	in := s.intent(s.key("charge:sub"), s.email(), amount, state, created,
		Attempt{Ref: pi, Outcome: ledger.OutcomeSucceeded, At: created})
	ch := s.chargeOf(in, pi, created.Add(time.Duration(1+s.r.IntN(5))*time.Second))
	if s.r.IntN(2) == 0 {
		s.webhook(ch)
	}
	s.api(ch)
	minor, _ := ch.Amount.Minor()
	fee := ledger.ProviderTxn{ID: s.id("txn_"), Type: ledger.TxnFee, Status: ledger.TxnSucceeded,
		Amount: mustAmount(30+minor*29/1000, ch.Amount.Currency), OccurredAt: ch.OccurredAt, LinkedID: ch.ID}
	s.see(fee, "api", fee.ID, s.balanceBody(fee, fee.ID), s.d.To.Add(10*time.Minute))
	return in, ch
}

// refund refunds part of ch (all of it when full). With record, the books
// hold it: a refund intent of in, succeeded, whose attempt recorded the
// refund's id.
func (s *stripe) refund(ch ledger.ProviderTxn, full bool, in *Intent, record bool) ledger.ProviderTxn {
	of, customer := in.Key, in.Customer
	minor, _ := ch.Amount.Minor()
	if !full {
		minor /= 2
	}
	re := ledger.ProviderTxn{ID: s.id("re_"), Type: ledger.TxnRefund, Status: ledger.TxnSucceeded,
		Amount: mustAmount(minor, ch.Amount.Currency), OccurredAt: ch.OccurredAt.Add(2 * time.Hour), LinkedID: ch.ID}
	s.api(re)
	if record {
		s.refundIntent(of, customer, re.Amount, re.OccurredAt.Add(-time.Minute), re.ID)
	}
	return re
}

// refundIntent records a refund of the charge intent of, succeeded, with an
// attempt for each refund id in refs.
func (s *stripe) refundIntent(of, customer string, amount money.Amount, created time.Time, refs ...string) *Intent {
	var attempts []Attempt
	for _, ref := range refs {
		attempts = append(attempts, Attempt{Ref: ref, Outcome: ledger.OutcomeSucceeded, At: created})
	}
	r := s.intent(s.key("refund:"+of), customer, amount, ledger.StateSucceeded, created, attempts...)
	r.Kind, r.RefundOf = ledger.IntentRefund, of
	return r
}

func (s *stripe) traps() {
	d := s.d
	// The same webhook delivered three times.
	pi := s.id("pi_")
	created := s.at(d.From, 20*time.Hour)
	in := s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: pi, Outcome: ledger.OutcomeSucceeded, At: created})
	ch := s.chargeOf(in, pi, created.Add(2*time.Second))
	s.webhook(ch)
	d.Sightings = append(d.Sightings, d.Sightings[len(d.Sightings)-1], d.Sightings[len(d.Sightings)-1])
	d.Traps = append(d.Traps, "webhook delivered three times: "+in.Key)

	// One charge through the webhook, the pull and the payout report.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), s.amount(), ledger.StateSucceeded)
	if !s.has(ch.ID, "webhook") {
		s.webhook(ch)
	}
	s.see(ch, "report", "payout_reconciliation.itemized.5:"+ch.ID, ch.ID+","+ch.Amount.Text()+","+lower(ch.Amount.Currency), d.To.Add(time.Hour))
	d.Traps = append(d.Traps, "one charge via webhook, API and report: "+in.Key)

	// Midnight on both edges.
	for _, c := range []time.Time{d.To.Add(-10 * time.Second), d.From.Add(-10 * time.Second)} {
		pi := s.id("pi_")
		in := s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateSucceeded, c,
			Attempt{Ref: pi, Outcome: ledger.OutcomeSucceeded, At: c})
		s.api(s.chargeOf(in, pi, c.Add(30*time.Second)))
		d.Traps = append(d.Traps, "intent at 23:59:50, charge at 00:00:20: "+in.Key)
	}

	// A duplicate charge refunded in full.
	created = s.at(d.From, 20*time.Hour)
	pi1, pi2 := s.id("pi_"), s.id("pi_")
	in = s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: pi1, Outcome: ledger.OutcomeUnknown, At: created},
		Attempt{Ref: pi2, Outcome: ledger.OutcomeSucceeded, At: created.Add(time.Hour)})
	c1, c2 := s.chargeOf(in, pi1, created.Add(time.Second)), s.chargeOf(in, pi2, created.Add(time.Hour))
	s.api(c1)
	s.api(c2)
	s.refund(c2, true, in, false)
	d.Traps = append(d.Traps, "duplicate charge refunded in full, no refund intent: "+in.Key)

	// A charge refunded in full, recorded: neither a status mismatch nor
	// an unrecorded refund.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), s.amount(), ledger.StateSucceeded)
	s.refund(ch, true, in, true)
	d.Traps = append(d.Traps, "charge refunded in full, recorded: "+in.Key)

	// A partial refund recorded by import, before its refund id was
	// known: found through the charge it names.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), s.amount(), ledger.StateSucceeded)
	re := s.refund(ch, false, in, false)
	s.refundIntent(in.Key, in.Customer, re.Amount, re.OccurredAt.Add(-time.Hour))
	d.Traps = append(d.Traps, "partial refund recorded without its refund id: "+in.Key)

	// A late success for an unknown intent: settled.
	created = s.at(d.From, 18*time.Hour)
	pi = s.id("pi_")
	in = s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateUnknown, created,
		Attempt{Ref: pi, Outcome: ledger.OutcomeUnknown, At: created})
	s.webhook(s.chargeOf(in, pi, created.Add(3*time.Second)))
	d.Settled = append(d.Settled, in.Key)
	d.Traps = append(d.Traps, "late success for an unknown intent: "+in.Key)

	// A pending charge inside the settlement grace.
	created = d.To.Add(-15 * time.Minute)
	pi = s.id("pi_")
	in = s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: pi, Outcome: ledger.OutcomeSucceeded, At: created})
	ch = s.chargeOf(in, pi, created.Add(time.Second))
	ch.Status = ledger.TxnPending
	s.api(ch)
	d.Traps = append(d.Traps, "pending charge inside the grace: "+in.Key)
}

func (s *stripe) has(id, channel string) bool {
	for _, x := range s.d.Sightings {
		if x.Txn.ID == id && x.Source.Channel == channel {
			return true
		}
	}
	return false
}

func (s *stripe) anomalies() {
	d := s.d
	// duplicate_charge: a retry after the idempotency key expired created
	// a second PaymentIntent.
	created := s.at(d.From, 20*time.Hour)
	pi1, pi2 := s.id("pi_"), s.id("pi_")
	in := s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: pi1, Outcome: ledger.OutcomeUnknown, At: created},
		Attempt{Ref: pi2, Outcome: ledger.OutcomeSucceeded, At: created.Add(time.Hour)})
	c1, c2 := s.chargeOf(in, pi1, created.Add(time.Second)), s.chargeOf(in, pi2, created.Add(time.Hour))
	s.api(c1)
	s.api(c2)
	s.expect(ledger.KindDuplicateCharge, in.Key, c1.ID, c2.ID)

	// missing_at_provider, remedied by a late pull.
	created = s.at(d.From, 16*time.Hour)
	pi := s.id("pi_")
	in = s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateSucceeded, created,
		Attempt{Ref: pi, Outcome: ledger.OutcomeSucceeded, At: created})
	s.expect(ledger.KindMissingAtProvider, in.Key)
	d.Remedied = Expected{Kind: ledger.KindMissingAtProvider, IntentKey: in.Key, TxnIDs: []string{}}
	late := s.chargeOf(in, pi, created.Add(time.Second))
	txn := s.id("txn_")
	d.Late = append(d.Late, sighting(d.Provider, late, "api", txn, s.balanceBody(late, txn), d.Now.Add(time.Hour)))

	// unknown_charge: a charge made from the dashboard, no intent.
	ch := ledger.ProviderTxn{ID: s.id("ch_"), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: mustAmount(4900, "USD"),
		OccurredAt: s.at(d.From, 23*time.Hour), ProviderRef: s.id("pi_"), Counterparty: "j***@example.com"}
	s.api(ch)
	s.expect(ledger.KindUnknownCharge, "", ch.ID)

	// amount_mismatch: the charge was for 19.99 against 29.99.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), mustAmount(2999, "USD"), ledger.StateSucceeded)
	s.retag(ch.ID, func(t *ledger.ProviderTxn) { t.Amount = mustAmount(1999, "USD") })
	s.expect(ledger.KindAmountMismatch, in.Key, ch.ID)

	// currency_mismatch: charged in EUR for a USD intent.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), mustAmount(2999, "USD"), ledger.StateSucceeded)
	s.retag(ch.ID, func(t *ledger.ProviderTxn) { t.Amount = mustAmount(2999, "EUR") })
	s.expect(ledger.KindCurrencyMismatch, in.Key, ch.ID)

	// status_mismatch: recorded as declined, but the charge went through.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), s.amount(), ledger.StateFailed)
	s.expect(ledger.KindStatusMismatch, in.Key, ch.ID)

	// stuck_intent: unknown since the morning, nothing at Stripe.
	created = s.at(d.From, 10*time.Hour)
	s.intent(s.key("charge:sub"), s.email(), s.amount(), ledger.StateUnknown, created,
		Attempt{Ref: s.id("pi_"), Outcome: ledger.OutcomeUnknown, At: created})
	s.expect(ledger.KindStuckIntent, d.Intents[len(d.Intents)-1].Key)

	// unrecorded_refund: a partial refund made from the dashboard.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), s.amount(), ledger.StateSucceeded)
	re := s.refund(ch, false, in, false)
	s.expect(ledger.KindUnrecordedRefund, in.Key, re.ID)

	// duplicate_refund: a refund retried after its key expired was made
	// twice.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), mustAmount(5000, "USD"), ledger.StateSucceeded)
	key, customer := in.Key, in.Customer
	re1, re2 := s.refund(ch, false, in, false), s.refund(ch, false, in, false)
	r := s.refundIntent(key, customer, re1.Amount, re1.OccurredAt.Add(-time.Minute), re1.ID, re2.ID)
	s.expect(ledger.KindDuplicateRefund, r.Key, re1.ID, re2.ID)

	// missing_at_provider: a refund succeeded locally, nothing at Stripe.
	in, _ = s.paid(s.at(d.From, 16*time.Hour), s.amount(), ledger.StateSucceeded)
	r = s.refundIntent(in.Key, in.Customer, mustAmount(100, in.Amount.Currency), in.CreatedAt.Add(time.Hour), s.id("re_"))
	s.expect(ledger.KindMissingAtProvider, r.Key)

	// amount_mismatch: the provider refunded 1.00 less than recorded.
	in, ch = s.paid(s.at(d.From, 20*time.Hour), s.amount(), ledger.StateSucceeded)
	key, customer = in.Key, in.Customer
	re = s.refund(ch, false, in, false)
	minor, _ := re.Amount.Minor()
	r = s.refundIntent(key, customer, mustAmount(minor+100, re.Amount.Currency), re.OccurredAt.Add(-time.Minute), re.ID)
	s.expect(ledger.KindAmountMismatch, r.Key, re.ID)
}

// retag changes every sighting of transaction id.
func (s *stripe) retag(id string, fn func(*ledger.ProviderTxn)) {
	for i := range s.d.Sightings {
		if s.d.Sightings[i].Txn.ID == id {
			fn(&s.d.Sightings[i].Txn)
		}
	}
}
