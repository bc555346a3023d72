package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/internal/openapitest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/queue"
)

const (
	testAPIToken = "tok_test_openapi_0123456789"
)

// TestOpenAPI serves the API on PostgreSQL and SQLite and checks every
// operation's live requests and answers against docs/openapi.yaml.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	for name, newURL := range map[string]func(testing.TB) string{"postgres": dbtest.PostgresURL, "sqlite": dbtest.SQLiteURL} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openapitest.New(t)
			url := newURL(t)
			seed := fixture.Books(t, url)
			store, err := database.Open(t.Context(), url, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(store.Close)
			base := openapiServer(t, store)
			exerciseIntents(t, c, base)
			exerciseRefundsAPI(t, c, base, store)
			exerciseFindings(t, c, base, seed)
			exerciseFindingsMatch(t, c, base, store)
			exerciseRemedies(t, c, base, store)
			c.Covered("/v1/")
		})
	}
}

// openapiServer serves the API over store, with a Stripe charger that
// reaches nothing (no job runs here).
func openapiServer(t *testing.T, store ledger.Store) string {
	t.Helper()
	ch, err := stripe.New(stripe.Config{APIKey: "sk_test_openapi_0123456789", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"stripe": ch}}, charge.Config{})
	q, err := queue.New(store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	mux := http.NewServeMux()
	rules := findings.Approvals{Thresholds: map[string]decimal.Decimal{"KES": decimal.NewFromInt(2000)}}
	New(Config{Token: testAPIToken, Store: store, Charges: svc, Findings: findings.NewService(store, findings.Options{Payments: svc, Approvals: rules}),
		Providers: func(ctx context.Context) (map[string]*time.Location, error) {
			return findings.Providers(ctx, store, map[string]*time.Location{"mpesa": time.UTC, "stripe": time.UTC})
		}}).Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func exerciseIntents(t *testing.T, c *openapitest.Checker, base string) {
	auth := http.Header{"Authorization": {"Bearer " + testAPIToken}, "Content-Type": {"application/json"}}
	with := func(h http.Header, kv ...string) http.Header {
		out := h.Clone()
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	body := []byte(`{"provider":"stripe","amount":"15.00","currency":"USD","customer":"cus_openapi","metadata":{"order":"5501"}}`)
	key := with(auth, "Idempotency-Key", "charge:order-5501")
	if e := c.Do(base, http.MethodPost, "/v1/intents", body, key); e.Code != http.StatusCreated || e.ReqErr != nil {
		t.Fatalf("create: %d %s %v", e.Code, e.Body, e.ReqErr)
	}
	if e := c.Do(base, http.MethodPost, "/v1/intents", body, key); e.Code != http.StatusOK || e.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s", e.Code, e.Body)
	}
	other := []byte(strings.Replace(string(body), "15.00", "16.00", 1))
	if e := c.Do(base, http.MethodPost, "/v1/intents", other, key); e.Code != http.StatusConflict {
		t.Errorf("reuse: %d %s", e.Code, e.Body)
	}
	// Invalid bodies: the description refuses what the server refuses
	// wherever a schema can say it.
	for name, tc := range map[string]struct {
		body       string
		schemaSays bool
	}{
		"exponent":      {`{"provider":"stripe","amount":1.5e1,"currency":"USD"}`, false},
		"boolean":       {`{"provider":"stripe","amount":true,"currency":"USD"}`, true},
		"unknown field": {`{"provider":"stripe","amount":"15.00","currency":"USD","colour":"red"}`, true},
		"no currency":   {`{"provider":"stripe","amount":"15.00"}`, true},
		"short code":    {`{"provider":"stripe","amount":"15.00","currency":"US"}`, true},
		"unknown code":  {`{"provider":"stripe","amount":"15.00","currency":"USX"}`, false},
		"too precise":   {`{"provider":"stripe","amount":"15.001","currency":"USD"}`, false},
	} {
		e := c.Do(base, http.MethodPost, "/v1/intents", []byte(tc.body), with(auth, "Idempotency-Key", "k-"+name))
		if e.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", name, e.Code, e.Body)
		}
		if tc.schemaSays && e.ReqErr == nil {
			t.Errorf("%s: the description accepts a body the server refuses", name)
		}
	}
	twice := []byte(`{"provider":"stripe","amount":"15.00","currency":"USD","amount":"1.00"}`)
	if e := c.Do(base, http.MethodPost, "/v1/intents", twice, with(auth, "Idempotency-Key", "k-twice")); e.Code != http.StatusBadRequest {
		t.Errorf("a key named twice: %d %s, want 400", e.Code, e.Body)
	}
	noKey := auth.Clone()
	if e := c.Do(base, http.MethodPost, "/v1/intents", body, noKey); e.Code != http.StatusUnprocessableEntity || e.ReqErr == nil {
		t.Errorf("no key: %d %v", e.Code, e.ReqErr)
	}
	if e := c.Do(base, http.MethodPost, "/v1/intents", body, http.Header{"Idempotency-Key": {"k"}}); e.Code != http.StatusUnauthorized || e.ReqErr == nil {
		t.Errorf("no token: %d %v", e.Code, e.ReqErr)
	}
	if e := c.Do(base, http.MethodGet, "/v1/intents/charge:order-5501", nil, auth); e.Code != http.StatusOK || !strings.Contains(e.Body, `"amount":"15.00"`) {
		t.Errorf("get: %d %s", e.Code, e.Body)
	}
	if e := c.Do(base, http.MethodGet, "/v1/intents/nope", nil, auth); e.Code != http.StatusNotFound {
		t.Errorf("get missing: %d %s", e.Code, e.Body)
	}
	if e := c.Do(base, http.MethodGet, "/v1/intents/charge:order-5501", nil, with(auth, "Authorization", "Bearer wrong")); e.Code != http.StatusUnauthorized {
		t.Errorf("get with a wrong token: %d", e.Code)
	}
	// An expected payment: recorded with its due date and tolerance, never
	// charged; a refund's kind is refused here.
	inv := []byte(`{"provider":"stripe","amount":"150.00","currency":"USD","kind":"expected","due_at":"2026-12-01T00:00:00+03:00","tolerance":"0.50"}`)
	if e := c.Do(base, http.MethodPost, "/v1/intents", inv, with(auth, "Idempotency-Key", "invoice:77")); e.Code != http.StatusCreated || e.ReqErr != nil ||
		!strings.Contains(e.Body, `"kind":"expected"`) || !strings.Contains(e.Body, `"due_at":"2026-11-30T21:00:00Z"`) || !strings.Contains(e.Body, `"tolerance":"0.50"`) {
		t.Errorf("an expected payment: %d %s %v", e.Code, e.Body, e.ReqErr)
	}
	if e := c.Do(base, http.MethodGet, "/v1/intents/invoice:77", nil, auth); e.Code != http.StatusOK || !strings.Contains(e.Body, `"kind":"expected"`) ||
		strings.Contains(e.Body, `"attempts"`) {
		t.Errorf("get the expected payment: %d %s", e.Code, e.Body)
	}
	for name, b := range map[string]string{
		"a refund's kind":            `{"provider":"stripe","amount":"1.00","currency":"USD","kind":"refund"}`,
		"a due date on a charge":     `{"provider":"stripe","amount":"1.00","currency":"USD","due_at":"2026-12-01T00:00:00Z"}`,
		"a tolerance beyond the sum": `{"provider":"stripe","amount":"1.00","currency":"USD","kind":"expected","tolerance":"1.00"}`,
	} {
		if e := c.Do(base, http.MethodPost, "/v1/intents", []byte(b), with(auth, "Idempotency-Key", "k-"+name)); e.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", name, e.Code, e.Body)
		}
	}
}

// exerciseFindings drives every findings API operation, answers and errors,
// on the seeded books: an open finding (unknown) and a resolved one (dup).
func exerciseFindings(t *testing.T, c *openapitest.Checker, base string, sd fixture.Seeded) {
	auth := http.Header{"Authorization": {"Bearer " + testAPIToken}}
	js := http.Header{"Authorization": {"Bearer " + testAPIToken}, "Content-Type": {"application/json"}}
	as := func(h http.Header, actor string) http.Header {
		out := h.Clone()
		out.Set(ActorHeader, actor)
		return out
	}
	for _, tc := range []struct {
		name, method, path, body string
		header                   http.Header
		code                     int
		contains                 string
		// schemaRefuses: the description itself refuses the request.
		schemaRefuses bool
	}{
		{"list", "GET", "/v1/findings", "", auth, 200, `"id":"` + sd.Unknown + `"`, false},
		{"list filtered", "GET", "/v1/findings?status=open,resolved&status=acknowledged&provider=mpesa&from=2026-11-02&to=2026-11-03&kind=duplicate_charge&limit=5",
			"", auth, 200, `"id":"` + sd.Dup + `"`, false},
		{"list unknown provider", "GET", "/v1/findings?provider=paypal", "", auth, 422, `"field":"provider"`, false},
		{"list without token", "GET", "/v1/findings", "", nil, 401, `"error"`, true},
		{"get", "GET", "/v1/findings/" + sd.Dup, "", auth, 200, `"surface":"web"`, false},
		{"get missing", "GET", "/v1/findings/f_nope", "", auth, 404, `"no such finding"`, false},
		{"get wrong token", "GET", "/v1/findings/" + sd.Dup, "", http.Header{"Authorization": {"Bearer wrong"}}, 401, `"error"`, false},
		{"ack", "POST", "/v1/findings/" + sd.Unknown + "/ack", "", as(auth, "erin@example.com"), 200, `"acknowledged_by":"erin@example.com"`, false},
		{"ack with note", "POST", "/v1/findings/" + sd.Unknown + "/ack", `{"note":"looking"}`, js, 200, `"actor":"api-token"`, false},
		{"resolve without note", "POST", "/v1/findings/" + sd.Unknown + "/resolve", `{}`, js, 422, `"field":"note"`, true},
		{"resolve bad body", "POST", "/v1/findings/" + sd.Unknown + "/resolve", `{"note":`, js, 400, `"field":"body"`, true},
		{"resolve unknown field", "POST", "/v1/findings/" + sd.Unknown + "/resolve", `{"note":"x","by":"y"}`, js, 400, `"field":"body"`, true},
		{"resolve bad actor", "POST", "/v1/findings/" + sd.Unknown + "/resolve", `{"note":"x"}`, as(js, "run"), 422, `"field":"X-Reconcile-Actor"`, false},
		{"resolve", "POST", "/v1/findings/" + sd.Unknown + "/resolve", `{"note":"refunded by hand"}`, as(js, "erin@example.com"), 200, `"resolved_by":"erin@example.com"`, false},
		{"ack resolved", "POST", "/v1/findings/" + sd.Unknown + "/ack", "", auth, 409, `"status":"resolved"`, false},
		{"resolve missing", "POST", "/v1/findings/f_nope/resolve", `{"note":"x"}`, js, 404, `"no such finding"`, false},
		{"reopen", "POST", "/v1/findings/" + sd.Unknown + "/reopen", `{"note":"customer wrote again"}`, as(js, "erin@example.com"), 200, `"status":"open"`, false},
		{"reopen open", "POST", "/v1/findings/" + sd.Unknown + "/reopen", `{"note":"again"}`, js, 409, `"status":"open"`, false},
		{"reopen without token", "POST", "/v1/findings/" + sd.Unknown + "/reopen", `{"note":"again"}`, http.Header{"Content-Type": {"application/json"}}, 401, `"error"`, true},
		{"note", "POST", "/v1/findings/" + sd.Unknown + "/notes", `{"note":"called the bank"}`, as(js, "erin@example.com"), 200, `"action":"noted"`, false},
		{"note bad body", "POST", "/v1/findings/" + sd.Unknown + "/notes", `[1]`, js, 400, `"field":"body"`, true},
		{"note blank", "POST", "/v1/findings/" + sd.Unknown + "/notes", `{"note":" "}`, js, 422, `"field":"note"`, false},
		{"note missing", "POST", "/v1/findings/f_nope/notes", `{"note":"x"}`, js, 404, `"no such finding"`, false},
	} {
		e := c.Do(base, tc.method, tc.path, []byte(tc.body), tc.header)
		if e.Code != tc.code || !strings.Contains(e.Body, tc.contains) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, e.Code, openapitest.Truncate(e.Body), tc.code, tc.contains)
		}
		if ct := e.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: content type %q", tc.name, ct)
		}
		if tc.schemaRefuses != (e.ReqErr != nil) {
			t.Errorf("%s: the description refuses the request: %v, want %v (%v)", tc.name, e.ReqErr != nil, tc.schemaRefuses, e.ReqErr)
		}
	}
}

func exerciseFindingsMatch(t *testing.T, c *openapitest.Checker, base string, s ledger.Store) {
	unknown, missing := fixture.Typo(t, s)
	auth := http.Header{"Authorization": {"Bearer " + testAPIToken}, "Content-Type": {"application/json"},
		ActorHeader: {"carol@example.com"}}
	post := func(path, body string, h http.Header) openapitest.Exchange {
		return c.Do(base, http.MethodPost, path, []byte(body), h)
	}
	status := func(e openapitest.Exchange) string {
		var d struct {
			Finding struct{ Status string } `json:"finding"`
		}
		_ = json.Unmarshal([]byte(e.Body), &d)
		return d.Finding.Status
	}
	match, unmatch := "/v1/findings/"+unknown.ID+"/match", "/v1/findings/"+unknown.ID+"/unmatch"
	for name, tc := range map[string]struct {
		path, body string
		code       int
		says       string
	}{
		"not an unknown_charge": {"/v1/findings/" + missing.ID + "/match", `{"intent_key":"k-typo","note":"x"}`, http.StatusUnprocessableEntity, "only an unknown_charge"},
		"currencies differ":     {match, `{"intent_key":"k-usd","note":"x"}`, http.StatusUnprocessableEntity, "currencies differ"},
		"no such intent":        {match, `{"intent_key":"k-none","note":"x"}`, http.StatusUnprocessableEntity, "no intent"},
		"no such finding":       {"/v1/findings/f_00000000000000000000/match", `{"intent_key":"k-typo","note":"x"}`, http.StatusNotFound, "no such finding"},
		"no note":               {match, `{"intent_key":"k-typo"}`, http.StatusUnprocessableEntity, `"field":"note"`},
		"unmatch without note":  {unmatch, `{}`, http.StatusUnprocessableEntity, `"field":"note"`},
		"not matched":           {unmatch, `{"note":"x"}`, http.StatusConflict, "not matched by hand"},
		"bad body":              {match, `{"intent":"k-typo"}`, http.StatusBadRequest, "body"},
	} {
		if e := post(tc.path, tc.body, auth); e.Code != tc.code || !strings.Contains(e.Body, tc.says) {
			t.Errorf("%s: %d %s", name, e.Code, e.Body)
		}
	}
	if e := post(match, `{"intent_key":"k-typo"}`, http.Header{"Content-Type": {"application/json"}}); e.Code != http.StatusUnauthorized {
		t.Errorf("match without a token: %d", e.Code)
	}
	e := post(match, `{"intent_key":"k-typo","note":"payer typed O for 0"}`, auth)
	if e.Code != http.StatusOK || status(e) != "resolved" || !strings.Contains(e.Body, `"matched"`) {
		t.Fatalf("match: %d %s", e.Code, e.Body)
	}
	if got, err := s.GetFinding(context.Background(), missing.ID); err != nil || got.Status != ledger.FindingResolved || got.Resolver != "carol@example.com" {
		t.Errorf("missing_at_provider after match: %+v %v", got, err)
	}
	if e := post(match, `{"intent_key":"k-typo","note":"again"}`, auth); e.Code != http.StatusConflict || !strings.Contains(e.Body, "already matched by hand") {
		t.Errorf("match twice: %d %s", e.Code, e.Body)
	}
	if e := post(unmatch, `{"note":"wrong payer"}`, auth); e.Code != http.StatusOK || status(e) != "open" || !strings.Contains(e.Body, `"unmatched"`) {
		t.Errorf("unmatch: %d %s", e.Code, e.Body)
	}
}
