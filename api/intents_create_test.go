package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/queue"
)

// TestIntentsAPIRefusesWhatTheProviderWould: an M-Pesa intent of KES 1500.50
// (M-Pesa charges whole shillings) or for a phone number M-Pesa cannot
// prompt is a 422 naming the field when it is created, not a job that fails
// later in the background; nothing is stored.
func TestIntentsAPIRefusesWhatTheProviderWould(t *testing.T) {
	t.Parallel()
	store := dbtest.SQLite(t)
	ch, err := mpesa.NewCharger(mpesa.Config{BaseURL: "http://127.0.0.1:1", ShortCode: "174379", ConsumerKey: "key",
		ConsumerSecret: "secret", PassKey: "passkey", CallbackURL: "https://pay.example.com/daraja/t/stk"})
	if err != nil {
		t.Fatal(err)
	}
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"mpesa": ch}}, charge.Config{})
	q, err := queue.New(store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	mux := http.NewServeMux()
	New(Config{Token: "tok_test_123456", Store: store, Charges: svc}).Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for name, tc := range map[string]struct{ body, field, says string }{
		"cents":     {`{"provider":"mpesa","amount":"1500.50","currency":"KES","customer":"254712340845"}`, "amount", "whole number of shillings"},
		"not KES":   {`{"provider":"mpesa","amount":"15.00","currency":"USD","customer":"254712340845"}`, "currency", "M-Pesa moves only KES, not USD"},
		"bad phone": {`{"provider":"mpesa","amount":"1500","currency":"KES","customer":"12345"}`, "customer", ""},
	} {
		code, body, _ := post(t, srv, "charge:"+strings.ReplaceAll(name, " ", "-"), tc.body)
		var resp struct {
			Fields []fieldProblem `json:"fields"`
		}
		_ = json.Unmarshal([]byte(body), &resp)
		if code != http.StatusUnprocessableEntity || len(resp.Fields) != 1 || resp.Fields[0].Field != tc.field ||
			!strings.Contains(resp.Fields[0].Message, tc.says) {
			t.Errorf("%s: %d %s, want 422 naming %s", name, code, body, tc.field)
		}
		if _, err := store.GetIntent(t.Context(), "charge:"+strings.ReplaceAll(name, " ", "-")); err == nil {
			t.Errorf("%s: the refused intent was stored", name)
		}
	}
	code, body, _ := post(t, srv, "charge:order-4471", `{"provider":"mpesa","amount":"1500","currency":"KES","customer":"254712340845"}`)
	if code != http.StatusCreated || !strings.Contains(body, `"amount":"1500.00"`) {
		t.Fatalf("whole shillings: %d %s", code, body)
	}
}

// TestIntentViewSaysMessagesAndErrorsApart: what the provider said about an
// accepted or successful attempt is a message, never shown under "error";
// a failed attempt's reason is.
func TestIntentViewSaysMessagesAndErrorsApart(t *testing.T) {
	t.Parallel()
	amt, _ := money.Parse("1500.00", "KES")
	at := time.Date(2026, 3, 14, 6, 12, 0, 0, time.UTC)
	in := ledger.Intent{IntentParams: ledger.IntentParams{Key: "charge:order-4471", Provider: "mpesa", Amount: amt},
		State: ledger.StateSucceeded, CreatedAt: at, UpdatedAt: at}
	raw, err := json.Marshal(findings.ViewIntent(in, []ledger.Attempt{
		{Number: 1, Outcome: ledger.OutcomeFailed, Error: "1032: Request cancelled by user", StartedAt: at, FinishedAt: at},
		{Number: 2, Outcome: ledger.OutcomeSucceeded, Error: "The service request is processed successfully.", StartedAt: at, FinishedAt: at},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Attempts []map[string]any `json:"attempts"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || len(got.Attempts) != 2 {
		t.Fatalf("%s: %v", raw, err)
	}
	if got.Attempts[0]["error"] != "1032: Request cancelled by user" || got.Attempts[0]["message"] != nil {
		t.Errorf("failed attempt: %v", got.Attempts[0])
	}
	if got.Attempts[1]["error"] != nil || got.Attempts[1]["message"] != "The service request is processed successfully." {
		t.Errorf("successful attempt shows its provider message under error: %v", got.Attempts[1])
	}
}
