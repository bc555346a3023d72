package mpesa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

// The callback URLs a refunding charger registers.
const (
	reversalResultURL  = "https://pay.example.com/daraja/tok/reversal/result"
	reversalTimeoutURL = "https://pay.example.com/daraja/tok/reversal/timeout"
	statusResultURL    = "https://pay.example.com/daraja/tok/status/result"
	statusTimeoutURL   = "https://pay.example.com/daraja/tok/status/timeout"
)

// endpointKind is the kind the handler gives a body posted to url.
var endpointKind = map[string]string{reversalResultURL: KindReversal, reversalTimeoutURL: KindReversalTimeout,
	statusResultURL: KindTransactionStatus, statusTimeoutURL: KindTransactionStatusTimeout}

// posted is one callback the fake delivered.
type posted struct {
	url  string
	body []byte
}

// sentBodies records what the charger sends, per path.
type sentBodies struct {
	mu     sync.Mutex
	bodies map[string][][]byte
	next   http.RoundTripper
}

func (s *sentBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.bodies[req.URL.Path] = append(s.bodies[req.URL.Path], b)
		s.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	return s.next.RoundTrip(req)
}

func (s *sentBodies) last(path string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.bodies[path]); n > 0 {
		return s.bodies[path][n-1]
	}
	return nil
}

type refundBundle struct {
	fake     *mpesafake.Server
	charger  *Charger
	clock    *fakeClock
	sent     *sentBodies
	callback chan posted
	secret   string
}

// setupRefunder starts a fake Daraja whose callbacks land in the bundle's
// channel, and a charger configured for refunds.
func setupRefunder(t *testing.T, decide func(mpesafake.Reversal, *rand.Rand) mpesafake.ReversalOutcome, statusDelivery mpesafake.Delivery) refundBundle {
	t.Helper()
	clock := &fakeClock{now: time.Date(2024, 2, 6, 14, 52, 0, 0, time.UTC)}
	cb := make(chan posted, 32)
	const secret = "c2VjcmV0LWNyZWRlbnRpYWwtZm9yLXRlc3Rz"
	fake := mpesafake.New(mpesafake.Config{Seed: 11, Clock: clock.Now, Initiator: "apiop", SecurityCredential: secret,
		DecideReversal: decide, StatusCallback: statusDelivery,
		Deliver: func(_ context.Context, url string, body []byte) error {
			if _, ok := endpointKind[url]; !ok && url != "https://pay.example.com/daraja/tok/stk" {
				return errors.New("unexpected callback URL " + url)
			}
			cb <- posted{url: url, body: body}
			return nil
		}})
	base := fake.Start()
	t.Cleanup(fake.Close)
	short, pass, key, sec := fake.Credentials()
	sent := &sentBodies{bodies: map[string][][]byte{}, next: http.DefaultTransport}
	c, err := NewCharger(Config{BaseURL: base, ShortCode: short, ConsumerKey: key, ConsumerSecret: sec, PassKey: pass,
		CallbackURL: "https://pay.example.com/daraja/tok/stk", Clock: clock.Now,
		HTTPClient: &http.Client{Timeout: 2 * time.Second, Transport: sent},
		Initiator:  "apiop", SecurityCredential: secret,
		ReversalURLs: ResultURLs{Result: reversalResultURL, Timeout: reversalTimeoutURL},
		StatusURLs:   ResultURLs{Result: statusResultURL, Timeout: statusTimeoutURL}})
	if err != nil {
		t.Fatal(err)
	}
	return refundBundle{fake: fake, charger: c, clock: clock, sent: sent, callback: cb, secret: secret}
}

// paid books a customer payment at the fake and returns its receipt.
func (b refundBundle) paid(t *testing.T, amount string) string {
	t.Helper()
	p, _, err := b.fake.AddC2B(context.Background(), mpesafake.C2BPayment{Amount: amount, BillRef: "ORDER4471",
		MSISDN: "254712345678", FirstName: "JANE"}, false)
	if err != nil {
		t.Fatal(err)
	}
	return p.TransID
}

// drain returns the callbacks delivered so far.
func (b refundBundle) drain() []posted {
	var out []posted
	for {
		select {
		case p := <-b.callback:
			out = append(out, p)
		default:
			return out
		}
	}
}

// wait returns the next callback, waiting for asynchronous deliveries.
func (b refundBundle) wait(t *testing.T) posted {
	t.Helper()
	select {
	case p := <-b.callback:
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("no callback delivered")
	}
	return posted{}
}

func refundReq(t testing.TB, receipt, amount string) providers.RefundRequest {
	return providers.RefundRequest{RefundKey: "refund:order-4471:1", ChargeKey: "charge:order-4471", ChargeRef: "ws_CO_1",
		ChargeTxnID: receipt, Amount: kes(t, amount), Reason: "Customer paid the wrong till", Attempt: 1}
}

// parsePosted parses a delivered callback as the handler would.
func parsePosted(t *testing.T, p posted) providers.Evidence {
	t.Helper()
	ev, err := CallbackParser{}.ParseCallbackKind(endpointKind[p.url], p.body, "callback:1", received)
	if err != nil {
		t.Fatalf("%s: %v\n%s", p.url, err, p.body)
	}
	return ev
}

// redacted returns a request body with the security credential replaced,
// indented for a golden file.
func (b refundBundle) redacted(t *testing.T, body []byte) string {
	t.Helper()
	if !bytes.Contains(body, []byte(`"SecurityCredential":"`+b.secret+`"`)) {
		t.Fatalf("body does not carry the configured credential: %s", body)
	}
	body = bytes.ReplaceAll(body, []byte(b.secret), []byte("<redacted>"))
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.String() + "\n"
}

// TestRefundRequestGolden: the Reversal and Transaction Status request
// bodies, byte for byte in wire order, with the credential redacted.
func TestRefundRequestGolden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRefunder(t, nil, mpesafake.DeliverOnce)
	receipt := b.paid(t, "1500.00")
	res, err := b.charger.Refund(ctx, refundReq(t, strings.ToLower(receipt), "1500"))
	if err != nil {
		t.Fatal(err)
	}
	body := b.sent.last(mpesafake.PathReversal)
	golden.Assert(t, "testdata/golden/reversal_request.golden", strings.ReplaceAll(b.redacted(t, body), receipt, "<receipt>"))
	if _, err := b.charger.QueryRefundStatus(ctx, refundReq(t, receipt, "1500"), res.ProviderRef); err != nil {
		t.Fatal(err)
	}
	body = b.sent.last(mpesafake.PathTransactionStatus)
	golden.Assert(t, "testdata/golden/status_request.golden", strings.NewReplacer(receipt, "<receipt>", res.ProviderRef, "<reversal>").Replace(b.redacted(t, body)))
}

// TestRefundRefusedBeforeSending: a refund that can never be valid fails as
// Permanent naming the field, and missing configuration as Retryable;
// neither sends anything, and no error reveals the credential.
func TestRefundRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRefunder(t, nil, mpesafake.DeliverOnce)
	usd := refundReq(t, "SB62A1SVRK", "10")
	usd.Amount.Currency = "USD"
	cases := []struct {
		name  string
		req   providers.RefundRequest
		field string
	}{
		{"cents", refundReq(t, "SB62A1SVRK", "10.50"), "amount"},
		{"zero", refundReq(t, "SB62A1SVRK", "0"), "amount"},
		{"not shillings", usd, "amount"},
		{"not a receipt", refundReq(t, "ws_CO_1234", "10"), "charge_txn_id"},
		{"placeholder receipt", refundReq(t, "SKE0000000", "10"), "charge_txn_id"},
	}
	for _, tc := range cases {
		_, err := b.charger.Refund(ctx, tc.req)
		var fe *ledger.FieldError
		if providers.KindOf(err) != providers.Permanent || !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a permanent error naming %s", tc.name, err, tc.field)
		}
		if err := b.charger.CheckRefund(tc.req); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: CheckRefund = %v", tc.name, err)
		}
	}
	// A receipt the books do not hold yet is not the request's fault: the
	// job tries again once a statement or pull brings it.
	if _, err := b.charger.Refund(ctx, refundReq(t, "", "10")); providers.KindOf(err) != providers.Retryable ||
		!strings.Contains(err.Error(), "not in the books yet") {
		t.Errorf("refund without a known receipt: %v, want a retryable error", err)
	}
	if err := b.charger.CheckRefund(refundReq(t, "SB62A1SVRK", "10")); err != nil {
		t.Errorf("a good refund: %v", err)
	}
	// A charger configured for STK only cannot refund yet: nothing is sent,
	// and the job may retry once a person configures the initiator.
	cfg := b.charger.d.cfg
	cfg.SecurityCredential, cfg.StatusURLs = "", ResultURLs{}
	c, err := NewCharger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.RefundsEnabled() || !b.charger.RefundsEnabled() {
		t.Errorf("RefundsEnabled: %v unconfigured, %v configured; want false, true", c.RefundsEnabled(), b.charger.RefundsEnabled())
	}
	_, err = c.Refund(ctx, refundReq(t, "SB62A1SVRK", "10"))
	if providers.KindOf(err) != providers.Retryable || !strings.Contains(err.Error(), "SecurityCredential") {
		t.Errorf("unconfigured refund: %v", err)
	}
	_, err = c.QueryRefundStatus(ctx, refundReq(t, "SB62A1SVRK", "10"), "1a2b-3c")
	if providers.KindOf(err) != providers.Retryable || !strings.Contains(err.Error(), "result and timeout URLs") {
		t.Errorf("unconfigured status query: %v", err)
	}
	if _, err := b.charger.QueryRefundStatus(ctx, refundReq(t, "SB62A1SVRK", "10"), " "); providers.KindOf(err) != providers.Permanent {
		t.Errorf("status query without a reference: %v", err)
	}
	if n := b.fake.Requests(mpesafake.PathReversal) + b.fake.Requests(mpesafake.PathTransactionStatus); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
	if _, err := b.charger.Refund(ctx, refundReq(t, "SB62A1SVRK", "10.5")); err == nil || strings.Contains(err.Error(), b.secret) {
		t.Errorf("error %v reveals the credential", err)
	}
}

// TestRefundOutcomes: every way the fake answers a reversal reaches the
// callbacks as the verdict the refund attempt must get, named by the
// ProviderRef Refund returned.
func TestRefundOutcomes(t *testing.T) {
	t.Parallel()
	type want struct {
		status   providers.ChargeStatus
		code     string
		kind     string
		receipts bool // the success names the reversal's receipt
	}
	cases := []struct {
		name    string
		outcome mpesafake.ReversalOutcome
		receipt string // "" books a payment to reverse
		wants   []want
	}{
		{name: "success", wants: []want{{providers.StatusSucceeded, "0", KindReversal, true}}},
		{name: "success delivered twice", outcome: mpesafake.ReversalOutcome{Callback: mpesafake.DeliverTwice},
			wants: []want{{providers.StatusSucceeded, "0", KindReversal, true}, {providers.StatusSucceeded, "0", KindReversal, true}}},
		{name: "initiator lacks the role", outcome: mpesafake.ReversalOutcome{ResultCode: mpesafake.ReversalNotPermitted},
			wants: []want{{providers.StatusFailed, "21", KindReversal, false}}},
		{name: "unknown original", receipt: "SB6NOSUCH1",
			wants: []want{{providers.StatusFailed, "R000002", KindReversal, false}}},
		{name: "queue timeout, then the result", outcome: mpesafake.ReversalOutcome{TimedOut: true},
			wants: []want{{providers.StatusUnknown, "1", KindReversalTimeout, false}, {providers.StatusSucceeded, "0", KindReversal, true}}},
		{name: "queue timeout only", outcome: mpesafake.ReversalOutcome{TimedOut: true, Callback: mpesafake.DeliverNever},
			wants: []want{{providers.StatusUnknown, "1", KindReversalTimeout, false}}},
		{name: "no callback ever", outcome: mpesafake.ReversalOutcome{Callback: mpesafake.DeliverNever}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setupRefunder(t, func(mpesafake.Reversal, *rand.Rand) mpesafake.ReversalOutcome { return tc.outcome }, mpesafake.DeliverOnce)
			receipt := tc.receipt
			if receipt == "" {
				receipt = b.paid(t, "1500.00")
			}
			res, err := b.charger.Refund(ctx, refundReq(t, receipt, "1500"))
			if err != nil {
				t.Fatal(err)
			}
			revs := b.fake.Reversals()
			if len(revs) != 1 || res.Status != providers.StatusPending || res.ProviderRef != revs[0].OriginatorConversationID ||
				res.TxnID != "" || revs[0].Original != receipt || revs[0].Amount != "1500" {
				t.Fatalf("refund = %+v, fake saw %+v", res, revs)
			}
			if err := b.fake.SettleReversal(ctx, res.ProviderRef); err != nil {
				t.Fatal(err)
			}
			got := b.drain()
			if len(got) != len(tc.wants) {
				t.Fatalf("%d callbacks, want %d", len(got), len(tc.wants))
			}
			for i, w := range tc.wants {
				ev := parsePosted(t, got[i])
				if ev.Kind != w.kind || len(ev.Outcomes) != 1 {
					t.Fatalf("callback %d: %+v", i, ev)
				}
				o := ev.Outcomes[0]
				if o.ProviderRef != res.ProviderRef || o.Status != w.status || o.Code != w.code {
					t.Errorf("callback %d: verdict %+v, want %s %s for %s", i, o, w.status, w.code, res.ProviderRef)
				}
				if w.receipts {
					rev := b.fake.Reversals()[0]
					if o.TxnID != rev.Receipt || !o.Amount.Equal(kes(t, "1500")) || len(ev.Sightings) != 1 ||
						ev.Sightings[0].Txn.LinkedID != receipt || ev.Sightings[0].Txn.ProviderRef != res.ProviderRef {
						t.Errorf("callback %d: %+v", i, ev)
					}
				} else if len(ev.Sightings) != 0 {
					t.Errorf("callback %d: a verdict without money moved money: %+v", i, ev.Sightings)
				}
			}
		})
	}
}

// TestRefundTwiceRefusedByMpesa: M-Pesa refuses to reverse a payment twice
// (R000001), which is why a reversal whose outcome is unknown is asked
// about, never sent again.
func TestRefundTwiceRefusedByMpesa(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRefunder(t, nil, mpesafake.DeliverOnce)
	receipt := b.paid(t, "200.00")
	var refs []string
	for range 2 {
		res, err := b.charger.Refund(ctx, refundReq(t, receipt, "200"))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, res.ProviderRef)
	}
	if refs[0] == refs[1] {
		t.Fatalf("two requests, one reference %s", refs[0])
	}
	if err := b.fake.SettleReversals(ctx); err != nil {
		t.Fatal(err)
	}
	got := b.drain()
	if len(got) != 2 {
		t.Fatalf("%d callbacks", len(got))
	}
	first, second := parsePosted(t, got[0]).Outcomes[0], parsePosted(t, got[1]).Outcomes[0]
	if first.ProviderRef != refs[0] || first.Status != providers.StatusSucceeded ||
		second.ProviderRef != refs[1] || second.Status != providers.StatusFailed || second.Code != mpesafake.ReversalAlreadyReversed {
		t.Errorf("verdicts %+v, %+v", first, second)
	}
}

// TestRefundStatusQueryFlow: with the reversal's result lost, the status
// query is sent, answers unknown at once, and its result callback settles
// the attempt by evidence: pending while M-Pesa processes, then the
// reversal with its receipt, typed a reversal of the charge.
func TestRefundStatusQueryFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRefunder(t, func(mpesafake.Reversal, *rand.Rand) mpesafake.ReversalOutcome {
		return mpesafake.ReversalOutcome{Callback: mpesafake.DeliverNever}
	}, mpesafake.DeliverOnce)
	receipt := b.paid(t, "750.00")
	req := refundReq(t, receipt, "750")
	res, err := b.charger.Refund(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ask := func() providers.Evidence {
		t.Helper()
		q, err := b.charger.QueryRefundStatus(ctx, req, res.ProviderRef)
		if err != nil || q.Status != providers.StatusUnknown || q.ProviderRef != res.ProviderRef {
			t.Fatalf("query = %+v, %v", q, err)
		}
		p := b.wait(t)
		if p.url != statusResultURL {
			t.Fatalf("status result posted to %s", p.url)
		}
		return parsePosted(t, p)
	}
	ev := ask()
	if len(ev.Outcomes) != 1 || ev.Outcomes[0].ProviderRef != res.ProviderRef || ev.Outcomes[0].Status != providers.StatusPending {
		t.Fatalf("before M-Pesa processed it: %+v", ev)
	}
	if err := b.fake.SettleReversal(ctx, res.ProviderRef); err != nil {
		t.Fatal(err)
	}
	if got := b.drain(); len(got) != 0 {
		t.Fatalf("the result was to be lost, %d callbacks came", len(got))
	}
	ev = ask()
	rev := b.fake.Reversals()[0]
	if len(ev.Outcomes) != 1 || len(ev.Sightings) != 1 {
		t.Fatalf("after: %+v", ev)
	}
	o, tx := ev.Outcomes[0], ev.Sightings[0].Txn
	if o.ProviderRef != res.ProviderRef || o.Status != providers.StatusSucceeded || o.TxnID != rev.Receipt || !o.Amount.Equal(kes(t, "750")) {
		t.Errorf("verdict = %+v", o)
	}
	if tx.ID != rev.Receipt || tx.Type != ledger.TxnReversal || tx.LinkedID != receipt || tx.ProviderRef != res.ProviderRef {
		t.Errorf("reversal seen = %+v", tx)
	}
	qs := b.fake.StatusQueries()
	if len(qs) != 2 || qs[1].OriginalConversationID != res.ProviderRef || qs[1].TransactionID != "" {
		t.Errorf("queries = %+v", qs)
	}
	// The request names the attempt twice: OriginalConversationID for
	// M-Pesa, the Occasion for the result.
	var sent map[string]any
	if err := json.Unmarshal(b.sent.last(mpesafake.PathTransactionStatus), &sent); err != nil ||
		sent["Occasion"] != "reversal:"+res.ProviderRef+":"+receipt {
		t.Errorf("status request = %v, %v", sent, err)
	}
}

// TestRefundStatusOfFailedReversal: a status result saying the reversal
// failed fails the attempt; one saying the query itself failed (unknown
// transaction, wrong credentials) leaves it unknown.
func TestRefundStatusOfFailedReversal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRefunder(t, func(mpesafake.Reversal, *rand.Rand) mpesafake.ReversalOutcome {
		return mpesafake.ReversalOutcome{ResultCode: mpesafake.ReversalNotPermitted, Callback: mpesafake.DeliverNever}
	}, mpesafake.DeliverOnce)
	receipt := b.paid(t, "100.00")
	req := refundReq(t, receipt, "100")
	res, err := b.charger.Refund(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.fake.SettleReversal(ctx, res.ProviderRef); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref  string
		want providers.ChargeStatus
	}{{res.ProviderRef, providers.StatusFailed}, {"ffff-0000-1", providers.StatusUnknown}} {
		if _, err := b.charger.QueryRefundStatus(ctx, req, tc.ref); err != nil {
			t.Fatal(err)
		}
		ev := parsePosted(t, b.wait(t))
		if len(ev.Outcomes) != 1 || ev.Outcomes[0].ProviderRef != tc.ref || ev.Outcomes[0].Status != tc.want ||
			ev.Outcomes[0].TxnID != "" {
			t.Errorf("%s: %+v", tc.ref, ev)
		}
	}
}

// TestRefundErrorKinds: Daraja's synchronous answers are classified like the
// STK push's: refused before processing is retryable, a bad field
// permanent, anything that may have reached M-Pesa ambiguous.
func TestRefundErrorKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRefunder(t, nil, mpesafake.DeliverOnce)
	cases := []struct {
		name  string
		fault mpesafake.Fault
		want  providers.ErrorKind
	}{
		{"invalid field", mpesafake.Fault{Status: 400, ErrorCode: "400.002.02", ErrorMessage: "Bad Request - Invalid Amount"}, providers.Permanent},
		{"spike arrest", mpesafake.Fault{Status: 500, ErrorCode: "500.003.02", ErrorMessage: "Spike Arrest Violation", RetryAfter: 3}, providers.Retryable},
		{"internal error", mpesafake.Fault{Status: 500, ErrorCode: "500.003.1001", ErrorMessage: "Internal Server Error"}, providers.Ambiguous},
		{"bad gateway", mpesafake.Fault{Status: 502}, providers.Ambiguous},
		{"connection dropped after sending", mpesafake.Fault{Drop: true}, providers.Ambiguous},
	}
	for _, tc := range cases {
		for _, path := range []string{mpesafake.PathReversal, mpesafake.PathTransactionStatus} {
			b.fake.Inject(path, tc.fault)
			var err error
			if path == mpesafake.PathReversal {
				_, err = b.charger.Refund(ctx, refundReq(t, "SB62A1SVRK", "10"))
			} else {
				_, err = b.charger.QueryRefundStatus(ctx, refundReq(t, "SB62A1SVRK", "10"), "1a2b-3c")
			}
			if providers.KindOf(err) != tc.want {
				t.Errorf("%s at %s: %v (%s), want %s", tc.name, path, err, providers.KindOf(err), tc.want)
			}
		}
	}
	if _, ok := any(b.charger).(providers.KeyHonourer); ok {
		t.Error("M-Pesa honours no idempotency key, for charges or refunds")
	}
}

// TestStatusVerdictWithoutTheTransaction: a status result about our
// reversal that shows no receipt still settles a failed or pending attempt;
// a success needs the reversal itself, and one without it is refused
// (quarantined), never read as a verdict.
func TestStatusVerdictWithoutTheTransaction(t *testing.T) {
	t.Parallel()
	body := func(status string) []byte {
		return []byte(`{"Result":{"ResultType":0,"ResultCode":0,"ResultDesc":"ok","OriginatorConversationID":"q-1",` +
			`"TransactionID":"SKE0000000","ResultParameters":{"ResultParameter":[{"Key":"TransactionStatus","Value":"` + status + `"}]},` +
			`"ReferenceData":{"ReferenceItem":{"Key":"Occasion","Value":"reversal:1a2b-3c:SB62A1SVRK"}}}}`)
	}
	for status, want := range map[string]providers.ChargeStatus{"Failed": providers.StatusFailed, "Pending": providers.StatusPending} {
		ev, err := CallbackParser{}.ParseCallbackKind(KindTransactionStatus, body(status), "callback:1", received)
		if err != nil || len(ev.Sightings) != 0 || len(ev.Outcomes) != 1 || ev.Outcomes[0].ProviderRef != "1a2b-3c" ||
			ev.Outcomes[0].Status != want {
			t.Errorf("%s: %+v, %v", status, ev, err)
		}
	}
	if ev, err := (CallbackParser{}).ParseCallbackKind(KindTransactionStatus, body("Completed"), "callback:1", received); err == nil {
		t.Errorf("a success without the reversal was read: %+v", ev)
	}
}

// TestStatusVerdictNotAboutOurReversal: a status answer that names the
// charge's own receipt, or says the transaction was itself reversed, gives
// the refund attempt no verdict.
func TestStatusVerdictNotAboutOurReversal(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/callbacks/status_reversal.json")
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := (CallbackParser{}).ParseCallbackKind(KindTransactionStatus, raw, "callback:1", received); err != nil ||
		len(ev.Outcomes) != 1 || ev.Outcomes[0].Status != providers.StatusSucceeded {
		t.Fatalf("the fixture itself: %+v, %v", ev, err)
	}
	for name, body := range map[string]string{
		"the charge's receipt": strings.Replace(string(raw), `"ReceiptNo","Value":"SKE52PAWR9"`, `"ReceiptNo","Value":"SKC82PACB8"`, 1),
		"reversed":             strings.Replace(string(raw), `"TransactionStatus","Value":"Completed"`, `"TransactionStatus","Value":"Reversed"`, 1),
	} {
		ev, err := CallbackParser{}.ParseCallbackKind(KindTransactionStatus, []byte(body), "callback:1", received)
		if err != nil || len(ev.Outcomes) != 0 {
			t.Errorf("%s: %+v, %v; want no verdict", name, ev.Outcomes, err)
		}
		for _, sg := range ev.Sightings {
			if sg.Txn.Type == ledger.TxnReversal && sg.Txn.LinkedID == sg.Txn.ID {
				t.Errorf("%s: a reversal of itself: %+v", name, sg.Txn)
			}
		}
	}
}
