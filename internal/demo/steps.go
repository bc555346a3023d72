package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

const (
	mpesaIntents  = 24
	stripeIntents = 16
)

var (
	shillings = []string{"150", "2500", "480", "1200", "75", "3200", "999", "60", "1850", "430", "5000", "220"}
	dollars   = []string{"19.99", "249.00", "5.50", "72.10", "1200.00", "33.33", "18.00", "99.95"}
)

func (d *demo) createIntents(ctx context.Context) error {
	for i := range mpesaIntents {
		amount, _ := money.Parse(shillings[i%len(shillings)], "KES")
		n := ledger.NewIntent{CreatedAt: Day.Add(6*time.Hour + time.Duration(i)*20*time.Minute).UTC(),
			IntentParams: ledger.IntentParams{Key: fmt.Sprintf("mpesa:order-%d", 2001+i), Provider: mpesa.Provider,
				Amount: amount, Customer: fmt.Sprintf("2547%08d", 12340000+i*7919)}}
		if _, _, err := d.svc.CreateIntent(ctx, n); err != nil {
			return err
		}
		d.keys = append(d.keys, n.Key)
	}
	stripeDay := time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC)
	for i := range stripeIntents {
		amount, _ := money.Parse(dollars[i%len(dollars)], "USD")
		n := ledger.NewIntent{CreatedAt: stripeDay.Add(time.Duration(i) * 20 * time.Minute),
			IntentParams: ledger.IntentParams{Key: fmt.Sprintf("stripe:order-%d", 3001+i), Provider: "stripe",
				Amount: amount, Customer: fmt.Sprintf("buyer%d@example.com", i)}}
		if i == 5 {
			n.Metadata = map[string]string{"payment_method": "pm_card_chargeDeclined"}
		}
		if _, _, err := d.svc.CreateIntent(ctx, n); err != nil {
			return err
		}
		d.keys = append(d.keys, n.Key)
	}
	d.say("%d M-Pesa intents (KES, STK push) and %d Stripe intents (USD), keys like mpesa:order-2001", mpesaIntents, stripeIntents)
	return nil
}

// crash claims an intent per provider, records the attempt, calls the
// provider and then records nothing more, as a worker killed at that instant.
func (d *demo) crash(ctx context.Context) error {
	d.crashed = map[string]string{}
	for _, key := range []string{"mpesa:order-2003", "stripe:order-3002"} {
		in, err := d.opt.Store.ClaimIntent(ctx, ledger.ClaimParams{Key: key, Owner: "worker-that-dies", Lease: time.Second, Now: d.clk.now()})
		if err != nil {
			return err
		}
		a, err := d.opt.Store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: key, ClaimToken: in.ClaimToken, Now: d.clk.now()})
		if err != nil {
			return err
		}
		res, err := d.chargers[in.Provider].Charge(ctx, providers.ChargeRequest{IntentKey: in.Key, Amount: in.Amount,
			Customer: in.Customer, Reference: in.Reference, Metadata: in.Metadata, Attempt: a.Number})
		if err != nil {
			return err
		}
		d.crashed[key] = res.ProviderRef
		d.say("%s: attempt %d sent to %s (%s), then the worker died before recording it", key, a.Number, in.Provider, res.Status)
	}
	d.say("when its lease runs out, the next worker resumes: Stripe gets the same idempotency key again;")
	d.say("M-Pesa has no idempotency keys, so the intent goes to unknown instead of prompting the customer twice")
	return nil
}

func (d *demo) charge(ctx context.Context) error {
	if err := d.q.Start(ctx); err != nil {
		return err
	}
	var stripeKeys []string
	for _, k := range d.keys {
		if k[:6] == "stripe" {
			stripeKeys = append(stripeKeys, k)
		}
	}
	if err := d.waitFinal(ctx, stripeKeys, 40*time.Second); err != nil {
		return err
	}
	// Every M-Pesa intent has prompted its customer (or gone unknown).
	err := poll.Until(ctx, 40*time.Second, pollEvery, func() (bool, error) { return len(d.mfake.Pushes()) >= mpesaIntents, nil })
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("only %d of %d STK pushes sent: %w", len(d.mfake.Pushes()), mpesaIntents, err)
	}
	if err != nil {
		return err
	}
	if err := d.waitState(ctx, "mpesa:order-2003", ledger.StateUnknown, 20*time.Second); err != nil {
		return err
	}
	t, err := d.tally(ctx)
	if err != nil {
		return err
	}
	charges := 0
	for _, pi := range d.sfake.PaymentIntents() {
		if pi.Metadata["intent_key"] == "stripe:order-3002" && pi.Status == "succeeded" {
			charges++
		}
	}
	d.say("Stripe: %d succeeded, %d failed (a declined card); stripe:order-3002 resumed and was charged %d time(s)",
		t["stripe"][ledger.StateSucceeded], t["stripe"][ledger.StateFailed], charges)
	d.say("M-Pesa: %d STK prompts on customers' phones, waiting for answers; mpesa:order-2003 is %s",
		len(d.mfake.Pushes())-1, ledger.StateUnknown)
	return nil
}

// refund issues a refund of part of the last succeeded Stripe payment
// through the queue, its job enqueued with it. A worker claims it, records
// its attempt, sends the refund and dies before recording the answer; the
// refund job resumes after the lease with the same refund key, and Stripe
// replays the first refund instead of making a second one.
func (d *demo) refund(ctx context.Context) error {
	pis := d.succeededStripe()
	if len(pis) < 6 {
		return fmt.Errorf("expected 6 succeeded Stripe payments, found %d", len(pis))
	}
	pi := pis[len(pis)-1]
	of := pi.Metadata["intent_key"]
	amount, err := money.FromMinor(pi.Amount/4, strings.ToUpper(pi.Currency))
	if err != nil {
		return err
	}
	key := "refund:" + strings.TrimPrefix(of, "stripe:") + ":1"
	var in ledger.Intent
	// The refund, its job and the dying worker's claim and attempt commit
	// together, so that the claim comes first.
	err = d.opt.Store.InTx(ctx, func(tx ledger.Tx) error {
		r, _, err := d.svc.CreateIntentTx(ctx, tx, ledger.NewIntent{CreatedAt: d.clk.now(), IntentParams: ledger.IntentParams{Key: key,
			Kind: ledger.IntentRefund, RefundOf: of, Provider: "stripe", Amount: amount,
			Metadata: map[string]string{"reason": "requested_by_customer"}}})
		if err != nil {
			return err
		}
		if in, err = tx.ClaimIntent(ctx, ledger.ClaimParams{Key: r.Key, Owner: "refund-worker-that-dies", Lease: time.Second, Now: d.clk.now()}); err != nil {
			return err
		}
		_, err = tx.StartAttempt(ctx, ledger.AttemptParams{IntentKey: key, ClaimToken: in.ClaimToken, Now: d.clk.now()})
		return err
	})
	if err != nil {
		return err
	}
	req, err := d.svc.RefundRequest(ctx, in)
	if err != nil {
		return err
	}
	res, err := d.stripe.Refund(ctx, req)
	if err != nil {
		return err
	}
	d.say("%s: %s of %s sent to Stripe (%s, %s), then the worker died before recording it", key, amount, of, res.ProviderRef, res.Status)
	if err := d.waitState(ctx, key, ledger.StateSucceeded, 20*time.Second); err != nil {
		return err
	}
	n := 0
	for _, r := range d.sfake.Refunds() {
		if r.Metadata["intent_key"] == key {
			n++
		}
	}
	d.say("the refund job took over after the lease and sent the same idempotency key: Stripe replayed the first refund;")
	d.say("%s is %s, and Stripe holds %d refund(s) for it", key, ledger.StateSucceeded, n)
	return nil
}

func (d *demo) waitState(ctx context.Context, key string, want ledger.State, limit time.Duration) error {
	var state ledger.State
	err := poll.Until(ctx, limit, pollEvery, func() (bool, error) {
		in, err := d.opt.Store.GetIntent(ctx, key)
		state = in.State
		return err == nil && in.State == want, err
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("%s is %s, not %s: %w", key, state, want, err)
	}
	return err
}

func (d *demo) callbacks(ctx context.Context) error {
	if err := d.mfake.SettleAll(ctx); err != nil {
		return err
	}
	var mpesaKeys []string
	for _, k := range d.keys {
		if k[:5] == "mpesa" {
			mpesaKeys = append(mpesaKeys, k)
		}
	}
	if err := d.waitFinal(ctx, mpesaKeys, 40*time.Second); err != nil {
		return err
	}
	twice, never := 0, 0
	for _, p := range d.mfake.Pushes() {
		switch p.Outcome.Callback {
		case mpesafake.DeliverTwice:
			twice++
		case mpesafake.DeliverNever:
			never++
		}
	}
	t, err := d.tally(ctx)
	if err != nil {
		return err
	}
	d.say("%d callbacks delivered twice (stored once), %d never delivered (the worker asked with an STK query)", twice, never)
	d.say("M-Pesa: %d succeeded, %d failed (cancelled or insufficient funds), %d unknown",
		t[mpesa.Provider][ledger.StateSucceeded], t[mpesa.Provider][ledger.StateFailed], t[mpesa.Provider][ledger.StateUnknown])
	return nil
}

// anomalies plants what a reconciler exists to find, and what it must not
// flag.
func (d *demo) anomalies(ctx context.Context) error {
	now := d.clk.now()
	if err := d.mpesaAnomalies(ctx, now); err != nil {
		return err
	}
	if err := d.legacyIntents(ctx, now); err != nil {
		return err
	}
	pis, err := d.stripeAnomalies(ctx, now)
	if err != nil {
		return err
	}
	return d.refundAnomalies(ctx, pis)
}

// mpesaAnomalies plants an M-Pesa payment nobody asked for and a late
// success callback for an intent that had failed.
func (d *demo) mpesaAnomalies(ctx context.Context, now time.Time) error {
	// M-Pesa: a payment to the PayBill that no intent asked for.
	if _, _, err := d.mfake.AddC2B(ctx, mpesafake.C2BPayment{Amount: "750.00", BillRef: "WALKIN", At: now,
		MSISDN: "2547****8812", FirstName: "MARY"}, true); err != nil {
		return err
	}
	d.say("M-Pesa: a KES 750 payment nobody asked for (account WALKIN)")
	// M-Pesa: a success callback for an intent that had failed.
	if key, ref, amount, ok := d.failedMpesa(ctx); ok {
		body := mpesafake.STKCallbackBody(mpesafake.STKResult{MerchantRequestID: "late-1", CheckoutRequestID: ref,
			ResultCode: 0, Amount: amount, Receipt: "SKL9DEMO7Q", At: now, Phone: "254712345678"})
		if err := d.post("stk", body); err != nil {
			return err
		}
		d.say("M-Pesa: a late success callback for %s, which had failed (kept as evidence; the intent stays failed)", key)
	}
	return nil
}

// legacyIntents records intents of the old system marked paid: one paid a
// different amount, one never paid, one too young to judge.
func (d *demo) legacyIntents(ctx context.Context, now time.Time) error {
	// Intents from the old system: one paid a different amount, one never
	// paid, one too young to judge.
	kes := func(s string) money.Amount { a, _ := money.Parse(s, "KES"); return a }
	legacy := []struct {
		key, ref, amount string
		at               time.Time
	}{
		{"mpesa:legacy-1", "INVOLD1", "1200", Day.Add(8*time.Hour + 15*time.Minute)},
		{"mpesa:legacy-2", "INVOLD2", "300", Day.Add(7*time.Hour + 30*time.Minute)},
		{"mpesa:legacy-3", "INVNEW3", "640", now.Add(-5 * time.Minute)},
	}
	for _, l := range legacy {
		if _, _, err := d.opt.Store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StateSucceeded, CreatedAt: l.at.UTC(),
			IntentParams: ledger.IntentParams{Key: l.key, Provider: mpesa.Provider, Amount: kes(l.amount), Reference: l.ref}}); err != nil {
			return err
		}
	}
	if _, _, err := d.mfake.AddC2B(ctx, mpesafake.C2BPayment{Amount: "1000.00", BillRef: "INVOLD1",
		At: Day.Add(8*time.Hour + 16*time.Minute), MSISDN: "2547****0845", FirstName: "PETER"}, true); err != nil {
		return err
	}
	d.say("M-Pesa: legacy intents marked paid in the old system: one paid KES 1,000 of 1,200, one with no payment,")
	d.say("        one created 5 minutes ago (inside the settlement grace: not yet missing)")
	return nil
}

// stripeAnomalies plants Stripe charges the reconciler must flag: a second
// charge, a second one refunded, a dispute, a charge in the wrong currency,
// one nobody asked for, and an intent left processing. It returns the
// succeeded payments it used.
func (d *demo) stripeAnomalies(ctx context.Context, now time.Time) ([]stripefake.PaymentIntent, error) {
	// Stripe: a second charge for one intent, a second one that was refunded,
	// a charge in the wrong currency, one nobody asked for, and an intent a
	// worker left processing long ago.
	pis := d.succeededStripe()
	if len(pis) < 3 {
		return nil, fmt.Errorf("expected succeeded Stripe payments, found %d", len(pis))
	}
	d.sfake.AddCharge(stripefake.Charge{Amount: pis[0].Amount, Currency: pis[0].Currency, Status: "succeeded", Captured: true,
		Created: now, Metadata: map[string]string{"intent_key": pis[0].Metadata["intent_key"]}})
	rev := d.sfake.AddCharge(stripefake.Charge{Amount: pis[1].Amount, Currency: pis[1].Currency, Status: "succeeded", Captured: true,
		Created: now, Metadata: map[string]string{"intent_key": pis[1].Metadata["intent_key"]}})
	if _, err := d.sfake.AddRefund(rev.ID, rev.Amount); err != nil {
		return nil, err
	}
	if _, err := d.sfake.AddDispute(stripefake.DisputeSpec{Charge: pis[2].LatestCharge, Status: "needs_response",
		Withdraw: true, Fee: 1500, At: now}); err != nil {
		return nil, err
	}
	usd := func(s string) money.Amount { a, _ := money.Parse(s, "USD"); return a }
	if _, _, err := d.opt.Store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StateSucceeded,
		CreatedAt:    time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC),
		IntentParams: ledger.IntentParams{Key: "stripe:legacy-7", Provider: "stripe", Amount: usd("49.00")}}); err != nil {
		return nil, err
	}
	d.sfake.AddCharge(stripefake.Charge{Amount: 4900, Currency: "eur", Status: "succeeded", Captured: true,
		Created: time.Date(2026, 11, 2, 9, 1, 0, 0, time.UTC), Metadata: map[string]string{"intent_key": "stripe:legacy-7"}})
	d.sfake.AddCharge(stripefake.Charge{Amount: 2500, Currency: "usd", Status: "succeeded", Captured: true,
		Created: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC), Email: "walkin@example.com"})
	if _, _, err := d.opt.Store.CreateIntent(ctx, ledger.NewIntent{CreatedAt: time.Date(2026, 11, 2, 7, 0, 0, 0, time.UTC),
		IntentParams: ledger.IntentParams{Key: "stripe:stuck-1", Provider: "stripe", Amount: usd("15.00")}}); err != nil {
		return nil, err
	}
	if _, err := d.opt.Store.ClaimIntent(ctx, ledger.ClaimParams{Key: "stripe:stuck-1", Owner: "a-worker-lost-at-07:01",
		Lease: 2 * time.Minute, Now: time.Date(2026, 11, 2, 7, 1, 0, 0, time.UTC)}); err != nil {
		return nil, err
	}
	d.say("Stripe: %s charged twice, %s charged twice and refunded once, stripe:legacy-7 paid in EUR,",
		pis[0].Metadata["intent_key"], pis[1].Metadata["intent_key"])
	d.say("        %s disputed by its customer (funds withdrawn), a USD 25 charge nobody asked for,", pis[2].Metadata["intent_key"])
	d.say("        and stripe:stuck-1 left processing by a worker at 07:01")
	return pis, nil
}

// refundAnomalies refunds part of one Stripe payment from the Dashboard
// (the books never hear of it) and records a refund of another that Stripe
// made twice (a retry after its idempotency key expired).
func (d *demo) refundAnomalies(ctx context.Context, pis []stripefake.PaymentIntent) error {
	if len(pis) < 5 {
		return fmt.Errorf("expected 5 succeeded Stripe payments, found %d", len(pis))
	}
	if _, err := d.sfake.AddRefund(pis[3].LatestCharge, pis[3].Amount/2); err != nil {
		return err
	}
	pi, half := pis[4], pis[4].Amount/2
	first, err := d.sfake.AddRefund(pi.LatestCharge, half)
	if err != nil {
		return err
	}
	second, err := d.sfake.AddRefund(pi.LatestCharge, half)
	if err != nil {
		return err
	}
	amount, err := money.FromMinor(half, strings.ToUpper(pi.Currency))
	if err != nil {
		return err
	}
	key, now := "refund:"+pi.Metadata["intent_key"]+":1", d.clk.now()
	r, _, err := d.opt.Store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StateSucceeded, CreatedAt: now,
		IntentParams: ledger.IntentParams{Key: key, Kind: ledger.IntentRefund, RefundOf: pi.Metadata["intent_key"],
			Provider: "stripe", Amount: amount}})
	if err != nil {
		return err
	}
	for _, ref := range []string{first.ID, second.ID} {
		if _, err := d.opt.Store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: key, ClaimToken: r.ClaimToken,
			ProviderRef: ref, Outcome: ledger.OutcomeSucceeded, Now: now}); err != nil {
			return err
		}
	}
	d.say("Stripe: %s partly refunded from the Dashboard (no refund intent), and %s refunded twice",
		pis[3].Metadata["intent_key"], key)
	return nil
}

// failedMpesa finds an M-Pesa intent whose customer cancelled, with the
// CheckoutRequestID its attempt recorded.
func (d *demo) failedMpesa(ctx context.Context) (key, ref, amount string, ok bool) {
	for _, k := range d.keys {
		in, err := d.opt.Store.GetIntent(ctx, k)
		if err != nil || in.Provider != mpesa.Provider || in.State != ledger.StateFailed {
			continue
		}
		attempts, err := d.opt.Store.ListAttempts(ctx, k)
		if err == nil && len(attempts) > 0 && attempts[len(attempts)-1].ProviderRef != "" {
			return k, attempts[len(attempts)-1].ProviderRef, in.Amount.Text(), true
		}
	}
	return "", "", "", false
}

func (d *demo) succeededStripe() []stripefake.PaymentIntent {
	var out []stripefake.PaymentIntent
	for _, pi := range d.sfake.PaymentIntents() {
		if pi.Status == "succeeded" && pi.Metadata["intent_key"] != "stripe:order-3002" {
			out = append(out, pi)
		}
	}
	return out
}

// post delivers a callback body to the endpoint like Safaricom would.
func (d *demo) post(path string, body []byte) error {
	url := d.cbSrv.URL + "/daraja/" + pathToken + "/" + path
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("callback endpoint answered %d", resp.StatusCode)
	}
	return nil
}
