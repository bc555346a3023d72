package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// inputEngines runs fn against a hostile environment on each engine.
func inputEngines(t *testing.T, fn func(t *testing.T, e hostileEnv)) {
	t.Helper()
	for _, eng := range dbtest.EngineURLs() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newHostileEnv(t, eng.URL(t)))
		})
	}
}

// newQuarantine returns the items added since before (the list is newest
// first).
func newQuarantine(t *testing.T, e hostileEnv, before int) []ledger.QuarantineItem {
	t.Helper()
	items := e.quarantine(t)
	return items[:len(items)-before]
}

// TestJSONBodiesRefuseRepeatedKeys: every JSON body the service accepts
// refuses an object that names a key twice (case ignored), at any depth,
// with the key's path, instead of keeping the last value. The API and the
// Stripe webhook answer 400; callbacks are still acknowledged (C2B
// confirmations) and quarantined; nothing reaches the books.
func TestJSONBodiesRefuseRepeatedKeys(t *testing.T) {
	t.Parallel()
	inputEngines(t, func(t *testing.T, e hostileEnv) {
		api := func(path, key, body string) (int, string) {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer tok_test_123456")
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			return e.serve(req)
		}
		type answer struct {
			Error  string                            `json:"error"`
			Field  string                            `json:"field"`
			Fields []struct{ Field, Message string } `json:"fields"`
		}
		for _, tc := range []struct{ name, path, key, body, field string }{
			{"intent amount twice", "/v1/intents", "k-dup-1",
				`{"provider":"mpesa","amount":"10.00","currency":"KES","customer":"254712340845","amount":"99999.00"}`, "amount"},
			{"intent amount in two cases", "/v1/intents", "k-dup-2",
				`{"provider":"mpesa","amount":"10.00","currency":"KES","customer":"254712340845","Amount":"99999.00"}`, "Amount"},
			{"intent metadata key twice", "/v1/intents", "k-dup-3",
				`{"provider":"mpesa","amount":"10.00","currency":"KES","customer":"254712340845","metadata":{"order":"1","order":"2"}}`, "metadata.order"},
			{"refund amount twice", "/v1/refunds", "r-dup-1", `{"refund_of":"k-none","amount":"1.00","amount":"2.00"}`, "amount"},
			{"finding note twice", "/v1/findings/f_none/notes", "", `{"note":"a","Note":"b"}`, "Note"},
			{"finding match key twice", "/v1/findings/f_none/match", "", `{"intent_key":"a","intent_key":"b"}`, "intent_key"},
		} {
			intents, txns := e.books(t)
			code, said := api(tc.path, tc.key, tc.body)
			var got answer
			_ = json.Unmarshal([]byte(said), &got)
			field, msg := got.Field, got.Error
			if len(got.Fields) > 0 {
				field, msg = got.Fields[0].Field, got.Fields[0].Message
			}
			if code != http.StatusBadRequest || field != tc.field || !strings.Contains(msg, "duplicate key") {
				t.Errorf("%s: %d %s, want 400 naming %s as a duplicate key", tc.name, code, said, tc.field)
			}
			if i, x := e.books(t); i != intents || x != txns {
				t.Errorf("%s: the books changed", tc.name)
			}
		}

		// A signed Stripe event whose charge names its amount twice: kept
		// in the quarantine, answered 400 with the path, also when Stripe
		// delivers it again; never USD 0.01 in the books.
		event := []byte(`{"id":"evt_dup1","object":"event","api_version":"2026-03-25.dahlia","created":1732370705,"data":{"object":` +
			`{"id":"ch_dup1","object":"charge","amount":1050,"captured":true,"created":1732370704,"currency":"usd",` +
			`"metadata":{"intent_key":"charge:dup"},"payment_intent":"pi_dup1","status":"succeeded","amount":1}},` +
			`"livemode":false,"type":"charge.succeeded"}`)
		for i := range 2 {
			intents, txns := e.books(t)
			before := len(e.quarantine(t))
			req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", bytes.NewReader(event))
			req.Header.Set("Stripe-Signature", webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: event,
				Secret: hostileWhsec, Timestamp: time.Now()}).Header)
			code, said := e.serve(req)
			if code != http.StatusBadRequest || !strings.Contains(said, "data.object.amount: duplicate key") {
				t.Errorf("stripe delivery %d: %d %q", i+1, code, said)
			}
			if n, x := e.books(t); n != intents || x != txns {
				t.Errorf("stripe delivery %d: the books changed", i+1)
			}
			q := newQuarantine(t, e, before)
			switch {
			case i == 0 && (len(q) != 1 || q[0].Source != "stripe_callback" || q[0].Field != "data.object.amount"):
				t.Errorf("stripe delivery 1: quarantined %+v", q)
			case i == 1 && len(q) != 0:
				t.Errorf("stripe delivery 2 (a duplicate) quarantined again: %+v", q)
			}
		}

		// An M-Pesa confirmation naming TransAmount twice is acknowledged
		// (Safaricom must not deliver it again) and quarantined with the
		// field.
		c2b := `{"TransactionType":"Pay Bill","TransID":"SB6DUP0001","TransTime":"20240206063845","TransAmount":"10",` +
			`"BusinessShortCode":"600638","BillRefNumber":"invoice008","MSISDN":"25470****149","TransAmount":"99999"}`
		intents, txns := e.books(t)
		before := len(e.quarantine(t))
		req := httptest.NewRequest(http.MethodPost, "/daraja/"+hostileToken+"/c2b/confirmation", strings.NewReader(c2b))
		req.RemoteAddr = safaricomAddr
		if code, said := e.serve(req); code != http.StatusOK || said != `{"ResultCode":0,"ResultDesc":"Success"}` {
			t.Errorf("c2b confirmation: %d %s", code, said)
		}
		if q := newQuarantine(t, e, before); len(q) != 1 || q[0].Field != "TransAmount" || !strings.Contains(q[0].Reason, "duplicate key") {
			t.Errorf("c2b confirmation quarantined %+v", q)
		}
		if i, x := e.books(t); i != intents || x != txns {
			t.Errorf("c2b confirmation: the books changed")
		}

		// The same body in a callbacks file.
		refused, said := cliFile(t, e, []byte(strings.Replace(c2b, "SB6DUP0001", "SB6DUP0002", 1)+"\n"), "import", "callbacks", "--provider", "mpesa")
		if !refused || !strings.Contains(said, "line 1: field TransAmount: duplicate key") {
			t.Errorf("callbacks file: %v %s", refused, said)
		}
	})
}
