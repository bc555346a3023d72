package stripe

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

// chargedForRefund charges 10.50 USD and returns the refund request of
// amount for it.
func chargedForRefund(t *testing.T, c *Client, key, amountText string) providers.RefundRequest {
	t.Helper()
	res, err := c.Charge(context.Background(), chargeReq(t, "charge:"+key))
	if err != nil {
		t.Fatal(err)
	}
	return providers.RefundRequest{RefundKey: "refund:" + key + ":1", ChargeKey: "charge:" + key, ChargeRef: res.ProviderRef,
		ChargeTxnID: res.TxnID, Amount: amount(t, amountText, "USD"), Reason: "requested_by_customer",
		Metadata: map[string]string{"ticket": "T-9"}, Attempt: 1}
}

func TestRefundSendsTheRefundKey(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	ctx := context.Background()
	req := chargedForRefund(t, c, "order-7", "4.00")
	res, err := c.Refund(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	refunds := fb.fake.Refunds()
	if len(refunds) != 1 || res.Status != providers.StatusSucceeded || res.ProviderRef != refunds[0].ID ||
		res.Amount.String() != "USD 4.00" || refunds[0].Charge != req.ChargeTxnID {
		t.Fatalf("result %+v, refunds %+v", res, refunds)
	}
	reqs := fb.fake.Requests()
	r := reqs[len(reqs)-1]
	want := url.Values{"amount": {"400"}, "payment_intent": {req.ChargeRef}, "reason": {"requested_by_customer"},
		"metadata[intent_key]": {"refund:order-7:1"}, "metadata[refund_of]": {"charge:order-7"}, "metadata[ticket]": {"T-9"}}
	if r.IdempotencyKey != "refund:order-7:1" || r.Form.Encode() != want.Encode() {
		t.Errorf("Idempotency-Key %q, form\n got %s\nwant %s", r.IdempotencyKey, r.Form.Encode(), want.Encode())
	}
	// The same key again (a resume after a crash) replays: one refund.
	req.Attempt = 2
	again, err := c.Refund(ctx, req)
	if err != nil || !sameResult(res, again) || len(fb.fake.Refunds()) != 1 {
		t.Fatalf("replay %+v (%v), %d refunds", again, err, len(fb.fake.Refunds()))
	}
	got, err := c.QueryRefundStatus(ctx, req, res.ProviderRef)
	if err != nil || !sameResult(res, got) {
		t.Fatalf("QueryRefundStatus = %+v, %v", got, err)
	}
	if _, err := c.QueryRefundStatus(ctx, req, "pi_123"); providers.KindOf(err) != providers.Permanent {
		t.Errorf("not a refund id: %v", err)
	}
	// More than what is left of the charge: Stripe refuses for good.
	over := req
	over.RefundKey, over.Amount = "refund:order-7:2", amount(t, "6.51", "USD")
	if _, err := c.Refund(ctx, over); providers.KindOf(err) != providers.Permanent {
		t.Errorf("over-refund: %v", err)
	}
	// A lost answer: the refund was made; the same key gets it back.
	fb.fake.InjectFault(stripefake.Fault{Method: "POST", Path: "/v1/refunds", Mode: stripefake.DropAfter})
	lost := req
	lost.RefundKey, lost.Amount = "refund:order-7:3", amount(t, "1.00", "USD")
	if _, err := c.Refund(ctx, lost); providers.KindOf(err) != providers.Ambiguous {
		t.Fatalf("lost answer: %v, want ambiguous", err)
	}
	if res, err := c.Refund(ctx, lost); err != nil || res.Status != providers.StatusSucceeded || len(fb.fake.Refunds()) != 2 {
		t.Fatalf("resume: %+v, %v, %d refunds", res, err, len(fb.fake.Refunds()))
	}
}

func TestFindRefund(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa, PageSize: 1})
	ctx := context.Background()
	req := chargedForRefund(t, c, "order-8", "1.00")
	other := chargedForRefund(t, c, "order-9", "1.00")
	if _, found, err := c.FindRefund(ctx, req); err != nil || found {
		t.Fatalf("before any refund: found %v, %v", found, err)
	}
	// Another refund of the same charge, and one of another charge with the
	// same key, are not it.
	if _, err := fb.fake.AddRefund(req.ChargeTxnID, 100); err != nil {
		t.Fatal(err)
	}
	theirs := other
	theirs.RefundKey = req.RefundKey
	if _, err := c.Refund(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if _, found, err := c.FindRefund(ctx, req); err != nil || found {
		t.Fatalf("other refunds: found %v, %v", found, err)
	}
	req.RefundKey = "refund:order-8:own"
	made, err := c.Refund(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := c.FindRefund(ctx, req)
	if err != nil || !found || !sameResult(made, got) {
		t.Fatalf("FindRefund = %+v, found %v, %v; want %+v", got, found, err, made)
	}
	// By charge id when no PaymentIntent is recorded.
	byCharge := req
	byCharge.ChargeRef = ""
	if got, found, err := c.FindRefund(ctx, byCharge); err != nil || !found || got.ProviderRef != made.ProviderRef {
		t.Fatalf("by charge: %+v, %v, %v", got, found, err)
	}
	none := req
	none.ChargeRef, none.ChargeTxnID = "", ""
	var pe *providers.Error
	if _, _, err := c.FindRefund(ctx, none); !errors.As(err, &pe) || pe.Kind != providers.Permanent {
		t.Fatalf("no charge ids: %v", err)
	}
}

func TestStripeMockRefundRequests(t *testing.T) {
	t.Parallel()
	c, rec := setupStripeMock(t, Config{})
	ctx := context.Background()
	req := providers.RefundRequest{RefundKey: "refund:order-4471:1", ChargeKey: "charge:order-4471", ChargeRef: "pi_3PgafuB7WZ01zgkW0aJkSx1f",
		ChargeTxnID: "ch_1PgafuB7WZ01zgkWXYmPNZs8", Amount: amount(t, "5.25", "USD"), Reason: "not one of Stripe's", Attempt: 1}
	res, err := c.Refund(ctx, req)
	if err != nil || !strings.HasPrefix(res.ProviderRef, "re_") {
		t.Fatalf("stripe-mock refused the refund request: %+v, %v", res, err)
	}
	if _, err := c.QueryRefundStatus(ctx, req, res.ProviderRef); err != nil {
		t.Fatalf("retrieve: %v", err)
	}
	if _, _, err := c.FindRefund(ctx, req); err != nil {
		t.Fatalf("list: %v", err)
	}
	ex := rec.exchanges()
	if len(ex) != 3 {
		t.Fatalf("%d requests, want 3", len(ex))
	}
	for _, e := range ex {
		if e.status != 200 {
			t.Errorf("%s %s -> %d %s", e.method, e.path, e.status, e.respBody)
		}
	}
	e := ex[0]
	want := url.Values{"amount": {"525"}, "payment_intent": {"pi_3PgafuB7WZ01zgkW0aJkSx1f"},
		"metadata[intent_key]": {"refund:order-4471:1"}, "metadata[refund_of]": {"charge:order-4471"}}
	if e.method != "POST" || e.path != "/v1/refunds" || e.header.Get("Idempotency-Key") != "refund:order-4471:1" || e.form.Encode() != want.Encode() {
		t.Errorf("%s %s key %q form %s", e.method, e.path, e.header.Get("Idempotency-Key"), e.form.Encode())
	}
	if ex[1].path != "/v1/refunds/"+res.ProviderRef || ex[2].path != "/v1/refunds" ||
		ex[2].query.Get("payment_intent") != "pi_3PgafuB7WZ01zgkW0aJkSx1f" || ex[2].query.Get("limit") != "100" {
		t.Errorf("look-ups %s %s %v", ex[1].path, ex[2].path, ex[2].query)
	}
}
