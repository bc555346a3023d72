package mpesa

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

const testToken = "0123456789abcdef0123456789abcdef"

var t0 = time.Date(2024, 2, 6, 12, 0, 0, 0, time.UTC)

// testApplier settles intents the way the charge package does: the attempt
// that recorded the CheckoutRequestID names the intent; processing, pending
// and unknown intents move to the outcome; final ones never change.
type testApplier struct{}

func (testApplier) ApplyOutcome(ctx context.Context, tx ledger.Tx, provider string, o providers.AttemptOutcome) error {
	a, err := tx.FindAttempt(ctx, provider, o.ProviderRef)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	in, err := tx.GetIntent(ctx, a.IntentKey)
	if err != nil {
		return err
	}
	to := ledger.StateFailed
	if o.Status == providers.StatusSucceeded {
		to = ledger.StateSucceeded
	}
	if in.State.Final() {
		return nil
	}
	_, err = tx.TransitionIntent(ctx, ledger.TransitionParams{Key: in.Key, To: to, Now: o.At,
		From: []ledger.State{ledger.StatePending, ledger.StateProcessing, ledger.StateUnknown}})
	return err
}

type env struct {
	store ledger.Store
	proc  *intake.Processor
	h     *Handler
	logs  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func setupEnv(t *testing.T, newStore func(testing.TB) ledger.Store, cfg HandlerConfig) env {
	t.Helper()
	s := newStore(t)
	proc := &intake.Processor{Store: s, Applier: testApplier{}, Clock: func() time.Time { return t0 }}
	if cfg.PathToken == "" {
		cfg.PathToken = testToken
	}
	if cfg.Quarantine == nil {
		cfg.Quarantine = s
	}
	logs := &syncBuffer{}
	h, err := NewHandler(cfg, proc, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return env{store: s, proc: proc, h: h, logs: logs}
}

// post serves one request from a Safaricom address.
func (e env) post(path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.RemoteAddr = "196.201.214.200:43210"
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

func createIntent(t *testing.T, s ledger.Store, key, checkout string, state ledger.State) {
	t.Helper()
	ctx := context.Background()
	amt, _ := money.Parse("1", "KES")
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa",
		Amount: amt, Customer: "254708374149"}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: key, Owner: "worker", Lease: time.Minute, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: key, ClaimToken: in.ClaimToken, ProviderRef: checkout,
		Outcome: ledger.OutcomePending, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if state != ledger.StateProcessing {
		if _, err := s.TransitionIntent(ctx, ledger.TransitionParams{Key: key, From: []ledger.State{ledger.StateProcessing},
			To: state, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
}

func intentState(t *testing.T, s ledger.Store, key string) ledger.State {
	t.Helper()
	in, err := s.GetIntent(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return in.State
}

func txnCount(t *testing.T, s ledger.Store) int {
	t.Helper()
	n := 0
	if err := s.ListProviderTxns(context.Background(), ledger.TxnFilter{Provider: "mpesa", From: t0.AddDate(-30, 0, 0),
		To: t0.AddDate(30, 0, 0)}, func(ledger.ProviderTxn) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func eachEngine(t *testing.T, fn func(t *testing.T, newStore func(testing.TB) ledger.Store)) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, e.New)
		})
	}
}

// TestSTKCallbackSettlesIntents: the callback's CheckoutRequestID finds the
// attempt and the intent moves in the same transaction as the sighting.
func TestSTKCallbackSettlesIntents(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		e := setupEnv(t, newStore, HandlerConfig{})
		success := readFixture(t, "testdata/callbacks/stk_success.json")
		failure := readFixture(t, "testdata/callbacks/stk_failure.json")
		cases := []struct {
			name     string
			from     ledger.State
			checkout string
			body     []byte
			want     ledger.State
		}{
			{"success completes processing", ledger.StateProcessing, "ws_CO_191220191020363925", success, ledger.StateSucceeded},
			{"failure fails processing", ledger.StateProcessing, "ws_CO_21072024125243250722943992", failure, ledger.StateFailed},
		}
		for _, tc := range cases {
			createIntent(t, e.store, "charge:"+tc.name, tc.checkout, tc.from)
			rec := e.post("/daraja/"+testToken+"/stk", tc.body)
			if rec.Code != http.StatusOK || rec.Body.String() != `{"ResultCode":0,"ResultDesc":"Success"}` {
				t.Fatalf("%s: answer %d %s", tc.name, rec.Code, rec.Body)
			}
			if got := intentState(t, e.store, "charge:"+tc.name); got != tc.want {
				t.Errorf("%s: state %s, want %s", tc.name, got, tc.want)
			}
		}
		if n := txnCount(t, e.store); n != 1 {
			t.Errorf("txns = %d, want 1 (a failed prompt moves no money)", n)
		}
	})
}

func TestLateSTKSuccess(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		e := setupEnv(t, newStore, HandlerConfig{})
		body := func(checkout, receipt string) []byte {
			return []byte(`{"Body":{"stkCallback":{"MerchantRequestID":"1","CheckoutRequestID":"` + checkout + `","ResultCode":0,"ResultDesc":"ok","CallbackMetadata":{"Item":[{"Name":"Amount","Value":1.00},{"Name":"MpesaReceiptNumber","Value":"` + receipt + `"},{"Name":"TransactionDate","Value":20240206150000},{"Name":"PhoneNumber","Value":254708374149}]}}}}`)
		}
		createIntent(t, e.store, "charge:unknown", "ws_CO_UNKNOWN", ledger.StateUnknown)
		createIntent(t, e.store, "charge:failed", "ws_CO_FAILED", ledger.StateFailed)
		for _, b := range [][]byte{body("ws_CO_UNKNOWN", "SB6UNKNOWN"), body("ws_CO_FAILED", "SB6FAILED1")} {
			if rec := e.post("/daraja/"+testToken+"/stk", b); rec.Code != http.StatusOK {
				t.Fatalf("answer %d", rec.Code)
			}
		}
		if got := intentState(t, e.store, "charge:unknown"); got != ledger.StateSucceeded {
			t.Errorf("unknown intent is %s, want settled as succeeded", got)
		}
		if got := intentState(t, e.store, "charge:failed"); got != ledger.StateFailed {
			t.Errorf("failed intent is %s, want it to stay failed", got)
		}
		// The contradicting success is kept as evidence for the reconciler.
		ev, err := e.store.GetProviderTxn(ctx, "mpesa", "SB6FAILED1")
		if err != nil || ev.Status != ledger.TxnSucceeded || ev.ProviderRef != "ws_CO_FAILED" {
			t.Errorf("evidence = %+v, %v", ev, err)
		}
	})
}

// TestDuplicateAndConcurrentDeliveries: duplicates are answered like the
// first delivery and change nothing; concurrent deliveries of one callback
// make one provider transaction with one source.
func TestDuplicateAndConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		e := setupEnv(t, newStore, HandlerConfig{TrustedProxies: []string{"127.0.0.1"}})
		srv := httptest.NewServer(e.h)
		defer srv.Close()
		warm := readFixture(t, "testdata/callbacks/c2b_official.json")
		for range 2 {
			if rec := e.post("/daraja/"+testToken+"/c2b/confirmation", warm); rec.Code != http.StatusOK {
				t.Fatal(rec.Code)
			}
		}
		createIntent(t, e.store, "charge:conc", "ws_CO_191220191020363925", ledger.StateProcessing)
		body := readFixture(t, "testdata/callbacks/stk_success.json")
		var wg sync.WaitGroup
		answers := make(chan string, 24)
		for i := range 24 {
			wg.Go(func() {
				b := body
				if i%3 == 2 {
					// The same callback re-serialised: another delivery,
					// the same sighting.
					b = bytes.ReplaceAll(body, []byte("\n"), []byte(" "))
				}
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/daraja/"+testToken+"/stk", bytes.NewReader(b))
				req.Header.Set("X-Forwarded-For", "196.201.214.206")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					answers <- err.Error()
					return
				}
				defer resp.Body.Close()
				got, _ := io.ReadAll(resp.Body)
				answers <- resp.Status + " " + string(got)
			})
		}
		wg.Wait()
		close(answers)
		for a := range answers {
			if a != `200 OK {"ResultCode":0,"ResultDesc":"Success"}` {
				t.Errorf("answer %q", a)
			}
		}
		got, err := e.store.GetProviderTxn(ctx, "mpesa", "NLJ7RT61SV")
		if err != nil || len(got.Sources) != 1 {
			t.Fatalf("txn = %+v, %v", got, err)
		}
		if st := intentState(t, e.store, "charge:conc"); st != ledger.StateSucceeded {
			t.Errorf("intent %s", st)
		}
		if n := txnCount(t, e.store); n != 2 {
			t.Errorf("txns = %d, want 2", n)
		}
		left, _ := e.store.ListUnprocessedCallbacks(ctx, Provider, 10)
		if len(left) != 0 {
			t.Errorf("unprocessed callbacks: %d", len(left))
		}
	})
}

func TestHandlerRefusals(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, dbtest.SQLite, HandlerConfig{TrustedProxies: []string{"10.0.0.0/8"}, MaxBodyBytes: 1 << 20})
	body := readFixture(t, "testdata/callbacks/stk_success.json")
	serve := func(method, path, remote, xff string, b io.Reader) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, b)
		req.RemoteAddr = remote
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	ok := "/daraja/" + testToken + "/stk"
	cases := []struct {
		name, method, path, remote, xff string
		body                            io.Reader
		want                            int
	}{
		{"wrong token", "POST", "/daraja/0123456789abcdef0123456789abcdee/stk", "196.201.214.200:1", "", bytes.NewReader(body), 404},
		{"token prefix", "POST", "/daraja/0123456789abcdef/stk", "196.201.214.200:1", "", bytes.NewReader(body), 404},
		{"no token", "POST", "/daraja/stk", "196.201.214.200:1", "", bytes.NewReader(body), 404},
		{"unknown endpoint", "POST", "/daraja/" + testToken + "/other", "196.201.214.200:1", "", bytes.NewReader(body), 404},
		{"wrong token from a bad address", "POST", "/daraja/nope/stk", "203.0.113.9:1", "", bytes.NewReader(body), 404},
		{"GET", "GET", ok, "196.201.214.200:1", "", nil, 405},
		{"address not allowed", "POST", ok, "203.0.113.9:1", "", bytes.NewReader(body), 403},
		{"forwarded-for from an untrusted peer is ignored", "POST", ok, "203.0.113.9:1", "196.201.214.200", bytes.NewReader(body), 403},
		{"trusted proxy, client not allowed", "POST", ok, "10.1.2.3:1", "196.201.214.200, 203.0.113.9", bytes.NewReader(body), 403},
		{"trusted proxy, unparseable hop", "POST", ok, "10.1.2.3:1", "garbage", bytes.NewReader(body), 403},
		{"50 MB body", "POST", ok, "196.201.214.200:1", "", io.LimitReader(zeros{}, 50<<20), 413},
		{"trusted proxy chain, allowed client", "POST", ok, "10.1.2.3:1", "203.0.113.9, 196.201.214.200, 10.9.9.9", bytes.NewReader(body), 200},
		{"legacy address", "POST", ok, "196.201.212.132:1", "", bytes.NewReader(body), 200},
	}
	for _, tc := range cases {
		rec := serve(tc.method, tc.path, tc.remote, tc.xff, tc.body)
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, rec.Code, tc.want)
		}
	}
	q, err := e.store.ListQuarantine(context.Background(), "mpesa_callback", 20)
	if err != nil {
		t.Fatal(err)
	}
	var forbidden, tooBig int
	for _, it := range q {
		switch it.Field {
		case "remote_addr":
			forbidden++
			if !strings.Contains(it.Reason, "not in the allowlist") {
				t.Errorf("reason %q", it.Reason)
			}
		case "body":
			tooBig++
			if len(it.Raw) > keptRefused || !strings.Contains(it.Reason, "larger than 1048576 bytes") {
				t.Errorf("oversized item: %d bytes, %q", len(it.Raw), it.Reason)
			}
		}
	}
	if forbidden != 4 || tooBig != 1 {
		t.Errorf("quarantined %d refused-address and %d oversized bodies, want 4 and 1", forbidden, tooBig)
	}
	cbs, _ := e.store.ListUnprocessedCallbacks(context.Background(), Provider, 10)
	if n := txnCount(t, e.store); n != 1 || len(cbs) != 0 {
		t.Errorf("txns = %d, unprocessed = %d", n, len(cbs))
	}
	if logs := e.logs.String(); strings.Contains(logs, testToken) || strings.Contains(logs, "254708374149") {
		t.Errorf("logs reveal the token or a phone number:\n%s", logs)
	}
}

func TestAllowlistOff(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, dbtest.SQLite, HandlerConfig{AllowIPs: []string{}})
	req := httptest.NewRequest(http.MethodPost, "/daraja/"+testToken+"/c2b/confirmation",
		bytes.NewReader(readFixture(t, "testdata/callbacks/c2b_official.json")))
	req.RemoteAddr = "203.0.113.9:1"
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("answer %d", rec.Code)
	}
}

// TestValidationThenConfirmation: the same C2B body at the validation and
// the confirmation endpoints is two deliveries; only the confirmation moves
// money, and each gets its own acknowledgement.
func TestValidationThenConfirmation(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		e := setupEnv(t, newStore, HandlerConfig{})
		body := readFixture(t, "testdata/callbacks/c2b_official.json")
		rec := e.post("/daraja/"+testToken+"/c2b/validation", body)
		if rec.Code != 200 || rec.Body.String() != `{"ResultCode":"0","ResultDesc":"Accepted"}` {
			t.Fatalf("validation answer %d %s", rec.Code, rec.Body)
		}
		if n := txnCount(t, e.store); n != 0 {
			t.Fatalf("validation made %d txns", n)
		}
		rec = e.post("/daraja/"+testToken+"/c2b/confirmation", body)
		if rec.Code != 200 || rec.Body.String() != `{"ResultCode":0,"ResultDesc":"Success"}` {
			t.Fatalf("confirmation answer %d %s", rec.Code, rec.Body)
		}
		if n := txnCount(t, e.store); n != 1 {
			t.Fatalf("confirmation made %d txns", n)
		}
		// A bad body is stored, quarantined and still acknowledged.
		rec = e.post("/daraja/"+testToken+"/c2b/confirmation", []byte(`{"TransID":"X","TransAmount":"oops"}`))
		if rec.Code != 200 {
			t.Fatalf("bad body answer %d", rec.Code)
		}
	})
}

// TestValidationOfABodyThatCannotBeKept: a C2B validation request whose
// body is quarantined is answered with Daraja's rejection (C2B00016), on
// its first delivery and on a repeat, so that M-Pesa cancels a payment the
// books could not record; a confirmation of the same body is still
// acknowledged.
func TestValidationOfABodyThatCannotBeKept(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		e := setupEnv(t, newStore, HandlerConfig{})
		ctx := context.Background()
		for name, body := range map[string]string{
			"amount not a number": `{"TransactionType":"Pay Bill","TransID":"SB6VAL0001","TransTime":"20240206063845","TransAmount":"oops","BusinessShortCode":"600638"}`,
			"amount named twice":  `{"TransactionType":"Pay Bill","TransID":"SB6VAL0002","TransTime":"20240206063845","TransAmount":"10","BusinessShortCode":"600638","TransAmount":"99999"}`,
		} {
			before, err := e.store.ListQuarantine(ctx, "mpesa_callback", 100)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				rec := e.post("/daraja/"+testToken+"/c2b/validation", []byte(body))
				if rec.Code != 200 || rec.Body.String() != `{"ResultCode":"C2B00016","ResultDesc":"Rejected"}` {
					t.Errorf("%s, delivery %d: %d %s", name, i+1, rec.Code, rec.Body)
				}
			}
			q, err := e.store.ListQuarantine(ctx, "mpesa_callback", 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(q) != len(before)+1 {
				t.Errorf("%s: %d quarantined, want 1", name, len(q)-len(before))
			}
			rec := e.post("/daraja/"+testToken+"/c2b/confirmation", []byte(body))
			if rec.Code != 200 || rec.Body.String() != `{"ResultCode":0,"ResultDesc":"Success"}` {
				t.Errorf("%s: confirmation answered %d %s", name, rec.Code, rec.Body)
			}
		}
		if n := txnCount(t, e.store); n != 0 {
			t.Errorf("%d transactions", n)
		}
	})
}

// failingReceiver cannot store anything.
type failingReceiver struct{}

func (failingReceiver) Deliver(context.Context, intake.Delivery) (intake.Result, error) {
	return intake.Result{}, errors.New("database unavailable")
}

// brokenApplier stores but cannot interpret.
type brokenApplier struct{ broken bool }

func (b *brokenApplier) ApplyOutcome(ctx context.Context, tx ledger.Tx, p string, o providers.AttemptOutcome) error {
	if b.broken {
		return errors.New("charge package unavailable")
	}
	return testApplier{}.ApplyOutcome(ctx, tx, p, o)
}

// TestStoreFirstThenAnswer: a body that could not be stored gets a 5xx so
// Safaricom delivers it again; a stored body is acknowledged even when
// interpreting it failed, and reprocessing finishes it.
func TestStoreFirstThenAnswer(t *testing.T) {
	t.Parallel()
	h, err := NewHandler(HandlerConfig{PathToken: testToken}, failingReceiver{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/daraja/"+testToken+"/stk", strings.NewReader(`{}`))
	req.RemoteAddr = "196.201.214.200:1"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("unstored body answered %d", rec.Code)
	}

	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		e := setupEnv(t, newStore, HandlerConfig{})
		ap := &brokenApplier{broken: true}
		e.proc.Applier = ap
		createIntent(t, e.store, "charge:later", "ws_CO_191220191020363925", ledger.StateProcessing)
		rec := e.post("/daraja/"+testToken+"/stk", readFixture(t, "testdata/callbacks/stk_success.json"))
		if rec.Code != http.StatusOK {
			t.Fatalf("stored body answered %d", rec.Code)
		}
		left, err := e.store.ListUnprocessedCallbacks(ctx, Provider, 10)
		if err != nil || len(left) != 1 {
			t.Fatalf("unprocessed = %d, %v", len(left), err)
		}
		if n := txnCount(t, e.store); n != 0 {
			t.Fatalf("half-applied: %d txns", n)
		}
		ap.broken = false
		if n, err := e.proc.Reprocess(ctx, Provider, CallbackParser{}); err != nil || n != 1 {
			t.Fatalf("reprocess = %d, %v", n, err)
		}
		if st := intentState(t, e.store, "charge:later"); st != ledger.StateSucceeded || txnCount(t, e.store) != 1 {
			t.Errorf("after reprocess: intent %s", st)
		}
	})
}

func TestSlowBody(t *testing.T) {
	t.Parallel()
	e := setupEnv(t, dbtest.SQLite, HandlerConfig{ReadTimeout: 100 * time.Millisecond, AllowIPs: []string{"127.0.0.1", "::1"}})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"Body":`)) }()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/daraja/"+testToken+"/stk", pr)
	req.ContentLength = 1000
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("slow body answered %d", resp.StatusCode)
	}
}

func TestHandlerConfig(t *testing.T) {
	t.Parallel()
	bad := []HandlerConfig{
		{PathToken: "short"},
		{PathToken: "0123456789abcdef0123456789abcdef/x"},
		{PathToken: "0123456789abcdef0123456789abcdefquery"},
		{PathToken: testToken, Prefix: "/safaricom"},
		{PathToken: testToken, AllowIPs: []string{"not-an-ip"}},
		{PathToken: testToken, TrustedProxies: []string{"10.0.0.0/33"}},
	}
	for _, cfg := range bad {
		if _, err := NewHandler(cfg, failingReceiver{}, nil); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	tok, err := NewPathToken()
	if err != nil || len(tok) != 32 {
		t.Fatalf("token %q, %v", tok, err)
	}
	if _, err := NewHandler(HandlerConfig{PathToken: tok}, failingReceiver{}, nil); err != nil {
		t.Errorf("fresh token refused: %v", err)
	}
	cfg := HandlerConfig{PathToken: testToken}
	if u := cfg.CallbackURL("https://pay.example.com/", "stk"); u != "https://pay.example.com/daraja/"+testToken+"/stk" {
		t.Errorf("url = %s", u)
	}
	for _, ep := range Endpoints {
		for _, w := range forbiddenWords {
			if strings.Contains(strings.ToLower(DefaultPrefix+"/"+ep.Path), w) {
				t.Errorf("endpoint %s contains %q", ep.Path, w)
			}
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
