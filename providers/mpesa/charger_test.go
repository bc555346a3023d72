package mpesa

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type chargerBundle struct {
	fake    *mpesafake.Server
	charger *Charger
	clock   *fakeClock
	cfg     Config
	bodies  chan []byte
}

// setupCharger starts a fake Daraja whose callbacks land in bodies.
func setupCharger(t *testing.T, decide func(mpesafake.Push, *rand.Rand) mpesafake.Outcome) chargerBundle {
	t.Helper()
	clock := &fakeClock{now: time.Date(2024, 2, 6, 14, 52, 0, 0, time.UTC)}
	bodies := make(chan []byte, 16)
	fake := mpesafake.New(mpesafake.Config{Seed: 7, Clock: clock.Now, Decide: decide,
		Deliver: func(_ context.Context, url string, body []byte) error {
			if url != "https://pay.example.com/daraja/tok/stk" {
				return errors.New("unexpected callback URL " + url)
			}
			bodies <- body
			return nil
		}})
	base := fake.Start()
	t.Cleanup(fake.Close)
	short, pass, key, secret := fake.Credentials()
	cfg := Config{BaseURL: base, ShortCode: short, ConsumerKey: key, ConsumerSecret: secret, PassKey: pass,
		CallbackURL: "https://pay.example.com/daraja/tok/stk", Clock: clock.Now, HTTPTimeout: 2 * time.Second}
	c, err := NewCharger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return chargerBundle{fake: fake, charger: c, clock: clock, cfg: cfg, bodies: bodies}
}

func kes(t testing.TB, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func chargeReq(t testing.TB) providers.ChargeRequest {
	return providers.ChargeRequest{IntentKey: "charge:order-4471", Amount: kes(t, "1500"), Customer: "0712 345 678",
		Reference: "ORDER4471", Description: "Order 4471 at the shop", Attempt: 1}
}

func TestChargeAndQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCharger(t, nil)
	res, err := b.charger.Charge(ctx, chargeReq(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != providers.StatusPending || !strings.HasPrefix(res.ProviderRef, "ws_CO_") || res.TxnID != "" {
		t.Fatalf("charge = %+v", res)
	}
	pushes := b.fake.Pushes()
	if len(pushes) != 1 {
		t.Fatalf("pushes = %d", len(pushes))
	}
	p := pushes[0]
	if p.Phone != "254712345678" || p.Amount != "1500" || p.AccountReference != "ORDER4471" ||
		p.TransactionDesc != "Order 4471 at" || p.CallbackURL != b.cfg.CallbackURL {
		t.Errorf("push = %+v", p)
	}
	// While the prompt is on the phone the query says pending, not failed.
	q, err := b.charger.QueryStatus(ctx, res.ProviderRef)
	if err != nil || q.Status != providers.StatusPending {
		t.Fatalf("query before settling = %+v, %v", q, err)
	}
	if err := b.fake.Settle(ctx, res.ProviderRef); err != nil {
		t.Fatal(err)
	}
	q, err = b.charger.QueryStatus(ctx, res.ProviderRef)
	if err != nil || q.Status != providers.StatusSucceeded || q.Code != "0" || q.ProviderRef != res.ProviderRef {
		t.Fatalf("query after settling = %+v, %v", q, err)
	}
	// The callback the fake sent parses into the same outcome.
	ev, err := CallbackParser{}.ParseCallback(<-b.bodies, "callback:1", b.clock.Now())
	if err != nil || len(ev.Outcomes) != 1 || ev.Outcomes[0].ProviderRef != res.ProviderRef ||
		ev.Outcomes[0].Status != providers.StatusSucceeded || !ev.Outcomes[0].Amount.Equal(kes(t, "1500")) {
		t.Fatalf("callback = %+v, %v", ev, err)
	}
	// One token served every call.
	if n := b.fake.Requests(mpesafake.PathOAuth); n != 1 {
		t.Errorf("token requests = %d, want 1", n)
	}
}

func TestQueryFailedOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	codes := []int{mpesafake.ResultCancelled, mpesafake.ResultInsufficientFunds, mpesafake.ResultUnreachable}
	var mu sync.Mutex
	next := 0
	b := setupCharger(t, func(mpesafake.Push, *rand.Rand) mpesafake.Outcome {
		mu.Lock()
		defer mu.Unlock()
		next++
		return mpesafake.Outcome{ResultCode: codes[next-1], Callback: mpesafake.DeliverNever}
	})
	for _, code := range codes {
		res, err := b.charger.Charge(ctx, chargeReq(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.fake.Settle(ctx, res.ProviderRef); err != nil {
			t.Fatal(err)
		}
		q, err := b.charger.QueryStatus(ctx, res.ProviderRef)
		if err != nil || q.Status != providers.StatusFailed || q.Code != strconv.Itoa(code) || q.Reason == "" {
			t.Errorf("code %d: query = %+v, %v", code, q, err)
		}
	}
	if len(b.bodies) != 0 {
		t.Errorf("callbacks delivered although lost")
	}
}

func TestTokenCacheAndExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCharger(t, nil)
	for range 3 {
		if _, err := b.charger.Charge(ctx, chargeReq(t)); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.fake.Requests(mpesafake.PathOAuth); n != 1 {
		t.Fatalf("token requests = %d, want 1", n)
	}
	// The fake's tokens live 3599 s; the charger renews a minute early.
	b.clock.Add(3599*time.Second - 61*time.Second)
	if _, err := b.charger.Charge(ctx, chargeReq(t)); err != nil {
		t.Fatal(err)
	}
	if n := b.fake.Requests(mpesafake.PathOAuth); n != 1 {
		t.Fatalf("token renewed too early: %d requests", n)
	}
	b.clock.Add(2 * time.Second)
	if _, err := b.charger.Charge(ctx, chargeReq(t)); err != nil {
		t.Fatal(err)
	}
	if n := b.fake.Requests(mpesafake.PathOAuth); n != 2 {
		t.Fatalf("token requests = %d, want 2", n)
	}
	// A token Daraja no longer accepts is dropped and fetched again once.
	b.fake.Inject(mpesafake.PathSTKPush, mpesafake.Fault{Status: 401, ErrorCode: "404.001.03", ErrorMessage: "Invalid Access Token"})
	if _, err := b.charger.Charge(ctx, chargeReq(t)); err != nil {
		t.Fatalf("after invalid token: %v", err)
	}
	if n := b.fake.Requests(mpesafake.PathOAuth); n != 3 {
		t.Fatalf("token requests = %d, want 3", n)
	}
}

// TestChargeErrorKinds: what a failed push means for the money.
func TestChargeErrorKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name  string
		fault mpesafake.Fault
		kind  providers.ErrorKind
		code  string
		// pushed says whether the fake recorded a prompt.
		pushed bool
	}{
		{"invalid field", mpesafake.Fault{Status: 400, ErrorCode: "400.002.02", ErrorMessage: "Bad Request - Invalid PhoneNumber"}, providers.Permanent, "400.002.02", false},
		{"spike arrest", mpesafake.Fault{Status: 500, ErrorCode: "500.003.02", ErrorMessage: "Spike Arrest Violation", RetryAfter: 3}, providers.Retryable, "500.003.02", false},
		{"quota", mpesafake.Fault{Status: 500, ErrorCode: "500.003.03", ErrorMessage: "Quota Violation"}, providers.Retryable, "500.003.03", false},
		{"unable to lock subscriber", mpesafake.Fault{Status: 500, ErrorCode: "500.001.1001", ErrorMessage: "Unable to lock subscriber, a transaction is already in process for the current subscriber"}, providers.Retryable, "500.001.1001", false},
		{"internal error", mpesafake.Fault{Status: 500, ErrorCode: "500.003.1001", ErrorMessage: "Internal Server Error"}, providers.Ambiguous, "500.003.1001", false},
		{"bare 503", mpesafake.Fault{Status: 503}, providers.Ambiguous, "", false},
		{"connection dropped after the push was taken", mpesafake.Fault{Drop: true}, providers.Ambiguous, "", true},
		{"timeout after sending", mpesafake.Fault{Delay: 3 * time.Second}, providers.Ambiguous, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupCharger(t, nil)
			// Fetch the token first so that the fault hits the push.
			if _, err := b.charger.d.accessToken(ctx); err != nil {
				t.Fatal(err)
			}
			b.fake.Inject(mpesafake.PathSTKPush, tc.fault)
			_, err := b.charger.Charge(ctx, chargeReq(t))
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind || pe.Code != tc.code || pe.Provider != "mpesa" {
				t.Fatalf("err = %#v (%v), want kind %s code %q", pe, err, tc.kind, tc.code)
			}
			if tc.fault.RetryAfter > 0 && pe.RetryAfter != time.Duration(tc.fault.RetryAfter)*time.Second {
				t.Errorf("retry after = %v", pe.RetryAfter)
			}
			if got := len(b.fake.Pushes()) == 1; got != tc.pushed && tc.fault.Delay == 0 {
				t.Errorf("pushed = %v, want %v", got, tc.pushed)
			}
		})
	}
}

func TestChargeNotSent(t *testing.T) {
	t.Parallel()
	// Nothing listens: the request is never written, so retrying is safe.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := NewCharger(Config{BaseURL: "http://" + addr, ShortCode: "174379", ConsumerKey: "k", ConsumerSecret: "s",
		PassKey: "p", CallbackURL: "https://x/stk", HTTPTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Charge(context.Background(), chargeReq(t))
	if k := providers.KindOf(err); k != providers.Retryable {
		t.Fatalf("kind = %s (%v), want retryable", k, err)
	}
	// Refused credentials: nothing was sent either.
	b := setupCharger(t, nil)
	cfg := b.cfg
	cfg.ConsumerSecret = "wrong"
	bad, _ := NewCharger(cfg)
	_, err = bad.Charge(context.Background(), chargeReq(t))
	if k := providers.KindOf(err); k != providers.Retryable || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad credentials: kind %s, %v", k, err)
	}
	if len(b.fake.Pushes()) != 0 {
		t.Error("a push went out with refused credentials")
	}
}

func TestChargeRequestValidation(t *testing.T) {
	t.Parallel()
	b := setupCharger(t, nil)
	usd, _ := money.Parse("10", "USD")
	cases := map[string]func(r *providers.ChargeRequest){
		"not KES":           func(r *providers.ChargeRequest) { r.Amount = usd },
		"cents":             func(r *providers.ChargeRequest) { r.Amount = kes(t, "10.50") },
		"zero":              func(r *providers.ChargeRequest) { r.Amount = kes(t, "0") },
		"landline":          func(r *providers.ChargeRequest) { r.Customer = "020 123 4567" },
		"email":             func(r *providers.ChargeRequest) { r.Customer = "jane@example.com" },
		"empty reference":   func(r *providers.ChargeRequest) { r.Reference = "" },
		"13-char reference": func(r *providers.ChargeRequest) { r.Reference = "ABCDEFGHIJKLM" },
	}
	for name, mutate := range cases {
		r := chargeReq(t)
		mutate(&r)
		_, err := b.charger.Charge(context.Background(), r)
		if k := providers.KindOf(err); err == nil || k != providers.Permanent {
			t.Errorf("%s: %v (kind %s), want permanent", name, err, k)
		}
		if err != nil && strings.Contains(err.Error(), "0201234567") {
			t.Errorf("%s: error reveals the number: %v", name, err)
		}
	}
	if n := b.fake.Requests(mpesafake.PathSTKPush); n != 0 {
		t.Errorf("%d invalid pushes reached Daraja", n)
	}
	for _, in := range []string{"0712345678", "+254712345678", "254712345678", "712345678", "0112 345 678"} {
		if _, err := normalizePhone(in); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCharger(t, nil)
	if _, err := b.charger.QueryStatus(ctx, "ws_CO_never"); providers.KindOf(err) != providers.Permanent {
		t.Errorf("unknown checkout id: %v", err)
	}
	b.fake.Inject(mpesafake.PathSTKQuery, mpesafake.Fault{Status: 500, ErrorCode: "500.003.02", ErrorMessage: "Spike Arrest Violation"})
	if _, err := b.charger.QueryStatus(ctx, "ws_CO_x"); providers.KindOf(err) != providers.Retryable {
		t.Errorf("spike arrest: %v", err)
	}
	b.fake.Inject(mpesafake.PathSTKQuery, mpesafake.Fault{Status: 502})
	if _, err := b.charger.QueryStatus(ctx, "ws_CO_x"); providers.KindOf(err) != providers.Ambiguous {
		t.Errorf("502: %v", err)
	}
	b.fake.Inject(mpesafake.PathSTKQuery, mpesafake.Fault{Drop: true})
	if _, err := b.charger.QueryStatus(ctx, "ws_CO_x"); providers.KindOf(err) != providers.Ambiguous {
		t.Errorf("dropped: %v", err)
	}
	if _, ok := any(b.charger).(providers.KeyHonourer); ok {
		t.Error("the M-Pesa charger must not claim to honour idempotency keys")
	}
}

// TestIntentCurrencyRule: the rule every intent path applies knows what
// this package charges in.
func TestIntentCurrencyRule(t *testing.T) {
	t.Parallel()
	kes, _ := money.Parse("10", Currency)
	usd, _ := money.Parse("10", "USD")
	if err := providers.CheckIntentCurrency(ledger.IntentParams{Provider: Provider, Amount: kes}); err != nil {
		t.Errorf("KES: %v", err)
	}
	if err := providers.CheckIntentCurrency(ledger.IntentParams{Provider: Provider, Amount: usd}); err == nil {
		t.Error("USD accepted")
	}
}
