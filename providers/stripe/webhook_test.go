package stripe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

func readEvents(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/events/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no event fixtures: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = b
	}
	return out
}

func renderEvidence(ev providers.Evidence) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind %s\n", ev.Kind)
	b.WriteString(renderSightings(ev.Sightings))
	for _, o := range ev.Outcomes {
		fmt.Fprintf(&b, "outcome %s %s txn=%s %s code=%s reason=%q at=%s\n", o.ProviderRef, o.Status, o.TxnID, o.Amount,
			o.Code, o.Reason, o.At.Format(time.RFC3339))
	}
	return b.String()
}

func TestEventParserFixtures(t *testing.T) {
	t.Parallel()
	events := readEvents(t)
	names := make([]string, 0, len(events))
	for n := range events {
		names = append(names, n)
	}
	sort.Strings(names)
	var out strings.Builder
	for _, n := range names {
		ev, err := EventParser{}.ParseCallback(events[n], "callback:1", T0)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for _, s := range ev.Sightings {
			checkSighting(t, s)
			if s.Source.Channel != ChannelWebhook || !strings.HasPrefix(s.Source.Ref, "evt_") || !s.Source.ReceivedAt.Equal(T0) {
				t.Errorf("%s: source %s:%s at %v", n, s.Source.Channel, s.Source.Ref, s.Source.ReceivedAt)
			}
		}
		fmt.Fprintf(&out, "== %s\n%s", n, renderEvidence(ev))
	}
	golden.Assert(t, "testdata/events/events.golden", out.String())
}

// A re-delivery carries another pending_webhooks count: a different body
// but the same event, so the same sighting.
func TestEventRedeliveryIsTheSameSighting(t *testing.T) {
	t.Parallel()
	body := readEvents(t)["charge_succeeded"]
	again := bytes.Replace(body, []byte(`"pending_webhooks":1`), []byte(`"pending_webhooks":2`), 1)
	a, err := EventParser{}.ParseCallback(body, "callback:1", T0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EventParser{}.ParseCallback(again, "callback:2", T0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(body, again) || a.Sightings[0].Source.Ref != b.Sightings[0].Source.Ref {
		t.Errorf("refs %q and %q differ", a.Sightings[0].Source.Ref, b.Sightings[0].Source.Ref)
	}
}

const whsec = "whsec_test_4eC39HqLyjWDarjtT1zdp7dc"

func signed(body []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
}

type recordingReceiver struct {
	bodies [][]byte
	kinds  []string
	err    error
}

func (r *recordingReceiver) Deliver(_ context.Context, d intake.Delivery) (intake.Result, error) {
	if d.Provider != Provider {
		return intake.Result{}, fmt.Errorf("provider %q", d.Provider)
	}
	if _, ok := d.Parser.(EventParser); !ok {
		return intake.Result{}, fmt.Errorf("parser %T", d.Parser)
	}
	r.bodies, r.kinds = append(r.bodies, d.Body), append(r.kinds, d.Kind)
	return intake.Result{}, r.err
}

func TestWebhookHandlerAnswers(t *testing.T) {
	t.Parallel()
	body := readEvents(t)["charge_succeeded"]
	// The charge's amount twice: encoding/json would keep 1 (USD 0.01).
	dupAmount := bytes.Replace(body, []byte(`"amount":1050,`), []byte(`"amount":1050,"amount":1,`), 1)
	if bytes.Equal(dupAmount, body) {
		t.Fatal("the fixture has no amount to repeat")
	}
	now := time.Now()
	cases := []struct {
		name   string
		method string
		body   []byte
		header string
		recErr error
		status int
		stored bool
	}{
		{"good signature", "POST", body, signed(body, whsec, now), nil, 200, true},
		{"second secret while rolling", "POST", body, signed(body, "whsec_old", now), nil, 200, true},
		{"no signature", "POST", body, "", nil, 400, false},
		{"wrong secret", "POST", body, signed(body, "whsec_other", now), nil, 400, false},
		{"tampered body", "POST", bytes.Replace(body, []byte("1050"), []byte("9050"), 1), signed(body, whsec, now), nil, 400, false},
		{"stale signature", "POST", body, signed(body, whsec, now.Add(-10*time.Minute)), nil, 400, false},
		{"signature from the future", "POST", body, signed(body, whsec, now.Add(10*time.Minute)), nil, 400, false},
		{"a little ahead (clock skew)", "POST", body, signed(body, whsec, now.Add(time.Minute)), nil, 200, true},
		{"malformed header", "POST", body, "t=abc,v1=zz", nil, 400, false},
		{"signed but not an event", "POST", []byte(`{"object":"v2.core.event"}`), signed([]byte(`{"object":"v2.core.event"}`), whsec, now), nil, 200, true},
		{"signed, a key named twice", "POST", dupAmount, signed(dupAmount, whsec, now), nil, 400, true},
		{"not stored", "POST", body, signed(body, whsec, now), errors.New("database down"), 500, true},
		{"GET", "GET", nil, "", nil, 405, false},
		{"too large", "POST", bytes.Repeat([]byte(" "), 2<<20), "", nil, 413, false},
	}
	for _, tc := range cases {
		rec := &recordingReceiver{err: tc.recErr}
		h, err := NewWebhookHandler(WebhookConfig{Secrets: []string{whsec, "whsec_old"}, Receiver: rec,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(tc.method, "/webhooks/stripe", bytes.NewReader(tc.body))
		if tc.header != "" {
			r.Header.Set("Stripe-Signature", tc.header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("%s: HTTP %d, want %d (%s)", tc.name, w.Code, tc.status, w.Body)
		}
		if stored := len(rec.bodies) == 1; stored != tc.stored {
			t.Errorf("%s: handed to the receiver = %v, want %v", tc.name, stored, tc.stored)
		}
		if tc.stored && !bytes.Equal(rec.bodies[0], tc.body) {
			t.Errorf("%s: receiver got a different body", tc.name)
		}
		if tc.status == 400 && tc.stored && w.Body.String() != "data.object.amount: duplicate key\n" {
			t.Errorf("%s: answer %q does not name the key", tc.name, w.Body)
		}
	}
	for _, cfg := range []WebhookConfig{{Receiver: &recordingReceiver{}}, {Secrets: []string{whsec}},
		{Secrets: []string{""}, Receiver: &recordingReceiver{}}} {
		if _, err := NewWebhookHandler(cfg); err == nil {
			t.Errorf("NewWebhookHandler(%+v) accepted", cfg)
		}
	}
}

// End to end with the real intake on both engines: a delivery is stored and
// interpreted, a re-delivery adds nothing, a body that does not parse is
// quarantined and still answered 200.
func TestWebhookIntoTheBooks(t *testing.T) {
	t.Parallel()
	events := readEvents(t)
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			store := eng.New(t)
			proc := &intake.Processor{Store: store, Clock: fixedClock(T0)}
			h, err := NewWebhookHandler(WebhookConfig{Secrets: []string{whsec}, Receiver: proc})
			if err != nil {
				t.Fatal(err)
			}
			post := func(body []byte) *httptest.ResponseRecorder {
				r := httptest.NewRequest("POST", "/webhooks/stripe", bytes.NewReader(body))
				r.Header.Set("Stripe-Signature", signed(body, whsec, time.Now()))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			ctx := context.Background()
			for _, name := range []string{"charge_succeeded", "charge_refunded", "charge_refunded"} {
				if w := post(events[name]); w.Code != 200 {
					t.Fatalf("%s: HTTP %d %s", name, w.Code, w.Body)
				}
			}
			if w := post(events["charge_refunded"]); !strings.Contains(w.Body.String(), "duplicate") {
				t.Errorf("re-delivery answer %s", w.Body)
			}
			x, err := store.GetProviderTxn(ctx, Provider, "ch_3PgafuB7WZ01zgkW0x1Ax2Bb")
			if err != nil {
				t.Fatal(err)
			}
			if x.Reference != "charge:order-4471" || x.Amount.String() != "USD 10.50" || len(x.Sources) != 2 {
				t.Errorf("stored charge %+v with %d sources, want 2 (two events)", x, len(x.Sources))
			}
			re, err := store.GetProviderTxn(ctx, Provider, "re_3PgafuB7WZ01zgkW0r3Fd9Aa")
			if err != nil {
				t.Fatal(err)
			}
			if re.Type != ledger.TxnRefund || re.LinkedID != "ch_3PgafuB7WZ01zgkW0x1Ax2Bb" || len(re.Sources) != 1 {
				t.Errorf("stored refund %+v", re)
			}
			bad := []byte(`{"id":"evt_bad","object":"event","type":"charge.succeeded","created":1732370705,"data":{"object":{"id":"ch_x","object":"charge","amount":"10.50","currency":"usd","created":1732370704,"status":"succeeded"}}}`)
			if w := post(bad); w.Code != 200 {
				t.Fatalf("bad body: HTTP %d", w.Code)
			}
			q, err := store.ListQuarantine(ctx, "stripe_callback", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(q) != 1 || q[0].Field != "data.object.amount" || !bytes.Equal(q[0].Raw, bad) {
				t.Errorf("quarantine = %+v", q)
			}
			if _, err := store.GetProviderTxn(ctx, Provider, "ch_x"); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("a quarantined body added a transaction: %v", err)
			}
			// A key named twice: quarantined with its path and answered 400
			// naming it, the next delivery too (quarantined once).
			dup := bytes.Replace(bad, []byte(`"amount":"10.50"`), []byte(`"amount":1050,"currency":"usd","Amount":1`), 1)
			for i := range 2 {
				if w := post(dup); w.Code != 400 || !strings.Contains(w.Body.String(), "data.object.Amount: duplicate key") {
					t.Errorf("key twice, delivery %d: HTTP %d %s", i+1, w.Code, w.Body)
				}
			}
			q, err = store.ListQuarantine(ctx, "stripe_callback", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(q) != 2 || q[0].Field != "data.object.Amount" || !bytes.Equal(q[0].Raw, dup) {
				t.Errorf("quarantine = %+v", q)
			}
		})
	}
}

// TestEventsOfConnectedAccounts: with connected accounts configured, an
// event of one of them (its top-level account field) is that account's
// evidence, the platform's own events are the default account's, and an
// event of a connected account not listed is refused, naming the field.
func TestEventsOfConnectedAccounts(t *testing.T) {
	t.Parallel()
	body := readEvents(t)["charge_succeeded"]
	of := func(acct string) []byte {
		if acct == "" {
			return body
		}
		return bytes.Replace(body, []byte(`{`), []byte(`{"account":"`+acct+`",`), 1)
	}
	p := EventParser{Accounts: []string{"acct_1Kenya"}}
	for acct, want := range map[string]string{"": "", "acct_1Kenya": "acct_1Kenya"} {
		ev, err := p.ParseCallback(of(acct), "callback:1", T0)
		if err != nil || len(ev.Sightings) == 0 {
			t.Fatalf("event of %q: %+v, %v", acct, ev, err)
		}
		for _, s := range ev.Sightings {
			if s.Txn.Account != want {
				t.Errorf("event of %q: sighting %s in account %q, want %q", acct, s.Txn.ID, s.Txn.Account, want)
			}
		}
	}
	var perr *ledger.ParseError
	if _, err := p.ParseCallback(of("acct_1Other"), "callback:2", T0); !errors.As(err, &perr) || perr.Field != "account" {
		t.Fatalf("event of an account not listed: %v, want a parse error of field account", err)
	}
	if ev, err := (EventParser{}).ParseCallback(of("acct_1Other"), "callback:3", T0); err != nil || ev.Sightings[0].Txn.Account != "" {
		t.Fatalf("without accounts, a connected account's event: %+v, %v; want the default account's", ev, err)
	}
}

// TestWebhookOfASeparateAccount: with the real intake on both engines, an
// event verified by the signing secret of a separate account's own
// endpoint is that account's, also when it is reprocessed or replayed from
// the quarantine; one that names another account in its account field is
// quarantined under the signing account; the platform's events are placed
// by their account field as before; a secret nobody has is refused.
func TestWebhookOfASeparateAccount(t *testing.T) {
	t.Parallel()
	const ghanaSecret = "whsec_test_ghana0000000000000000"
	body := readEvents(t)["charge_succeeded"]
	// event n of account acct (its account field, none when empty), with
	// ids of its own.
	event := func(n, acct string) []byte {
		b := bytes.ReplaceAll(body, []byte("evt_3PgafuB7WZ01zgkW1s8Yc0Dd"), []byte("evt_"+n))
		b = bytes.ReplaceAll(b, []byte("ch_3PgafuB7WZ01zgkW0x1Ax2Bb"), []byte("ch_"+n))
		if acct != "" {
			b = bytes.Replace(b, []byte(`{`), []byte(`{"account":"`+acct+`",`), 1)
		}
		return b
	}
	parser := EventParser{Accounts: []string{"acct_1Kenya", "acct_1Ghana"}}
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := eng.New(t)
			proc := &intake.Processor{Store: store, Clock: fixedClock(T0)}
			h, err := NewWebhookHandler(WebhookConfig{Secrets: []string{whsec}, Receiver: proc, Parser: parser,
				Accounts: []WebhookAccount{{Account: "acct_1Ghana", Secrets: []string{"whsec_test_ghana_old", ghanaSecret}}}})
			if err != nil {
				t.Fatal(err)
			}
			post := func(body []byte, secret string) int {
				r := httptest.NewRequest("POST", "/webhooks/stripe", bytes.NewReader(body))
				r.Header.Set("Stripe-Signature", signed(body, secret, time.Now()))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w.Code
			}
			accountOf := func(id string) string {
				t.Helper()
				x, err := store.GetProviderTxn(ctx, Provider, id)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				return x.Account
			}
			for _, c := range []struct {
				n, acct, secret, want string
			}{
				{"ghana1", "", ghanaSecret, "acct_1Ghana"},
				{"ghana2", "acct_1Ghana", ghanaSecret, "acct_1Ghana"}, // naming itself is no contradiction
				{"platform1", "", whsec, ""},
				{"kenya1", "acct_1Kenya", whsec, "acct_1Kenya"},
			} {
				if code := post(event(c.n, c.acct), c.secret); code != 200 {
					t.Fatalf("%s: HTTP %d", c.n, code)
				}
				if got := accountOf("ch_" + c.n); got != c.want {
					t.Errorf("%s: in account %q, want %q", c.n, got, c.want)
				}
			}
			if code := post(event("nobody", ""), "whsec_test_nobody"); code != 400 {
				t.Errorf("a secret nobody has: HTTP %d, want 400", code)
			}
			// Signed by Ghana's endpoint, naming Kenya: a contradiction,
			// kept in quarantine under Ghana and answered 200.
			if code := post(event("both", "acct_1Kenya"), ghanaSecret); code != 200 {
				t.Fatalf("contradiction: HTTP %d", code)
			}
			if _, err := store.GetProviderTxn(ctx, Provider, "ch_both"); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("a contradicting event added a transaction: %v", err)
			}
			q, err := store.ListQuarantine(ctx, "stripe@acct_1Ghana_callback", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(q) != 1 || q[0].Field != "account" || !strings.Contains(q[0].Reason, `"acct_1Kenya" contradicts`) {
				for _, it := range q {
					t.Logf("kept: %s field %s: %s", it.Source, it.Field, it.Reason)
				}
				t.Fatalf("%d kept in quarantine under Ghana, want 1 of field account", len(q))
			}
			// A stored delivery interpreted later (the process died in
			// between) is placed by the kind it was stored with.
			if _, _, err := store.StoreCallback(ctx, ledger.Callback{Provider: Provider, Kind: intake.AccountKind("acct_1Ghana"),
				DedupeKey: "test:ghana3", Body: event("ghana3", ""), ReceivedAt: T0}); err != nil {
				t.Fatal(err)
			}
			if n, err := proc.Reprocess(ctx, Provider, parser); err != nil || n != 1 {
				t.Fatalf("reprocess: %d, %v", n, err)
			}
			if got := accountOf("ch_ghana3"); got != "acct_1Ghana" {
				t.Errorf("reprocessed: in account %q, want acct_1Ghana", got)
			}
			// A body kept under Ghana's scope is replayed into Ghana.
			kept := ledger.QuarantineItem{ID: 99, Source: "stripe@acct_1Ghana_callback", Origin: "callback:99", Raw: event("ghana4", "")}
			if _, err := proc.Replay(ctx, kept, map[string]providers.CallbackParser{Provider: parser}); err != nil {
				t.Fatal(err)
			}
			if got := accountOf("ch_ghana4"); got != "acct_1Ghana" {
				t.Errorf("replayed: in account %q, want acct_1Ghana", got)
			}
		})
	}
}

// TestWebhookAccountsConfig: the handler refuses accounts' secrets it could
// not place an event by, and serves an account's secrets without the
// platform's.
func TestWebhookAccountsConfig(t *testing.T) {
	t.Parallel()
	parser := EventParser{Accounts: []string{"acct_1Ghana", "acct_1Togo"}}
	ghana := WebhookAccount{Account: "acct_1Ghana", Secrets: []string{"whsec_ghana"}}
	for name, cfg := range map[string]WebhookConfig{
		"a secret of the platform and an account": {Secrets: []string{"whsec_ghana"}, Accounts: []WebhookAccount{ghana}},
		"a secret of two accounts":                {Accounts: []WebhookAccount{ghana, {Account: "acct_1Togo", Secrets: []string{"whsec_ghana"}}}},
		"an account not parsed":                   {Accounts: []WebhookAccount{{Account: "acct_1Mali", Secrets: []string{"whsec_mali"}}}},
		"an account without an id":                {Accounts: []WebhookAccount{{Secrets: []string{"whsec_x"}}}},
		"an empty account secret":                 {Accounts: []WebhookAccount{{Account: "acct_1Ghana", Secrets: []string{""}}}},
		"no secret at all":                        {Accounts: []WebhookAccount{{Account: "acct_1Ghana"}}},
	} {
		cfg.Parser, cfg.Receiver = parser, &recordingReceiver{}
		if _, err := NewWebhookHandler(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "whsec_") {
			t.Errorf("%s: the error shows a secret: %v", name, err)
		}
	}
	rec := &recordingReceiver{}
	h, err := NewWebhookHandler(WebhookConfig{Accounts: []WebhookAccount{ghana}, Parser: parser, Receiver: rec})
	if err != nil {
		t.Fatalf("an account's secrets alone: %v", err)
	}
	body := readEvents(t)["charge_succeeded"]
	r := httptest.NewRequest("POST", "/webhooks/stripe", bytes.NewReader(body))
	r.Header.Set("Stripe-Signature", signed(body, "whsec_ghana", time.Now()))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || len(rec.kinds) != 1 || rec.kinds[0] != intake.AccountKind("acct_1Ghana") {
		t.Errorf("HTTP %d, delivered with kinds %q", w.Code, rec.kinds)
	}
}
