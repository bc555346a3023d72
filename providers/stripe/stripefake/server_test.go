package stripefake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var t0 = time.Date(2024, time.November, 23, 14, 0, 0, 0, time.UTC)

type client struct {
	t   *testing.T
	url string
	hc  *http.Client
}

func setup(t *testing.T) (*Server, client) {
	t.Helper()
	s := New(func() time.Time { return t0 })
	u := s.Start()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		s.Close()
	})
	return s, client{t: t, url: u, hc: hc}
}

func (c client) do(method, path, key string, form url.Values) (int, map[string]any, http.Header) {
	c.t.Helper()
	var body io.Reader
	target := c.url + path
	if method == "GET" {
		target += "?" + form.Encode()
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, target, body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer sk_test_123")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, out, resp.Header
}

func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	form := url.Values{"amount": {"1050"}, "currency": {"usd"}, "confirm": {"true"}, "payment_method": {PaymentMethodVisa}}
	st1, first, _ := c.do("POST", "/v1/payment_intents", "k1", form)
	st2, again, h := c.do("POST", "/v1/payment_intents", "k1", form)
	if st1 != 200 || st2 != 200 || first["id"] != again["id"] || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %v, %d %v", st1, first["id"], st2, again["id"])
	}
	form.Set("amount", "1100")
	st3, e, _ := c.do("POST", "/v1/payment_intents", "k1", form)
	if st3 != 400 || e["error"].(map[string]any)["type"] != "idempotency_error" {
		t.Errorf("other parameters: %d %v", st3, e)
	}
	if n := len(s.PaymentIntents()); n != 1 {
		t.Errorf("%d PaymentIntents, want 1", n)
	}
	// A validation failure is not stored: the key can be used after a fix.
	bad := url.Values{"amount": {"-1"}, "currency": {"usd"}}
	if st, _, _ := c.do("POST", "/v1/payment_intents", "k2", bad); st != 400 {
		t.Errorf("invalid amount: %d", st)
	}
	bad.Set("amount", "5")
	if st, _, _ := c.do("POST", "/v1/payment_intents", "k2", bad); st != 200 {
		t.Errorf("fixed request under the same key: %d", st)
	}
	// A decline is stored and replayed.
	decl := url.Values{"amount": {"1050"}, "currency": {"usd"}, "confirm": {"true"}, "payment_method": {PaymentMethodDeclined}}
	a, _, _ := c.do("POST", "/v1/payment_intents", "k3", decl)
	b, _, h3 := c.do("POST", "/v1/payment_intents", "k3", decl)
	if a != 402 || b != 402 || h3.Get("Idempotent-Replayed") != "true" {
		t.Errorf("decline replay: %d %d", a, b)
	}
}

func TestListPages(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	for i := 0; i < 7; i++ {
		s.AddCharge(Charge{ID: fmt.Sprintf("ch_%d", i), Amount: 100, Currency: "usd", Created: t0.Add(time.Duration(i) * time.Minute)})
	}
	var ids []string
	after := ""
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {"3"}, "created[gte]": {fmt.Sprint(t0.Add(time.Minute).Unix())},
			"created[lt]": {fmt.Sprint(t0.Add(6 * time.Minute).Unix())}}
		if after != "" {
			q.Set("starting_after", after)
		}
		st, page, _ := c.do("GET", "/v1/charges", "", q)
		if st != 200 || pages > 3 {
			t.Fatalf("page %d: %d %v", pages, st, page)
		}
		data := page["data"].([]any)
		for _, d := range data {
			ids = append(ids, d.(map[string]any)["id"].(string))
		}
		if page["has_more"] != true {
			break
		}
		after = ids[len(ids)-1]
	}
	if got := strings.Join(ids, ","); got != "ch_5,ch_4,ch_3,ch_2,ch_1" {
		t.Errorf("listed %s, want newest first ch_5..ch_1", got)
	}
	if st, _, _ := c.do("GET", "/v1/charges", "", url.Values{"starting_after": {"ch_nope"}}); st != 400 {
		t.Errorf("unknown cursor: %d", st)
	}
	if st, _, _ := c.do("GET", "/v1/charges", "", url.Values{"limit": {"101"}}); st != 400 {
		t.Errorf("limit 101: %d", st)
	}
}

func TestSearchByMetadata(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	for _, key := range []string{`o'brien\1`, `o'brien`} {
		form := url.Values{"amount": {"100"}, "currency": {"usd"}, "metadata[intent_key]": {key}}
		if st, _, _ := c.do("POST", "/v1/payment_intents", "", form); st != 200 {
			t.Fatal(st)
		}
	}
	st, res, _ := c.do("GET", "/v1/payment_intents/search", "", url.Values{"query": {`metadata['intent_key']:'o\'brien\\1'`}})
	if data := res["data"].([]any); st != 200 || len(data) != 1 || data[0].(map[string]any)["metadata"].(map[string]any)["intent_key"] != `o'brien\1` {
		t.Errorf("search: %d %v", st, res)
	}
	if st, _, _ := c.do("GET", "/v1/payment_intents/search", "", url.Values{"query": {"status:'succeeded'"}}); st != 400 {
		t.Errorf("unsupported query: %d", st)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	req, _ := http.NewRequest("GET", c.url+"/v1/charges", nil)
	req.Header.Set("Authorization", "Bearer sk_live_123")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("live key: %d", resp.StatusCode)
	}
}
