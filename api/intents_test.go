package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

func apiServer(t *testing.T, newStore func(testing.TB) ledger.Store) (*httptest.Server, ledger.Store, *queue.Queue) {
	t.Helper()
	store := newStore(t)
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"mpesa": &fake.Charger{}}}, charge.Config{})
	q, err := queue.New(store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	mux := http.NewServeMux()
	New(Config{Token: "tok_test_123456", Store: store, Charges: svc}).Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, store, q
}

func post(t *testing.T, srv *httptest.Server, key, body string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/intents", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok_test_123456")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

const intentBody = `{"provider":"mpesa","amount":"1500.00","currency":"KES","customer":"254712340845","metadata":{"order":"4471"}}`

func TestIntentsAPI(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			srv, _, _ := apiServer(t, e.New)
			code, first, _ := post(t, srv, "charge:order-4471", intentBody)
			if code != http.StatusCreated || !strings.Contains(first, `"state":"pending"`) || strings.Contains(first, "254712340845") {
				t.Fatalf("create: %d %s", code, first)
			}
			code, again, h := post(t, srv, "charge:order-4471", intentBody)
			if code != http.StatusOK || again != first || h.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %s", code, again)
			}
			code, body, _ := post(t, srv, "charge:order-4471", strings.Replace(intentBody, "1500.00", "1600.00", 1))
			if code != http.StatusConflict || !strings.Contains(body, "key reused with different parameters") {
				t.Fatalf("reuse: %d %s", code, body)
			}
			for name, tc := range map[string]struct{ key, body, field string }{
				"too precise":   {"k1", `{"provider":"mpesa","amount":"12.345","currency":"KES"}`, "amount"},
				"float amount":  {"k2", `{"provider":"mpesa","amount":1e3,"currency":"KES"}`, "amount"},
				"bad currency":  {"k3", `{"provider":"mpesa","amount":"10","currency":"KSH"}`, "currency"},
				"no provider":   {"k4", `{"amount":"10","currency":"KES"}`, "provider"},
				"unknown field": {"k5", `{"provider":"mpesa","amount":"10","currency":"KES","colour":"red"}`, "body"},
				"no key":        {"", intentBody, "Idempotency-Key"},
				"negative":      {"k6", `{"provider":"mpesa","amount":"-10","currency":"KES"}`, "amount"},
				"long ref":      {"k7", `{"provider":"mpesa","amount":"10","currency":"KES","reference":"THIRTEEN-CHAR"}`, "reference"},
				"no charger":    {"k8", `{"provider":"paypal","amount":"10","currency":"KES"}`, "provider"},
			} {
				code, body, _ := post(t, srv, tc.key, tc.body)
				var resp struct {
					Fields []fieldProblem `json:"fields"`
				}
				_ = json.Unmarshal([]byte(body), &resp)
				if code != http.StatusUnprocessableEntity || len(resp.Fields) == 0 || resp.Fields[0].Field != tc.field {
					t.Errorf("%s: %d %s, want 422 naming %s", name, code, body, tc.field)
				}
			}
			resp, err := http.Get(srv.URL + "/v1/intents/charge:order-4471")
			if err != nil || resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("no token: %v %v", resp.StatusCode, err)
			}
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/intents/charge:order-4471", nil)
			req.Header.Set("Authorization", "Bearer tok_test_123456")
			resp, err = http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("get: %v %v", resp.StatusCode, err)
			}
			var got findings.IntentView
			_ = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if got.Amount != "1500.00" || got.State != "pending" || got.Metadata["order"] != "4471" || got.Customer != "2547****0845" {
				t.Fatalf("get = %+v", got)
			}
			req, _ = http.NewRequest(http.MethodGet, srv.URL+"/v1/intents/nope", nil)
			req.Header.Set("Authorization", "Bearer tok_test_123456")
			if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != http.StatusNotFound {
				t.Fatalf("missing: %d", resp.StatusCode)
			}
		})
	}
}

// TestIntentsAPIConcurrentRepeats: many identical requests at once create one
// intent, one job, one 201; the rest replay.
func TestIntentsAPIConcurrentRepeats(t *testing.T) {
	t.Parallel()
	srv, _, q := apiServer(t, dbtest.Postgres)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	for range 20 {
		wg.Go(func() {
			code, _, _ := post(t, srv, "charge:race", intentBody)
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusCreated] != 1 || codes[http.StatusOK] != 19 {
		t.Fatalf("codes = %v", codes)
	}
	jobs, err := q.List(context.Background(), river.NewJobListParams().Kinds("charge"))
	if err != nil || len(jobs.Jobs) != 1 {
		t.Fatalf("jobs = %d, %v", len(jobs.Jobs), err)
	}
}

// TestIntentsAPIRefusesHostileBodies: trailing data after the intent, a
// body over the limit (413, not 422), bytes that are not UTF-8, and values
// beyond the limits at the edge are refused with the field named.
func TestIntentsAPIRefusesHostileBodies(t *testing.T) {
	t.Parallel()
	srv, _, _ := apiServer(t, dbtest.SQLite)
	cases := []struct {
		name, body string
		status     int
		field      string
	}{
		{"trailing data", intentBody + `{"amount":"9999"}`, 422, "body"},
		{"trailing garbage", intentBody + ` garbage`, 422, "body"},
		{"oversized body", `{"provider":"mpesa","amount":"1","currency":"KES","customer":"` + strings.Repeat("7", 70<<10) + `"}`, 413, "body"},
		{"not UTF-8", `{"provider":"mpesa","amount":"1","currency":"KES","customer":"a` + "\xff" + `"}`, 422, "body"},
		{"absurd amount", `{"provider":"mpesa","amount":"1000000000000000000000000000000","currency":"KES"}`, 422, "amount"},
		{"100000-digit amount", `{"provider":"mpesa","amount":"` + strings.Repeat("9", 100000) + `","currency":"KES"}`, 413, "body"},
		{"long amount", `{"provider":"mpesa","amount":"` + strings.Repeat("9", 60) + `","currency":"KES"}`, 422, "amount"},
		{"NUL in customer", `{"provider":"mpesa","amount":"1","currency":"KES","customer":"a\u0000b"}`, 422, "customer"},
		{"escape in metadata", `{"provider":"mpesa","amount":"1","currency":"KES","metadata":{"order":"\u001b[2J"}}`, 422, "metadata.order"},
	}
	for i, tc := range cases {
		code, body, _ := post(t, srv, fmt.Sprintf("k-hostile-%d", i), tc.body)
		if code != tc.status || !strings.Contains(body, `"field":"`+tc.field+`"`) || len(body) > 2048 {
			t.Errorf("%s: %d %s, want %d naming %s", tc.name, code, ledger.SafeText(body, 300), tc.status, tc.field)
		}
	}
}
