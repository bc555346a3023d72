package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/providers/mpesa"
)

const openapiFile = "../../docs/openapi.yaml"

// loadOpenAPI loads and validates docs/openapi.yaml (OpenAPI 3.1: kin-openapi
// validates its schemas as JSON Schema 2020-12).
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(openapiFile)
	if err != nil {
		t.Fatalf("load %s: %v", openapiFile, err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("%s is OpenAPI %s, want 3.1", openapiFile, doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("validate %s: %v", openapiFile, err)
	}
	return doc
}

// apiChecker sends requests to a live server and validates each request and
// response against the OpenAPI description.
type apiChecker struct {
	t      *testing.T
	doc    *openapi3.T
	router routers.Router
	mu     sync.Mutex
	// seen records operation id -> statuses answered.
	seen map[string][]int
}

func newAPIChecker(t *testing.T) *apiChecker {
	doc := loadOpenAPI(t)
	// Route by path alone: the two ports are told apart by the test, which
	// sends admin paths to the admin listener.
	routed := *doc
	routed.Servers = nil
	routed.Paths = openapi3.NewPaths()
	for path, item := range doc.Paths.Map() {
		it := *item
		it.Servers = nil
		routed.Paths.Set(path, &it)
	}
	router, err := legacy.NewRouter(&routed)
	if err != nil {
		t.Fatal(err)
	}
	return &apiChecker{t: t, doc: doc, router: router, seen: map[string][]int{}}
}

// bearerOnly accepts a request that carries a bearer token; checking its
// value is the server's job.
func bearerOnly(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName == "bearer" && strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
		return nil
	}
	return errors.New("no bearer token")
}

type exchange struct {
	code   int
	body   string
	header http.Header
	// reqErr is what the description says about the request: nil when it
	// is valid.
	reqErr error
}

// do sends method base+path with body and headers, validates the request and
// the response, and returns the response. A route the description lacks and
// a response it does not describe fail the test.
func (c *apiChecker) do(base, method, path string, body []byte, header http.Header) exchange {
	c.t.Helper()
	ctx := context.Background()
	newReq := func() *http.Request {
		r, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			c.t.Fatal(err)
		}
		for k, v := range header {
			r.Header[k] = v
		}
		return r
	}
	check := newReq()
	route, params, err := c.router.FindRoute(check)
	if err != nil {
		c.t.Fatalf("%s %s is not in %s: %v", method, path, openapiFile, err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: bearerOnly, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: opts}
	reqErr := openapi3filter.ValidateRequest(ctx, in)

	resp, err := http.DefaultClient.Do(newReq())
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts}
	out.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		c.t.Errorf("%s %s answered %d %s %q, which %s does not describe: %v", method, path, resp.StatusCode,
			resp.Header.Get("Content-Type"), truncate(string(got)), openapiFile, err)
	}
	c.mu.Lock()
	c.seen[route.Operation.OperationID] = append(c.seen[route.Operation.OperationID], resp.StatusCode)
	c.mu.Unlock()
	return exchange{code: resp.StatusCode, body: string(got), header: resp.Header, reqErr: reqErr}
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// covered fails for every documented operation the test never called.
func (c *apiChecker) covered() {
	c.t.Helper()
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if len(c.seen[op.OperationID]) == 0 {
				c.t.Errorf("%s %s (%s) is described but was not exercised", method, path, op.OperationID)
			}
		}
	}
}

// documented fails for every route the server registered that the
// description lacks.
func (c *apiChecker) documented(s *server) {
	c.t.Helper()
	has := func(method, path string) bool {
		item := c.doc.Paths.Value(path)
		return item != nil && item.GetOperation(method) != nil
	}
	prefix := "/daraja/"
	for _, p := range slices.Concat(s.mux.patterns, s.admin.patterns) {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		switch {
		case path == prefix && method == "":
			// The M-Pesa handler serves its endpoints under the prefix.
			for _, e := range mpesa.Endpoints {
				if !has(http.MethodPost, prefix+"{token}/"+e.Path) {
					c.t.Errorf("M-Pesa endpoint POST %s{token}/%s is served but not described", prefix, e.Path)
				}
			}
		case !has(method, path):
			c.t.Errorf("route %q is served but not described in %s", p, openapiFile)
		}
	}
}

var (
	publicAddr = regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	adminAddrs = regexp.MustCompile(`"msg":"admin serving","addr":"([^"]+)"`)
)

// TestOpenAPI runs `reconcile serve`'s HTTP servers on PostgreSQL and
// SQLite and checks every endpoint's live requests and responses against
// docs/openapi.yaml.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	for name, newURL := range map[string]func(testing.TB) string{"postgres": dbtest.PostgresURL, "sqlite": dbtest.SQLiteURL} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newAPIChecker(t)
			url := newURL(t)
			seed := seedBooks(t, url)
			s, logs := testServer(t, url)
			// Only the HTTP servers: no job runs (nothing charges).
			s.a.cfg.Roles.Workers, s.a.cfg.Roles.Scheduler = false, false
			// Slack's buttons in bot mode, against a fake Web API.
			bot := alertstest.NewBot(t, nil)
			al := &s.a.cfg.Alerts
			al.Mode, al.Channel, al.BotToken, al.APIURL = "bot", "C0FINOPS", "xoxb-000000000000-OPENAPITOKEN", bot.APIURL()
			al.SigningSecret = testSlackSecret
			al.Interactions = config.InteractionsConfig{Enabled: true, AllowedUsers: []string{"U0ALICE"}}
			if err := s.slackRoutes(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v", err)
				}
			}()
			var public, admin string
			err := poll.Until(t.Context(), 30*time.Second, poll.Interval, func() (bool, error) {
				if m := publicAddr.FindStringSubmatch(logs.String()); m != nil {
					public = "http://" + m[1]
				}
				if m := adminAddrs.FindStringSubmatch(logs.String()); m != nil {
					admin = "http://" + m[1]
				}
				return public != "" && admin != "", nil
			})
			if err != nil {
				t.Fatalf("not serving: %v\n%s", err, logs)
			}
			c.documented(s)
			exerciseIntents(t, c, public)
			exerciseRefundsAPI(t, c, public, s.store)
			exerciseMpesa(t, c, public)
			exerciseStripe(t, c, public)
			exerciseFindings(t, c, public, seed)
			exerciseSlack(t, c, public, s, bot, seed)
			exerciseFindingsMatch(t, c, public, s.store)

			for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
				if e := c.do(admin, http.MethodGet, path, nil, nil); e.code != http.StatusOK || e.reqErr != nil {
					t.Errorf("GET %s: %d %v", path, e.code, e.reqErr)
				}
				// The public port serves none of them.
				if resp, err := http.Get(public + path); err != nil || resp.StatusCode != http.StatusNotFound {
					t.Errorf("public GET %s: %v %v", path, resp.StatusCode, err)
				}
			}
			// With the database gone, /readyz says so.
			s.store.Close()
			if e := c.do(admin, http.MethodGet, "/readyz", nil, nil); e.code != http.StatusServiceUnavailable {
				t.Errorf("GET /readyz without a database: %d %s", e.code, e.body)
			}
			c.covered()
		})
	}
}

func exerciseIntents(t *testing.T, c *apiChecker, base string) {
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
	if e := c.do(base, http.MethodPost, "/v1/intents", body, key); e.code != http.StatusCreated || e.reqErr != nil {
		t.Fatalf("create: %d %s %v", e.code, e.body, e.reqErr)
	}
	if e := c.do(base, http.MethodPost, "/v1/intents", body, key); e.code != http.StatusOK || e.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s", e.code, e.body)
	}
	other := []byte(strings.Replace(string(body), "15.00", "16.00", 1))
	if e := c.do(base, http.MethodPost, "/v1/intents", other, key); e.code != http.StatusConflict {
		t.Errorf("reuse: %d %s", e.code, e.body)
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
		e := c.do(base, http.MethodPost, "/v1/intents", []byte(tc.body), with(auth, "Idempotency-Key", "k-"+name))
		if e.code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", name, e.code, e.body)
		}
		if tc.schemaSays && e.reqErr == nil {
			t.Errorf("%s: the description accepts a body the server refuses", name)
		}
	}
	noKey := auth.Clone()
	if e := c.do(base, http.MethodPost, "/v1/intents", body, noKey); e.code != http.StatusUnprocessableEntity || e.reqErr == nil {
		t.Errorf("no key: %d %v", e.code, e.reqErr)
	}
	if e := c.do(base, http.MethodPost, "/v1/intents", body, http.Header{"Idempotency-Key": {"k"}}); e.code != http.StatusUnauthorized || e.reqErr == nil {
		t.Errorf("no token: %d %v", e.code, e.reqErr)
	}
	if e := c.do(base, http.MethodGet, "/v1/intents/charge:order-5501", nil, auth); e.code != http.StatusOK || !strings.Contains(e.body, `"amount":"15.00"`) {
		t.Errorf("get: %d %s", e.code, e.body)
	}
	if e := c.do(base, http.MethodGet, "/v1/intents/nope", nil, auth); e.code != http.StatusNotFound {
		t.Errorf("get missing: %d %s", e.code, e.body)
	}
	if e := c.do(base, http.MethodGet, "/v1/intents/charge:order-5501", nil, with(auth, "Authorization", "Bearer wrong")); e.code != http.StatusUnauthorized {
		t.Errorf("get with a wrong token: %d", e.code)
	}
}

func exerciseMpesa(t *testing.T, c *apiChecker, base string) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("../../providers/mpesa/testdata/callbacks", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	timeout := []byte(`{"Result":{"ResultType":0,"ResultCode":1,"ResultDesc":"The service request timed out.","OriginatorConversationID":"10571-7910404-1","ConversationID":"AG_20240706_00004e48cf7e3533f581","TransactionID":"SG60000000"}}`)
	bodies := map[string][]byte{
		"stk": read("stk_success.json"), "c2b/validation": read("c2b_official.json"), "c2b/confirmation": read("c2b_official.json"),
		"b2c/result": read("b2c_success.json"), "reversal/result": read("reversal_success.json"), "status/result": read("status_official.json"),
	}
	js := http.Header{"Content-Type": {"application/json"}}
	for _, e := range mpesa.Endpoints {
		body, ok := bodies[e.Path]
		if !ok {
			body = timeout
		}
		path := "/daraja/" + testPathToken + "/" + e.Path
		x := c.do(base, http.MethodPost, path, body, js)
		if x.code != http.StatusOK || x.reqErr != nil {
			t.Errorf("POST %s: %d %s %v", e.Path, x.code, x.body, x.reqErr)
		}
		// Delivered again: the same acknowledgement.
		if again := c.do(base, http.MethodPost, path, body, js); again.code != http.StatusOK || again.body != x.body {
			t.Errorf("POST %s again: %d %s", e.Path, again.code, again.body)
		}
	}
	wrong := "/daraja/" + strings.Repeat("f", 32) + "/stk"
	if x := c.do(base, http.MethodPost, wrong, bodies["stk"], js); x.code != http.StatusNotFound {
		t.Errorf("wrong token: %d", x.code)
	}
	big := append([]byte(`{"Body":{"stkCallback":{"MerchantRequestID":"1","CheckoutRequestID":"ws_CO_1","ResultCode":0,"ResultDesc":"`),
		bytes.Repeat([]byte("x"), 70<<10)...)
	big = append(big, `"}}}`...)
	if x := c.do(base, http.MethodPost, "/daraja/"+testPathToken+"/stk", big, js); x.code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized: %d", x.code)
	}
}

func exerciseStripe(t *testing.T, c *apiChecker, base string) {
	body, err := os.ReadFile("../../providers/stripe/testdata/events/payment_intent_succeeded.json")
	if err != nil {
		t.Fatal(err)
	}
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: testWebhookSecret, Timestamp: time.Now()})
	h := http.Header{"Content-Type": {"application/json"}, "Stripe-Signature": {signed.Header}}
	if e := c.do(base, http.MethodPost, "/webhooks/stripe", body, h); e.code != http.StatusOK || e.reqErr != nil {
		t.Errorf("webhook: %d %s %v", e.code, e.body, e.reqErr)
	}
	if e := c.do(base, http.MethodPost, "/webhooks/stripe", body, h); e.code != http.StatusOK || !strings.Contains(e.body, `"duplicate":true`) {
		t.Errorf("webhook again: %d %s", e.code, e.body)
	}
	bad := http.Header{"Content-Type": {"application/json"}, "Stripe-Signature": {fmt.Sprintf("t=%d,v1=00", time.Now().Unix())}}
	if e := c.do(base, http.MethodPost, "/webhooks/stripe", body, bad); e.code != http.StatusBadRequest {
		t.Errorf("bad signature: %d %s", e.code, e.body)
	}
}

// exerciseFindings drives every findings API operation, answers and errors,
// on the seeded books: an open finding (unknown) and a resolved one (dup).
func exerciseFindings(t *testing.T, c *apiChecker, base string, sd seeded) {
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
		{"list", "GET", "/v1/findings", "", auth, 200, `"id":"` + sd.unknown + `"`, false},
		{"list filtered", "GET", "/v1/findings?status=open,resolved&status=acknowledged&provider=mpesa&from=2026-11-02&to=2026-11-03&kind=duplicate_charge&limit=5",
			"", auth, 200, `"id":"` + sd.dup + `"`, false},
		{"list unknown provider", "GET", "/v1/findings?provider=paypal", "", auth, 422, `"field":"provider"`, false},
		{"list without token", "GET", "/v1/findings", "", nil, 401, `"error"`, true},
		{"get", "GET", "/v1/findings/" + sd.dup, "", auth, 200, `"surface":"web"`, false},
		{"get missing", "GET", "/v1/findings/f_nope", "", auth, 404, `"no such finding"`, false},
		{"get wrong token", "GET", "/v1/findings/" + sd.dup, "", http.Header{"Authorization": {"Bearer wrong"}}, 401, `"error"`, false},
		{"ack", "POST", "/v1/findings/" + sd.unknown + "/ack", "", as(auth, "erin@example.com"), 200, `"acknowledged_by":"erin@example.com"`, false},
		{"ack with note", "POST", "/v1/findings/" + sd.unknown + "/ack", `{"note":"looking"}`, js, 200, `"actor":"api-token"`, false},
		{"resolve without note", "POST", "/v1/findings/" + sd.unknown + "/resolve", `{}`, js, 422, `"field":"note"`, true},
		{"resolve bad body", "POST", "/v1/findings/" + sd.unknown + "/resolve", `{"note":`, js, 400, `"field":"body"`, true},
		{"resolve unknown field", "POST", "/v1/findings/" + sd.unknown + "/resolve", `{"note":"x","by":"y"}`, js, 400, `"field":"body"`, true},
		{"resolve bad actor", "POST", "/v1/findings/" + sd.unknown + "/resolve", `{"note":"x"}`, as(js, "run"), 422, `"field":"X-Reconcile-Actor"`, false},
		{"resolve", "POST", "/v1/findings/" + sd.unknown + "/resolve", `{"note":"refunded by hand"}`, as(js, "erin@example.com"), 200, `"resolved_by":"erin@example.com"`, false},
		{"ack resolved", "POST", "/v1/findings/" + sd.unknown + "/ack", "", auth, 409, `"status":"resolved"`, false},
		{"resolve missing", "POST", "/v1/findings/f_nope/resolve", `{"note":"x"}`, js, 404, `"no such finding"`, false},
		{"reopen", "POST", "/v1/findings/" + sd.unknown + "/reopen", `{"note":"customer wrote again"}`, as(js, "erin@example.com"), 200, `"status":"open"`, false},
		{"reopen open", "POST", "/v1/findings/" + sd.unknown + "/reopen", `{"note":"again"}`, js, 409, `"status":"open"`, false},
		{"reopen without token", "POST", "/v1/findings/" + sd.unknown + "/reopen", `{"note":"again"}`, http.Header{"Content-Type": {"application/json"}}, 401, `"error"`, true},
		{"note", "POST", "/v1/findings/" + sd.unknown + "/notes", `{"note":"called the bank"}`, as(js, "erin@example.com"), 200, `"action":"noted"`, false},
		{"note bad body", "POST", "/v1/findings/" + sd.unknown + "/notes", `[1]`, js, 400, `"field":"body"`, true},
		{"note blank", "POST", "/v1/findings/" + sd.unknown + "/notes", `{"note":" "}`, js, 422, `"field":"note"`, false},
		{"note missing", "POST", "/v1/findings/f_nope/notes", `{"note":"x"}`, js, 404, `"no such finding"`, false},
	} {
		e := c.do(base, tc.method, tc.path, []byte(tc.body), tc.header)
		if e.code != tc.code || !strings.Contains(e.body, tc.contains) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, e.code, truncate(e.body), tc.code, tc.contains)
		}
		if ct := e.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: content type %q", tc.name, ct)
		}
		if tc.schemaRefuses != (e.reqErr != nil) {
			t.Errorf("%s: the description refuses the request: %v, want %v (%v)", tc.name, e.reqErr != nil, tc.schemaRefuses, e.reqErr)
		}
	}
}

const testSlackSecret = "slack-signing-secret-openapi-0123"

// exerciseSlack drives POST /slack/interactions: refused signatures and
// payloads, a dialog answered with its errors, an unauthorised press and an
// acknowledgement recorded with the Slack user and surface.
func exerciseSlack(t *testing.T, c *apiChecker, base string, s *server, bot *alertstest.Bot, sd seeded) {
	signed := func(secret string, at time.Time, body string) http.Header {
		stamp := strconv.FormatInt(at.Unix(), 10)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte("v0:" + stamp + ":" + body))
		return http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Slack-Request-Timestamp": {stamp},
			"X-Slack-Signature": {"v0=" + hex.EncodeToString(mac.Sum(nil))}}
	}
	form := func(payload any) string {
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		return url.Values{"payload": {string(b)}}.Encode()
	}
	user := func(id, name string) map[string]any {
		return map[string]any{"id": id, "name": name, "team_id": "T0TEAM"}
	}
	press := func(id, name, actionTS string) string {
		return form(map[string]any{"type": "block_actions", "team": map[string]any{"id": "T0TEAM"}, "user": user(id, name),
			"container": map[string]any{"type": "message", "channel_id": "C0FINOPS", "message_ts": "1714629600.000100"},
			"actions": []map[string]any{{"type": "button", "action_id": "reconcile_ack", "block_id": "reconcile_actions",
				"value": `{"a":1,"f":"` + sd.unknown + `"}`, "action_ts": actionTS}}})
	}
	history := func() []string {
		evs, err := s.store.FindingHistory(context.Background(), sd.unknown)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range evs {
			out = append(out, string(ev.Action)+" "+ev.Who()+" "+string(ev.Surface))
		}
		return out
	}
	before := len(history())
	ack := press("U0ALICE", "alice", "1714629601.000200")
	blank := form(map[string]any{"type": "view_submission", "team": map[string]any{"id": "T0TEAM"}, "user": user("U0ALICE", "alice"),
		"view": map[string]any{"id": "V0OPENAPI", "callback_id": "reconcile_resolve_note",
			"private_metadata": `{"a":1,"f":"` + sd.unknown + `","c":"C0FINOPS","t":"1714629600.000100"}`,
			"state":            map[string]any{"values": map[string]any{"note": map[string]any{"note": map[string]any{"type": "plain_text_input", "value": " "}}}}}})
	for _, tc := range []struct {
		name     string
		body     string
		header   http.Header
		code     int
		contains string
	}{
		{"forged", ack, signed("not-the-secret", time.Now(), ack), 401, "refused"},
		{"stale", ack, signed(testSlackSecret, time.Now().Add(-6*time.Minute), ack), 401, "refused"},
		{"not a payload", "payload=%7Bnope", signed(testSlackSecret, time.Now(), "payload=%7Bnope"), 400, "payload"},
		{"unauthorised", press("U0MALLORY", "mallory", "1714629601.000100"), signed(testSlackSecret, time.Now(), press("U0MALLORY", "mallory", "1714629601.000100")), 200, ""},
		{"blank note", blank, signed(testSlackSecret, time.Now(), blank), 200, `"response_action":"errors"`},
		{"ack", ack, signed(testSlackSecret, time.Now(), ack), 200, ""},
		{"ack retried", ack, signed(testSlackSecret, time.Now(), ack), 200, ""},
	} {
		if tc.name == "ack retried" {
			tc.header.Set("X-Slack-Retry-Num", "1")
			tc.header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		e := c.do(base, http.MethodPost, "/slack/interactions", []byte(tc.body), tc.header)
		if e.code != tc.code || !strings.Contains(e.body, tc.contains) || e.reqErr != nil {
			t.Errorf("slack %s: %d %s %v", tc.name, e.code, truncate(e.body), e.reqErr)
		}
		if tc.name != "ack" && tc.name != "ack retried" && len(history()) != before {
			t.Errorf("slack %s changed the history: %v", tc.name, history())
		}
	}
	if h := history(); len(h) != before+1 || h[len(h)-1] != "acknowledged @alice (U0ALICE) slack" {
		t.Errorf("history after a Slack acknowledgement, retried: %v", h)
	}
	if e := bot.Ephemerals(); len(e) != 1 || e[0].User != "U0MALLORY" {
		t.Errorf("refusals sent: %+v", e)
	}
}
