package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/internal/openapitest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/providers/mpesa"
)

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
			c := openapitest.New(t)
			url := newURL(t)
			seed := fixture.Books(t, url)
			// Slack's buttons in bot mode, against a fake Web API.
			bot := alertstest.NewBot(t, nil)
			s, logs := testServer(t, url, func(cfg *config.Config) {
				// Only the HTTP servers: no job runs (nothing charges).
				cfg.Roles.Workers, cfg.Roles.Scheduler = false, false
				al := &cfg.Alerts
				al.Mode, al.Channel, al.BotToken, al.APIURL = "bot", "C0FINOPS", "xoxb-000000000000-OPENAPITOKEN", bot.APIURL()
				al.SigningSecret = testSlackSecret
				al.Interactions = config.InteractionsConfig{Enabled: true, AllowedUsers: []string{"U0ALICE"}}
			})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
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
			c.Documented(s.Patterns())
			exerciseServedAPI(t, c, public, seed)
			exerciseMpesa(t, c, public)
			exerciseStripe(t, c, public)
			exerciseSlack(t, c, public, s, bot, seed)

			for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
				if e := c.Do(admin, http.MethodGet, path, nil, nil); e.Code != http.StatusOK || e.ReqErr != nil {
					t.Errorf("GET %s: %d %v", path, e.Code, e.ReqErr)
				}
				// The public port serves none of them.
				if resp, err := http.Get(public + path); err != nil || resp.StatusCode != http.StatusNotFound {
					t.Errorf("public GET %s: %v %v", path, resp.StatusCode, err)
				}
			}
			// With the database gone, /readyz says so.
			s.store.Close()
			if e := c.Do(admin, http.MethodGet, "/readyz", nil, nil); e.Code != http.StatusServiceUnavailable {
				t.Errorf("GET /readyz without a database: %d %s", e.Code, e.Body)
			}
			// The API's operations are exercised one by one by package api's
			// TestOpenAPI; here, the rest.
			c.Covered("/healthz", "/readyz", "/metrics", "/daraja/", "/webhooks/", "/slack/")
		})
	}
}

// exerciseServedAPI checks that serve serves the API behind its token:
// package api checks every operation.
func exerciseServedAPI(t *testing.T, c *openapitest.Checker, base string, sd fixture.Seeded) {
	auth := http.Header{"Authorization": {"Bearer " + testAPIToken}}
	if e := c.Do(base, http.MethodGet, "/v1/findings/"+sd.Dup, nil, auth); e.Code != http.StatusOK || e.ReqErr != nil {
		t.Errorf("GET /v1/findings/%s: %d %s %v", sd.Dup, e.Code, e.Body, e.ReqErr)
	}
	if e := c.Do(base, http.MethodGet, "/v1/intents/nope", nil, auth); e.Code != http.StatusNotFound {
		t.Errorf("GET /v1/intents/nope: %d %s", e.Code, e.Body)
	}
	if e := c.Do(base, http.MethodGet, "/v1/findings", nil, nil); e.Code != http.StatusUnauthorized {
		t.Errorf("GET /v1/findings without a token: %d", e.Code)
	}
}

func exerciseMpesa(t *testing.T, c *openapitest.Checker, base string) {
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
		x := c.Do(base, http.MethodPost, path, body, js)
		if x.Code != http.StatusOK || x.ReqErr != nil {
			t.Errorf("POST %s: %d %s %v", e.Path, x.Code, x.Body, x.ReqErr)
		}
		// Delivered again: the same acknowledgement.
		if again := c.Do(base, http.MethodPost, path, body, js); again.Code != http.StatusOK || again.Body != x.Body {
			t.Errorf("POST %s again: %d %s", e.Path, again.Code, again.Body)
		}
	}
	wrong := "/daraja/" + strings.Repeat("f", 32) + "/stk"
	if x := c.Do(base, http.MethodPost, wrong, bodies["stk"], js); x.Code != http.StatusNotFound {
		t.Errorf("wrong token: %d", x.Code)
	}
	big := append([]byte(`{"Body":{"stkCallback":{"MerchantRequestID":"1","CheckoutRequestID":"ws_CO_1","ResultCode":0,"ResultDesc":"`),
		bytes.Repeat([]byte("x"), 70<<10)...)
	big = append(big, `"}}}`...)
	if x := c.Do(base, http.MethodPost, "/daraja/"+testPathToken+"/stk", big, js); x.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized: %d", x.Code)
	}
}

func exerciseStripe(t *testing.T, c *openapitest.Checker, base string) {
	body, err := os.ReadFile("../../providers/stripe/testdata/events/payment_intent_succeeded.json")
	if err != nil {
		t.Fatal(err)
	}
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: testWebhookSecret, Timestamp: time.Now()})
	h := http.Header{"Content-Type": {"application/json"}, "Stripe-Signature": {signed.Header}}
	if e := c.Do(base, http.MethodPost, "/webhooks/stripe", body, h); e.Code != http.StatusOK || e.ReqErr != nil {
		t.Errorf("webhook: %d %s %v", e.Code, e.Body, e.ReqErr)
	}
	if e := c.Do(base, http.MethodPost, "/webhooks/stripe", body, h); e.Code != http.StatusOK || !strings.Contains(e.Body, `"duplicate":true`) {
		t.Errorf("webhook again: %d %s", e.Code, e.Body)
	}
	bad := http.Header{"Content-Type": {"application/json"}, "Stripe-Signature": {fmt.Sprintf("t=%d,v1=00", time.Now().Unix())}}
	if e := c.Do(base, http.MethodPost, "/webhooks/stripe", body, bad); e.Code != http.StatusBadRequest {
		t.Errorf("bad signature: %d %s", e.Code, e.Body)
	}
}

const testSlackSecret = "slack-signing-secret-openapi-0123"

// exerciseSlack drives POST /slack/interactions: refused signatures and
// payloads, a dialog answered with its errors, an unauthorised press and an
// acknowledgement recorded with the Slack user and surface.
func exerciseSlack(t *testing.T, c *openapitest.Checker, base string, s *testService, bot *alertstest.Bot, sd fixture.Seeded) {
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
				"value": `{"a":1,"f":"` + sd.Unknown + `"}`, "action_ts": actionTS}}})
	}
	history := func() []string {
		evs, err := s.store.FindingHistory(context.Background(), sd.Unknown)
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
			"private_metadata": `{"a":1,"f":"` + sd.Unknown + `","c":"C0FINOPS","t":"1714629600.000100"}`,
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
		e := c.Do(base, http.MethodPost, "/slack/interactions", []byte(tc.body), tc.header)
		if e.Code != tc.code || !strings.Contains(e.Body, tc.contains) || e.ReqErr != nil {
			t.Errorf("slack %s: %d %s %v", tc.name, e.Code, openapitest.Truncate(e.Body), e.ReqErr)
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
