package stripe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

func chargeReq(t *testing.T, key string) providers.ChargeRequest {
	return providers.ChargeRequest{IntentKey: key, Amount: amount(t, "10.50", "USD"), Customer: "cus_QXgA1b2C3d4E5f",
		Description: "Order 4471", Metadata: map[string]string{"order": "4471"}, Attempt: 1}
}

func TestChargeSendsTheIntentKey(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	res, err := c.Charge(context.Background(), chargeReq(t, "charge:order-4471"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != providers.StatusSucceeded || !strings.HasPrefix(res.ProviderRef, "pi_") ||
		!strings.HasPrefix(res.TxnID, "ch_") || res.Amount.String() != "USD 10.50" {
		t.Errorf("result = %+v", res)
	}
	reqs := fb.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	want := url.Values{"amount": {"1050"}, "currency": {"usd"}, "confirm": {"true"}, "off_session": {"true"},
		"payment_method": {"pm_card_visa"}, "customer": {"cus_QXgA1b2C3d4E5f"}, "description": {"Order 4471"},
		"metadata[intent_key]": {"charge:order-4471"}, "metadata[order]": {"4471"},
		"automatic_payment_methods[enabled]": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"}}
	if r.IdempotencyKey != "charge:order-4471" {
		t.Errorf("Idempotency-Key = %q", r.IdempotencyKey)
	}
	if r.Form.Encode() != want.Encode() {
		t.Errorf("form\n got %s\nwant %s", r.Form.Encode(), want.Encode())
	}
}

func TestChargeReplaysTheFirstResult(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	ctx := context.Background()
	first, err := c.Charge(ctx, chargeReq(t, "charge:order-1"))
	if err != nil {
		t.Fatal(err)
	}
	req := chargeReq(t, "charge:order-1")
	req.Attempt = 2
	second, err := c.Charge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !sameResult(first, second) {
		t.Errorf("replay = %+v, want %+v", second, first)
	}
	if n := len(fb.fake.Charges()); n != 1 {
		t.Errorf("%d charges at the provider, want 1", n)
	}
	if reqs := fb.fake.Requests(); !reqs[1].Replayed {
		t.Errorf("second request was not a replay")
	}
}

// A crash between Stripe charging and the answer arriving: the caller sees
// an ambiguous error, re-sends the same key, and gets the first payment
// back instead of a second one.
func TestChargeResumesAfterALostAnswer(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	ctx := context.Background()
	fb.fake.InjectFault(stripefake.Fault{Method: "POST", Path: "/v1/payment_intents", Mode: stripefake.DropAfter})
	_, err := c.Charge(ctx, chargeReq(t, "charge:order-2"))
	if k := providers.KindOf(err); err == nil || k != providers.Ambiguous {
		t.Fatalf("lost answer: err = %v (kind %v), want ambiguous", err, k)
	}
	if n := len(fb.fake.Charges()); n != 1 {
		t.Fatalf("the provider charged %d times before the answer was lost, want 1", n)
	}
	res, err := c.Charge(ctx, chargeReq(t, "charge:order-2"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != providers.StatusSucceeded || res.ProviderRef != fb.fake.PaymentIntents()[0].ID {
		t.Errorf("resume = %+v, want the first PaymentIntent succeeded", res)
	}
	if n := len(fb.fake.Charges()); n != 1 {
		t.Errorf("%d charges after the resume, want 1", n)
	}
}

func TestChargeRefusesAKeyReusedWithOtherParameters(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	ctx := context.Background()
	if _, err := c.Charge(ctx, chargeReq(t, "charge:order-3")); err != nil {
		t.Fatal(err)
	}
	other := chargeReq(t, "charge:order-3")
	other.Amount = amount(t, "11.00", "USD")
	_, err := c.Charge(ctx, other)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.Ambiguous || pe.Code != "idempotency_error" {
		t.Fatalf("err = %v, want an ambiguous idempotency_error", err)
	}
	if n := len(fb.fake.PaymentIntents()); n != 1 {
		t.Errorf("%d PaymentIntents, want 1", n)
	}
}

func TestChargeDeclined(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pm, code string }{
		{stripefake.PaymentMethodDeclined, "generic_decline"},
		{stripefake.PaymentMethodInsufficientFunds, "insufficient_funds"},
	} {
		c, fb := setupFake(t, Config{})
		req := chargeReq(t, "charge:order-4")
		req.Metadata[MetadataPaymentMethod] = tc.pm
		res, err := c.Charge(context.Background(), req)
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != providers.Permanent || pe.Code != tc.code {
			t.Fatalf("%s: err = %v, want permanent %s", tc.pm, err, tc.code)
		}
		pis := fb.fake.PaymentIntents()
		if res.Status != providers.StatusFailed || res.ProviderRef != pis[0].ID || res.Code != tc.code {
			t.Errorf("%s: result = %+v", tc.pm, res)
		}
		if _, ok := fb.fake.Requests()[0].Form["metadata[payment_method]"]; ok {
			t.Errorf("%s: payment method sent as metadata", tc.pm)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("error text carries the client secret: %v", err)
		}
	}
}

func TestChargeErrorKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		code   string
		want   providers.ErrorKind
	}{
		{"server error", 500, "", providers.Ambiguous},
		{"unavailable", 503, "", providers.Ambiguous},
		{"rate limited", 429, "rate_limit", providers.Retryable},
		{"lock timeout", 429, "lock_timeout", providers.Retryable},
		{"key in flight", 409, "idempotency_key_in_use", providers.Retryable},
		{"invalid request", 400, "parameter_invalid_integer", providers.Permanent},
	}
	for _, tc := range cases {
		c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
		fb.fake.InjectFault(stripefake.Fault{Method: "POST", Path: "/v1/payment_intents", Mode: stripefake.Answer,
			Status: tc.status, Code: tc.code})
		_, err := c.Charge(context.Background(), chargeReq(t, "charge:k"))
		if got := providers.KindOf(err); err == nil || got != tc.want {
			t.Errorf("%s: err = %v (kind %v), want %v", tc.name, err, got, tc.want)
		}
	}

	// A wrong key is refused before anything happens.
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	bad, err := New(Config{APIKey: "sk_live_nope", BaseURL: fb.url, HTTPClient: fb.hc, PaymentMethod: "pm_card_visa"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Charge(context.Background(), chargeReq(t, "charge:k"))
	if k := providers.KindOf(err); k != providers.Retryable || strings.Contains(err.Error(), "sk_live_nope") {
		t.Errorf("bad key: err = %v (kind %v), want retryable without the key", err, k)
	}
	_ = c

	// Nothing listening: the request was never sent.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	refused, _ := New(Config{APIKey: "sk_test_123", BaseURL: "http://" + addr, PaymentMethod: "pm_card_visa", HTTPClient: fb.hc})
	_, err = refused.Charge(context.Background(), chargeReq(t, "charge:k"))
	if k := providers.KindOf(err); k != providers.Retryable {
		t.Errorf("connection refused: err = %v (kind %v), want retryable", err, k)
	}

	// A server that takes the request and never answers in time.
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	hc := &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	timeout, _ := New(Config{APIKey: "sk_test_123", BaseURL: slow.URL, PaymentMethod: "pm_card_visa", HTTPClient: hc})
	_, err = timeout.Charge(context.Background(), chargeReq(t, "charge:k"))
	if k := providers.KindOf(err); err == nil || k != providers.Ambiguous {
		t.Errorf("timeout: err = %v (kind %v), want ambiguous", err, k)
	}
}

func TestChargeAmountsByCurrencyExponent(t *testing.T) {
	t.Parallel()
	cases := []struct{ amount, cur, minor, sent string }{
		{"10.50", "USD", "1050", "usd"},
		{"1500", "JPY", "1500", "jpy"},
		{"1.230", "KWD", "1230", "kwd"},
		{"5", "ISK", "500", "isk"},   // Stripe keeps ISK two-decimal
		{"500", "MGA", "500", "mga"}, // Stripe treats MGA as zero-decimal
		{"1500.00", "KES", "150000", "kes"},
	}
	for _, tc := range cases {
		c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
		req := chargeReq(t, "charge:"+tc.cur)
		req.Amount = amount(t, tc.amount, tc.cur)
		res, err := c.Charge(context.Background(), req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.amount, tc.cur, err)
		}
		f := fb.fake.Requests()[0].Form
		if f.Get("amount") != tc.minor || f.Get("currency") != tc.sent {
			t.Errorf("%s %s sent as %s %s, want %s %s", tc.amount, tc.cur, f.Get("amount"), f.Get("currency"), tc.minor, tc.sent)
		}
		if !res.Amount.Equal(req.Amount) {
			t.Errorf("%s %s came back as %s", tc.amount, tc.cur, res.Amount)
		}
	}
}

func TestChargeRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*providers.ChargeRequest){
		"empty key":         func(r *providers.ChargeRequest) { r.IntentKey = " " },
		"long key":          func(r *providers.ChargeRequest) { r.IntentKey = strings.Repeat("k", 256) },
		"no payment method": func(r *providers.ChargeRequest) {},
		"zero amount": func(r *providers.ChargeRequest) {
			r.Amount = amount(t, "0", "USD")
			r.Metadata["payment_method"] = "pm_card_visa"
		},
		"no currency": func(r *providers.ChargeRequest) {
			r.Amount.Currency = ""
			r.Metadata["payment_method"] = "pm_card_visa"
		},
	}
	for name, mod := range cases {
		c, fb := setupFake(t, Config{})
		req := chargeReq(t, "charge:order-5")
		mod(&req)
		_, err := c.Charge(context.Background(), req)
		if k := providers.KindOf(err); err == nil || k != providers.Permanent {
			t.Errorf("%s: err = %v (kind %v), want permanent", name, err, k)
		}
		if n := len(fb.fake.Requests()); n != 0 {
			t.Errorf("%s: %d requests sent", name, n)
		}
	}
}

func TestQueryStatus(t *testing.T) {
	t.Parallel()
	c, _ := setupFake(t, Config{})
	ctx := context.Background()
	for _, tc := range []struct {
		pm   string
		want providers.ChargeStatus
	}{{stripefake.PaymentMethodVisa, providers.StatusSucceeded}, {stripefake.PaymentMethodProcessing, providers.StatusPending}} {
		req := chargeReq(t, "charge:q-"+tc.pm)
		req.Metadata[MetadataPaymentMethod] = tc.pm
		first, err := c.Charge(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.QueryStatus(ctx, first.ProviderRef)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tc.want || got.ProviderRef != first.ProviderRef || got.Amount.String() != "USD 10.50" {
			t.Errorf("%s: QueryStatus = %+v, want %s", tc.pm, got, tc.want)
		}
	}
	_, err := c.QueryStatus(ctx, "pi_doesnotexist")
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.Permanent || pe.Code != "resource_missing" {
		t.Errorf("unknown id: err = %v, want permanent resource_missing", err)
	}
	if _, err := c.QueryStatus(ctx, "ws_CO_191220191020363925"); providers.KindOf(err) != providers.Permanent {
		t.Errorf("not a PaymentIntent id: err = %v", err)
	}
}

func TestFindCharge(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	ctx := context.Background()
	if _, found, err := c.FindCharge(ctx, "charge:never"); err != nil || found {
		t.Fatalf("FindCharge(unknown) = found %v, err %v", found, err)
	}
	key := `charge:o'brien\1`
	// A declined attempt, then (after the key expired) a successful one
	// under a new request: the look-up must prefer the success.
	declined := chargeReq(t, key)
	declined.Metadata[MetadataPaymentMethod] = stripefake.PaymentMethodDeclined
	if _, err := c.Charge(ctx, declined); providers.KindOf(err) != providers.Permanent {
		t.Fatalf("declined attempt: %v", err)
	}
	postIntent(t, fb, "later-key", key, stripefake.PaymentMethodVisa)
	res, found, err := c.FindCharge(ctx, key)
	if err != nil || !found {
		t.Fatalf("FindCharge = found %v, err %v", found, err)
	}
	pis := fb.fake.PaymentIntents()
	if res.Status != providers.StatusSucceeded || res.ProviderRef != pis[1].ID {
		t.Errorf("FindCharge = %+v, want the succeeded %s", res, pis[1].ID)
	}
	// A key that only prefixes another must not match it.
	if _, found, _ := c.FindCharge(ctx, "charge:o'brien"); found {
		t.Errorf("FindCharge matched a longer key")
	}
}

func sameResult(a, b providers.ChargeResult) bool {
	return a.ProviderRef == b.ProviderRef && a.Status == b.Status && a.TxnID == b.TxnID && a.Amount.Equal(b.Amount) &&
		a.Code == b.Code && a.Reason == b.Reason && a.At.Equal(b.At)
}

// postIntent creates a PaymentIntent with a raw request, as another process
// (or an expired key) would.
func postIntent(t *testing.T, fb fakeBundle, idemKey, intentKey, pm string) {
	t.Helper()
	form := url.Values{"amount": {"1050"}, "currency": {"usd"}, "confirm": {"true"}, "payment_method": {pm},
		"metadata[intent_key]": {intentKey}}
	req, _ := http.NewRequest("POST", fb.url+"/v1/payment_intents", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer sk_test_123")
	req.Header.Set("Idempotency-Key", idemKey)
	resp, err := fb.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("create PaymentIntent: HTTP %d", resp.StatusCode)
	}
}

func TestChargerAbilities(t *testing.T) {
	t.Parallel()
	c, _ := setupFake(t, Config{})
	if !c.HonoursIdempotencyKeys() || c.IdempotencyKeyRetention() != 24*time.Hour {
		t.Errorf("abilities = %v, %v", c.HonoursIdempotencyKeys(), c.IdempotencyKeyRetention())
	}
	for _, cfg := range []Config{{}, {APIKey: "sk_test_1", PageSize: 101}, {APIKey: "sk_test_1", MaxNetworkRetries: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// After Stripe's key retention the key no longer protects: re-sending it
// charges again. An attempt that old is looked up by intent key first,
// which finds the first payment.
func TestResumeAfterKeyRetention(t *testing.T) {
	t.Parallel()
	c, fb := setupFake(t, Config{PaymentMethod: stripefake.PaymentMethodVisa})
	ctx := context.Background()
	fb.fake.InjectFault(stripefake.Fault{Method: "POST", Path: "/v1/payment_intents", Mode: stripefake.DropAfter})
	if _, err := c.Charge(ctx, chargeReq(t, "charge:order-6")); providers.KindOf(err) != providers.Ambiguous {
		t.Fatalf("lost answer: %v", err)
	}
	fb.fake.ExpireIdempotencyKeys()
	attemptAge := 25 * time.Hour
	if attemptAge <= c.IdempotencyKeyRetention() {
		t.Fatalf("the scenario needs an attempt older than the retention")
	}
	res, found, err := c.FindCharge(ctx, "charge:order-6")
	if err != nil || !found || res.Status != providers.StatusSucceeded || res.ProviderRef != fb.fake.PaymentIntents()[0].ID {
		t.Fatalf("look-up = %+v, %v, %v; want the first payment", res, found, err)
	}
	if n := len(fb.fake.Charges()); n != 1 {
		t.Errorf("%d charges, want 1", n)
	}
	// What the look-up prevents: the expired key charges a second time.
	if _, err := c.Charge(ctx, chargeReq(t, "charge:order-6")); err != nil {
		t.Fatal(err)
	}
	if n := len(fb.fake.Charges()); n != 2 {
		t.Errorf("re-sending an expired key made %d charges; the fake no longer imitates Stripe's pruning", n)
	}
}
