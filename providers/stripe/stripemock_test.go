package stripe

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/providers"
)

// These tests check the shape of every request the adapter sends against
// stripe-mock, which validates requests against Stripe's OpenAPI spec and
// answers with fixtures. stripe-mock is stateless; behaviour is tested
// against stripefake.

func stripeMockURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("STRIPE_MOCK_URL")
	if u == "" {
		t.Fatal("STRIPE_MOCK_URL is not set: these tests need a running stripe-mock; run them through " +
			"`scripts/stripe-mock.sh run go test ...`, or `eval \"$(scripts/stripe-mock.sh start)\"` first")
	}
	return u
}

type exchange struct {
	method, path string
	query        url.Values
	header       http.Header
	form         url.Values
	status       int
	respHeader   http.Header
	respBody     []byte
}

// recorder is an http.RoundTripper that keeps every exchange.
type recorder struct {
	mu   sync.Mutex
	next http.RoundTripper
	ex   []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	form, _ := url.ParseQuery(string(body))
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(rb))
	r.mu.Lock()
	r.ex = append(r.ex, exchange{method: req.Method, path: req.URL.Path, query: req.URL.Query(), header: req.Header.Clone(),
		form: form, status: resp.StatusCode, respHeader: resp.Header.Clone(), respBody: rb})
	r.mu.Unlock()
	return resp, nil
}

func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.ex...)
}

func setupStripeMock(t *testing.T, cfg Config) (*Client, *recorder) {
	t.Helper()
	tr := &http.Transport{}
	rec := &recorder{next: tr}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: rec}
	t.Cleanup(tr.CloseIdleConnections)
	cfg.APIKey, cfg.BaseURL, cfg.HTTPClient = "sk_test_123", stripeMockURL(t), hc
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func TestStripeMockChargeRequest(t *testing.T) {
	t.Parallel()
	c, rec := setupStripeMock(t, Config{PaymentMethod: "pm_card_visa"})
	req := chargeReq(t, "charge:order-4471")
	req.Reference = "INV-4471"
	res, err := c.Charge(context.Background(), req)
	if err != nil {
		t.Fatalf("stripe-mock refused the charge request: %v", err)
	}
	if !strings.HasPrefix(res.ProviderRef, "pi_") {
		t.Errorf("result = %+v", res)
	}
	ex := rec.exchanges()
	if len(ex) != 1 {
		t.Fatalf("%d requests, want 1", len(ex))
	}
	e := ex[0]
	if e.method != "POST" || e.path != "/v1/payment_intents" || e.status != 200 {
		t.Errorf("%s %s -> %d %s", e.method, e.path, e.status, e.respBody)
	}
	if got := e.header.Get("Idempotency-Key"); got != "charge:order-4471" {
		t.Errorf("Idempotency-Key = %q", got)
	}
	if got := e.respHeader.Get("Idempotency-Key"); got != "charge:order-4471" {
		t.Errorf("stripe-mock echoed Idempotency-Key %q", got)
	}
	if !strings.HasPrefix(e.header.Get("Stripe-Version"), "2026-") || e.header.Get("Authorization") != "Bearer sk_test_123" {
		t.Errorf("headers %v", e.header)
	}
	want := url.Values{"amount": {"1050"}, "currency": {"usd"}, "confirm": {"true"}, "off_session": {"true"},
		"payment_method": {"pm_card_visa"}, "customer": {"cus_QXgA1b2C3d4E5f"}, "description": {"Order 4471"},
		"metadata[intent_key]": {"charge:order-4471"}, "metadata[order]": {"4471"}, "metadata[reference]": {"INV-4471"},
		"automatic_payment_methods[enabled]": {"true"}, "automatic_payment_methods[allow_redirects]": {"never"}}
	if e.form.Encode() != want.Encode() {
		t.Errorf("form\n got %s\nwant %s", e.form.Encode(), want.Encode())
	}
}

func TestStripeMockLookups(t *testing.T) {
	t.Parallel()
	c, rec := setupStripeMock(t, Config{})
	ctx := context.Background()
	res, err := c.QueryStatus(ctx, "pi_3PgafuB7WZ01zgkW0aJkSx1f")
	if err != nil || res.ProviderRef == "" {
		t.Fatalf("QueryStatus: %+v, %v", res, err)
	}
	if _, found, err := c.FindCharge(ctx, "charge:o'brien"); err != nil || found {
		t.Fatalf("FindCharge: found %v, %v (stripe-mock's fixture has no such metadata)", found, err)
	}
	ex := rec.exchanges()
	if len(ex) != 2 || ex[0].path != "/v1/payment_intents/pi_3PgafuB7WZ01zgkW0aJkSx1f" || ex[1].path != "/v1/payment_intents/search" {
		t.Fatalf("exchanges %+v", ex)
	}
	if q := ex[1].query; q.Get("query") != `metadata['intent_key']:'charge:o\'brien'` || q.Get("limit") != "100" || ex[1].status != 200 {
		t.Errorf("search %v -> %d", q, ex[1].status)
	}
}

func TestStripeMockPullRequests(t *testing.T) {
	t.Parallel()
	c, rec := setupStripeMock(t, Config{BalanceTransactions: true, PageSize: 50})
	from := time.Date(2024, 11, 23, 0, 0, 0, 0, time.UTC)
	var got []providers.Sighting
	if err := c.Pull(context.Background(), from, from.Add(24*time.Hour), collect(&got)); err != nil {
		t.Fatalf("Pull against stripe-mock: %v", err)
	}
	for _, s := range got {
		checkSighting(t, s)
	}
	paths := map[string]bool{}
	for _, e := range rec.exchanges() {
		paths[e.path] = true
		if e.status != 200 {
			t.Errorf("%s %s -> %d %s", e.method, e.path, e.status, e.respBody)
		}
		if e.query.Get("created[gte]") != "1732320000" || e.query.Get("created[lt]") != "1732406400" || e.query.Get("limit") != "50" {
			t.Errorf("%s query %v", e.path, e.query)
		}
	}
	for _, p := range []string{"/v1/charges", "/v1/refunds", "/v1/disputes", "/v1/balance_transactions"} {
		if !paths[p] {
			t.Errorf("no request to %s", p)
		}
	}
	ids := map[string]bool{}
	for _, s := range got {
		ids[s.Txn.ID] = true
	}
	// stripe-mock's fixtures: a charge with its refund expanded, the same
	// refund again from the refunds list (emitted once), and a dispute
	// whose funds were not withdrawn (its fixture has no balance
	// transactions).
	if !ids["ch_1PgafuB7WZ01zgkWXYmPNZs8"] || !ids["re_1Pgc72B7WZ01zgkWqPvrRrPE"] || !ids["dp_1Pgc71B7WZ01zgkWMevJiAUx"] || len(got) != 3 {
		t.Errorf("pulled %s", renderSightings(got))
	}
}

// stripe-mock does validate: a parameter Stripe does not know is refused,
// so the tests above would catch a misspelt one.
func TestStripeMockValidates(t *testing.T) {
	t.Parallel()
	u := stripeMockURL(t)
	form := url.Values{"amount": {"1050"}, "currency": {"usd"}, "amount_in_cents": {"1050"}}
	req, _ := http.NewRequest("POST", u+"/v1/payment_intents", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer sk_test_123")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("an unknown parameter got HTTP %d, want 400", resp.StatusCode)
	}
}
