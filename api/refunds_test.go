package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/openapitest"
	"github.com/reconcilehq/reconcile/ledger"
)

// exerciseRefundsAPI runs against the server of TestOpenAPI after
// exerciseIntents created charge:order-5501 (USD 15.00 through Stripe,
// pending: no job runs); every response is checked against the description.
func exerciseRefundsAPI(t *testing.T, c *openapitest.Checker, base string, store ledger.Store) {
	auth := http.Header{"Authorization": {"Bearer " + testAPIToken}, "Content-Type": {"application/json"}}
	keyed := func(key string) http.Header {
		h := auth.Clone()
		h.Set("Idempotency-Key", key)
		return h
	}
	body := []byte(`{"refund_of":"charge:order-5501","amount":"5.00","metadata":{"reason":"wrong size"}}`)
	// Money that was never taken cannot be given back.
	if e := c.Do(base, http.MethodPost, "/v1/refunds", body, keyed("refund:order-5501:1")); e.Code != http.StatusUnprocessableEntity ||
		!strings.Contains(e.Body, `"field":"refund_of"`) || !strings.Contains(e.Body, "only a succeeded charge can be refunded") {
		t.Fatalf("refund of a pending charge: %d %s", e.Code, e.Body)
	}
	// The charge succeeds (as its job would make it).
	ctx := context.Background()
	if _, err := store.TransitionIntent(ctx, ledger.TransitionParams{Key: "charge:order-5501", From: []ledger.State{ledger.StatePending},
		To: ledger.StateSucceeded, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	e := c.Do(base, http.MethodPost, "/v1/refunds", body, keyed("refund:order-5501:1"))
	if e.Code != http.StatusCreated || e.ReqErr != nil {
		t.Fatalf("create refund: %d %s %v", e.Code, e.Body, e.ReqErr)
	}
	var got findings.IntentView
	if err := json.Unmarshal([]byte(e.Body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "refund" || got.RefundOf != "charge:order-5501" || got.Provider != "stripe" || got.Currency != "USD" ||
		got.Amount != "5.00" || got.State != "pending" {
		t.Fatalf("refund = %+v", got)
	}
	if e := c.Do(base, http.MethodPost, "/v1/refunds", body, keyed("refund:order-5501:1")); e.Code != http.StatusOK ||
		e.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s", e.Code, e.Body)
	}
	if e := c.Do(base, http.MethodPost, "/v1/refunds", []byte(strings.Replace(string(body), "5.00", "6.00", 1)),
		keyed("refund:order-5501:1")); e.Code != http.StatusConflict {
		t.Errorf("reuse: %d %s", e.Code, e.Body)
	}
	for name, tc := range map[string]struct {
		body, field, msg string
		schemaSays       bool
	}{
		"over-refund":     {`{"refund_of":"charge:order-5501","amount":"10.01"}`, "amount", "exceeds what remains refundable", false},
		"no charge":       {`{"refund_of":"charge:nope","amount":"1.00"}`, "refund_of", "no intent has key", false},
		"other currency":  {`{"refund_of":"charge:order-5501","amount":"1.00","currency":"EUR"}`, "currency", "differs from the charge's currency", false},
		"no refund_of":    {`{"amount":"1.00"}`, "refund_of", "is required", true},
		"no amount":       {`{"refund_of":"charge:order-5501"}`, "amount", "is required", true},
		"refund a refund": {`{"refund_of":"refund:order-5501:1","amount":"1.00"}`, "refund_of", "not a charge", false},
		"unknown field":   {`{"refund_of":"charge:order-5501","amount":"1.00","provider":"mpesa"}`, "body", "unknown field", true},
	} {
		e := c.Do(base, http.MethodPost, "/v1/refunds", []byte(tc.body), keyed("refund:"+name))
		if e.Code != http.StatusUnprocessableEntity || !strings.Contains(e.Body, `"field":"`+tc.field+`"`) || !strings.Contains(e.Body, tc.msg) {
			t.Errorf("%s: %d %s, want 422 on %s saying %q", name, e.Code, e.Body, tc.field, tc.msg)
		}
		if tc.schemaSays && e.ReqErr == nil {
			t.Errorf("%s: the description accepts a body the server refuses", name)
		}
	}
	// The rest of the charge is refundable, and no more.
	if e := c.Do(base, http.MethodPost, "/v1/refunds", []byte(`{"refund_of":"charge:order-5501","amount":"10.00","currency":"usd"}`),
		keyed("refund:order-5501:2")); e.Code != http.StatusCreated {
		t.Errorf("refund of the rest: %d %s", e.Code, e.Body)
	}
	if e := c.Do(base, http.MethodGet, "/v1/intents/refund:order-5501:2", nil, auth); e.Code != http.StatusOK ||
		!strings.Contains(e.Body, `"kind":"refund"`) || !strings.Contains(e.Body, `"refund_of":"charge:order-5501"`) {
		t.Errorf("get refund: %d %s", e.Code, e.Body)
	}
	if e := c.Do(base, http.MethodPost, "/v1/refunds", body, http.Header{"Idempotency-Key": {"k"}}); e.Code != http.StatusUnauthorized {
		t.Errorf("no token: %d", e.Code)
	}
}
