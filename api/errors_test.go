package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

// TestOneErrorBody: every error answer of the intents, refunds and findings
// APIs is the one Error body, whatever went wrong: it decodes into Error
// with nothing left over, says what went wrong, names the fields at fault
// when the request is, and the finding's status on a conflict.
func TestOneErrorBody(t *testing.T) {
	t.Parallel()
	url := dbtest.SQLiteURL(t)
	sd := fixture.Books(t, url)
	store, err := database.Open(context.Background(), url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"mpesa": &fake.Charger{}}}, charge.Config{})
	q, err := queue.New(store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	mux := http.NewServeMux()
	New(Config{Token: testAPIToken, Store: store, Charges: svc, Findings: findings.NewService(store, findings.Options{}),
		Providers: func(ctx context.Context) (map[string]*time.Location, error) {
			return findings.Providers(ctx, store, nil)
		}}).Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	do := func(method, path, key, body string, token bool) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token {
			req.Header.Set("Authorization", "Bearer "+testAPIToken)
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, raw
	}
	send := func(method, path, key, body string, token bool) (int, Error) {
		t.Helper()
		resp, raw := do(method, path, key, body, token)
		var e Error
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.Message == "" || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s is not the error body: %v", method, path, resp.StatusCode, raw, err)
		}
		return resp.StatusCode, e
	}
	intent := `{"provider":"mpesa","amount":"1500.00","currency":"KES"}`
	if resp, raw := do("POST", "/v1/intents", "charge:one", intent, true); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, raw)
	}
	for _, tc := range []struct {
		name, method, path, key, body string
		token                         bool
		code                          int
		field, status                 string
	}{
		{"no token", "GET", "/v1/findings", "", "", false, 401, "", ""},
		{"intent: no key", "POST", "/v1/intents", "", intent, true, 422, "Idempotency-Key", ""},
		{"intent: bad amount", "POST", "/v1/intents", "charge:two", `{"provider":"mpesa","amount":"1.234","currency":"KES"}`, true, 422, "amount", ""},
		{"intent: key reused", "POST", "/v1/intents", "charge:one", strings.Replace(intent, "1500", "1600", 1), true, 409, "", ""},
		{"intent: too large", "POST", "/v1/intents", "charge:three", `{"customer":"` + strings.Repeat("7", 70<<10) + `"}`, true, 413, "body", ""},
		{"intent: none", "GET", "/v1/intents/charge:nope", "", "", true, 404, "", ""},
		{"refund: no charge", "POST", "/v1/refunds", "refund:x", `{"refund_of":"charge:nope","amount":"1"}`, true, 422, "refund_of", ""},
		{"findings: bad filter", "GET", "/v1/findings?limit=0", "", "", true, 422, "limit", ""},
		{"finding: none", "GET", "/v1/findings/f_nope", "", "", true, 404, "", ""},
		{"finding: bad body", "POST", "/v1/findings/" + sd.Unknown + "/resolve", "", `{"note":`, true, 400, "body", ""},
		{"finding: no note", "POST", "/v1/findings/" + sd.Unknown + "/resolve", "", `{}`, true, 422, "note", ""},
		{"finding: conflict", "POST", "/v1/findings/" + sd.Dup + "/ack", "", ``, true, 409, "", "resolved"},
	} {
		code, e := send(tc.method, tc.path, tc.key, tc.body, tc.token)
		field := ""
		if len(e.Fields) > 0 {
			field = e.Fields[0].Field
		}
		if code != tc.code || field != tc.field || e.Current != tc.status {
			t.Errorf("%s: %d %+v, want %d naming field %q and status %q", tc.name, code, e, tc.code, tc.field, tc.status)
		}
	}
}
