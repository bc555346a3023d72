package stripefake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Test payment methods: pm_card_visa (and any other) succeeds,
// PaymentMethodDeclined and PaymentMethodInsufficientFunds are declined,
// PaymentMethodProcessing leaves the PaymentIntent processing.
const (
	PaymentMethodVisa              = "pm_card_visa"
	PaymentMethodDeclined          = "pm_card_chargeDeclined"
	PaymentMethodInsufficientFunds = "pm_card_chargeDeclinedInsufficientFunds"
	PaymentMethodProcessing        = "pm_card_processing"
)

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	mu       sync.Mutex
	clock    func() time.Time
	seq      int
	order    int
	intents  map[string]*PaymentIntent
	charges  map[string]*Charge
	refunds  map[string]*Refund
	btxns    map[string]*BalanceTxn
	disputes map[string]*Dispute
	payouts  map[string]*Payout
	idem     map[string]idemEntry
	faults   []Fault
	requests []Request
	ts       *httptest.Server
}

// PaymentIntent is a stored PaymentIntent.
type PaymentIntent struct {
	ID             string
	Amount         int64
	AmountReceived int64
	Currency       string
	Created        time.Time
	Customer       string
	Description    string
	PaymentMethod  string
	Metadata       map[string]string
	Status         string
	LatestCharge   string
	DeclineCode    string
	order          int
}

// Charge is a stored charge.
type Charge struct {
	ID             string
	Amount         int64
	AmountRefunded int64
	Currency       string
	Created        time.Time
	Status         string // succeeded, pending or failed
	Captured       bool
	PaymentIntent  string
	Customer       string
	Email          string
	Metadata       map[string]string
	BalanceTxn     string
	FailureCode    string
	// SettleAmount and SettleCurrency, when set, are what the charge
	// settled as in the balance (a charge presented in another currency),
	// at ExchangeRate.
	SettleAmount   int64
	SettleCurrency string
	ExchangeRate   string
	refunds        []string
	order          int
}

// Dispute is a stored dispute (chargeback) on a charge.
type Dispute struct {
	ID       string
	Charge   string
	Amount   int64
	Currency string
	Created  time.Time
	// Status is Stripe's: needs_response, under_review, won, lost,
	// warning_needs_response, warning_closed...
	Status string
	// BalanceTxns are the withdrawal and reinstatement, if any.
	BalanceTxns []string
	order       int
}

// Refund is a stored refund.
type Refund struct {
	ID            string
	Amount        int64
	Charge        string
	Currency      string
	Created       time.Time
	Status        string
	PaymentIntent string
	Metadata      map[string]string
	BalanceTxn    string
	order         int
}

// BalanceTxn is a stored balance transaction.
type BalanceTxn struct {
	ID       string
	Amount   int64
	Fee      int64
	Currency string
	Created  time.Time
	Type     string // charge, refund, payout, stripe_fee...
	Source   string
	Category string
	Status   string // available or pending
	// ExchangeRate is Stripe's exchange_rate, "" for null.
	ExchangeRate string
	// SourceCharge, for a source the fake does not store (the refund of a
	// partial capture), is the charge it belongs to when expanded.
	SourceCharge string
	// Payout is the automatic payout that paid it out (AddPayout sets it).
	Payout string
	order  int
}

// Request is one request the fake received.
type Request struct {
	Method         string
	Path           string
	Form           url.Values
	IdempotencyKey string
	// Account is the Stripe-Account header: the connected account the
	// request acts on, empty for the platform's own.
	Account string
	// APIKey is the key the request was made with (test keys only: the
	// fake refuses any other).
	APIKey string
	// Replayed is true when an idempotency key replayed a stored answer.
	Replayed bool
	Status   int
}

// FaultMode says how a fault misbehaves.
type FaultMode int

// Fault modes.
const (
	// DropAfter acts on the request, stores the answer under its
	// idempotency key, then closes the connection without answering.
	DropAfter FaultMode = iota
	// Answer replies with Status and an error of Code without acting.
	Answer
)

// Fault makes the next request matching Method and Path misbehave once.
type Fault struct {
	Method string
	Path   string
	Mode   FaultMode
	// Status and Code are the answer of an Answer fault (e.g. 500
	// api_error, 429 rate_limit, 409 idempotency_key_in_use).
	Status int
	Code   string
}

type idemEntry struct {
	method, path, fingerprint string
	status                    int
	body                      []byte
}

// New returns an empty fake whose objects are stamped by clock (time.Now if
// nil).
func New(clock func() time.Time) *Server {
	if clock == nil {
		clock = time.Now
	}
	return &Server{clock: clock, intents: map[string]*PaymentIntent{}, charges: map[string]*Charge{},
		refunds: map[string]*Refund{}, btxns: map[string]*BalanceTxn{}, disputes: map[string]*Dispute{},
		payouts: map[string]*Payout{}, idem: map[string]idemEntry{}}
}

// Start serves the fake on a local port and returns its base URL.
func (s *Server) Start() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts == nil {
		s.ts = httptest.NewServer(s)
	}
	return s.ts.URL
}

// Close stops a started fake.
func (s *Server) Close() {
	s.mu.Lock()
	ts := s.ts
	s.mu.Unlock()
	if ts != nil {
		ts.Close()
	}
}

// SetClock replaces the clock that stamps new objects.
func (s *Server) SetClock(clock func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = clock
}

// InjectFault queues a fault.
func (s *Server) InjectFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// ExpireIdempotencyKeys forgets every idempotency key, as Stripe does with
// keys older than 24 hours: the same key then makes a new request.
func (s *Server) ExpireIdempotencyKeys() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idem = map[string]idemEntry{}
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// PaymentIntents returns the stored PaymentIntents, oldest first.
func (s *Server) PaymentIntents() []PaymentIntent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PaymentIntent, 0, len(s.intents))
	for _, p := range s.intents {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

// Charges returns the stored charges, oldest first.
func (s *Server) Charges() []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Charge, 0, len(s.charges))
	for _, c := range s.charges {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

// Refunds returns the stored refunds, oldest first.
func (s *Server) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Refund, 0, len(s.refunds))
	for _, r := range s.refunds {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

func (s *Server) id(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s_fake%06d", prefix, s.seq)
}

func (s *Server) next() int {
	s.order++
	return s.order
}

// AddCharge stores a charge as if it had happened, with its balance
// transaction; ID, Status and Captured default to a new id, succeeded and
// true. It returns the stored charge.
func (s *Server) AddCharge(c Charge) Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.addCharge(c)
}

func (s *Server) addCharge(c Charge) *Charge {
	if c.ID == "" {
		c.ID = s.id("ch")
	}
	if c.Status == "" {
		c.Status = "succeeded"
		c.Captured = true
	}
	if c.Created.IsZero() {
		c.Created = s.clock()
	}
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	c.order = s.next()
	if c.Status == "succeeded" && c.Captured {
		amount, cur := c.settled(c.Amount)
		fee := amount * 29 / 1000
		b := &BalanceTxn{ID: s.id("txn"), Amount: amount, Fee: fee, Currency: cur, Created: c.Created,
			Type: "charge", Source: c.ID, Category: "charge", Status: "available", ExchangeRate: c.ExchangeRate, order: s.next()}
		s.btxns[b.ID] = b
		c.BalanceTxn = b.ID
	}
	cc := c
	s.charges[c.ID] = &cc
	return &cc
}

// AddRefund refunds amount of a charge (all of what is left when amount is
// 0) and returns the refund.
func (s *Server) AddRefund(chargeID string, amount int64) (Refund, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.addRefund(chargeID, amount, nil)
	if err != nil {
		return Refund{}, err
	}
	return *r, nil
}

func (s *Server) addRefund(chargeID string, amount int64, md map[string]string) (*Refund, *apiError) {
	c, ok := s.charges[chargeID]
	if !ok {
		return nil, &apiError{status: 404, typ: "invalid_request_error", code: "resource_missing", param: "charge",
			msg: "No such charge: '" + chargeID + "'"}
	}
	left := c.Amount - c.AmountRefunded
	if amount == 0 {
		amount = left
	}
	if c.Status != "succeeded" || amount <= 0 || amount > left {
		return nil, &apiError{status: 400, typ: "invalid_request_error", code: "charge_already_refunded", param: "amount",
			msg: fmt.Sprintf("Refund amount %d is more than what is left (%d) on %s.", amount, left, chargeID)}
	}
	if md == nil {
		md = map[string]string{}
	}
	r := &Refund{ID: s.id("re"), Amount: amount, Charge: c.ID, Currency: c.Currency, Created: s.clock(),
		Status: "succeeded", PaymentIntent: c.PaymentIntent, Metadata: md, order: s.next()}
	s.refunds[r.ID] = r
	c.AmountRefunded += amount
	c.refunds = append(c.refunds, r.ID)
	settled, cur := c.settled(amount)
	b := &BalanceTxn{ID: s.id("txn"), Amount: -settled, Currency: cur, Created: r.Created, Type: "refund",
		Source: r.ID, Category: "refund", Status: "available", ExchangeRate: c.ExchangeRate, order: s.next()}
	s.btxns[b.ID] = b
	r.BalanceTxn = b.ID
	return r, nil
}

// settled converts an amount of the charge's currency to what it settles
// as: the same, or in proportion to SettleAmount.
func (c *Charge) settled(amount int64) (int64, string) {
	if c.SettleCurrency == "" {
		return amount, c.Currency
	}
	return amount * c.SettleAmount / c.Amount, c.SettleCurrency
}

// DisputeSpec describes a dispute to open with AddDispute.
type DisputeSpec struct {
	// ID defaults to a new dp_ id.
	ID     string
	Charge string
	// Status is Stripe's: needs_response, under_review, won, lost,
	// warning_needs_response, warning_closed...
	Status string
	// Withdraw takes the funds (and Fee) from the balance; Reinstate gives
	// the funds back (the dispute was won).
	Withdraw, Reinstate bool
	Fee                 int64
	At                  time.Time
}

// AddDispute opens a dispute on a charge for its whole amount.
func (s *Server) AddDispute(spec DisputeSpec) (Dispute, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.charges[spec.Charge]
	if !ok {
		return Dispute{}, fmt.Errorf("no charge %s", spec.Charge)
	}
	if spec.ID == "" {
		spec.ID = s.id("dp")
	}
	at := spec.At
	d := &Dispute{ID: spec.ID, Charge: c.ID, Amount: c.Amount, Currency: c.Currency, Created: at, Status: spec.Status, order: s.next()}
	amount, cur := c.settled(c.Amount)
	if spec.Withdraw {
		b := &BalanceTxn{ID: s.id("txn"), Amount: -amount, Fee: spec.Fee, Currency: cur, Created: at.Add(time.Second), Type: "adjustment",
			Source: d.ID, Category: "dispute", Status: "available", ExchangeRate: c.ExchangeRate, order: s.next()}
		s.btxns[b.ID] = b
		d.BalanceTxns = append(d.BalanceTxns, b.ID)
	}
	if spec.Reinstate {
		b := &BalanceTxn{ID: s.id("txn"), Amount: amount, Currency: cur, Created: at.Add(time.Hour), Type: "adjustment",
			Source: d.ID, Category: "dispute_reversal", Status: "available", ExchangeRate: c.ExchangeRate, order: s.next()}
		s.btxns[b.ID] = b
		d.BalanceTxns = append(d.BalanceTxns, b.ID)
	}
	s.disputes[d.ID] = d
	return *d, nil
}

// FailRefund marks a refund failed: its money comes back to the balance
// (a refund_failure balance transaction) and to the charge.
func (s *Server) FailRefund(id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.refunds[id]
	if !ok {
		return fmt.Errorf("no refund %s", id)
	}
	c := s.charges[r.Charge]
	r.Status = "failed"
	c.AmountRefunded -= r.Amount
	settled, cur := c.settled(r.Amount)
	b := &BalanceTxn{ID: s.id("txn"), Amount: settled, Currency: cur, Created: at, Type: "payment_failure_refund",
		Source: r.ID, Category: "refund_failure", Status: "available", ExchangeRate: c.ExchangeRate, order: s.next()}
	s.btxns[b.ID] = b
	return nil
}

// AddBalanceTxn stores a balance transaction (a payout, a Stripe fee).
func (s *Server) AddBalanceTxn(b BalanceTxn) BalanceTxn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.ID == "" {
		b.ID = s.id("txn")
	}
	if b.Created.IsZero() {
		b.Created = s.clock()
	}
	if b.Status == "" {
		b.Status = "available"
	}
	if b.Category == "" {
		b.Category = b.Type
	}
	b.order = s.next()
	bb := b
	s.btxns[b.ID] = &bb
	return bb
}

// Event returns the body of a Stripe event of type typ whose data.object is
// the stored object id (a PaymentIntent, charge or refund), as Stripe would
// post it to a webhook endpoint.
func (s *Server) Event(typ, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var obj map[string]any
	switch {
	case s.intents[id] != nil:
		obj = s.intentJSON(s.intents[id])
	case s.charges[id] != nil:
		obj = s.chargeJSON(s.charges[id], true)
	case s.refunds[id] != nil:
		obj = refundJSON(s.refunds[id])
	default:
		return nil, fmt.Errorf("stripefake: no object %q", id)
	}
	ev := map[string]any{"id": s.id("evt"), "object": "event", "api_version": "2026-03-25.dahlia",
		"created": s.clock().Unix(), "type": typ, "livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil}, "data": map[string]any{"object": obj}}
	return json.Marshal(ev)
}

// apiError is an error answer in Stripe's shape.
type apiError struct {
	status                        int
	typ, code, declineCode, param string
	msg                           string
	paymentIntent                 map[string]any
	charge                        string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("stripefake: %d %s: %s", e.status, e.typ, e.msg)
}

func (e *apiError) body() []byte {
	inner := map[string]any{"type": e.typ, "message": e.msg}
	if e.code != "" {
		inner["code"] = e.code
	}
	if e.declineCode != "" {
		inner["decline_code"] = e.declineCode
	}
	if e.param != "" {
		inner["param"] = e.param
	}
	if e.paymentIntent != nil {
		inner["payment_intent"] = e.paymentIntent
	}
	if e.charge != "" {
		inner["charge"] = e.charge
	}
	b, _ := json.Marshal(map[string]any{"error": inner})
	return b
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeErr(w, &apiError{status: 400, typ: "invalid_request_error", msg: "Invalid form body: " + err.Error()})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{Method: r.Method, Path: r.URL.Path, Form: cloneValues(r.Form), IdempotencyKey: r.Header.Get("Idempotency-Key"),
		Account: r.Header.Get("Stripe-Account"), APIKey: apiKey(r)}
	defer func() { s.requests = append(s.requests, req) }()

	if !authorised(r) {
		req.Status = 401
		writeErr(w, &apiError{status: 401, typ: "invalid_request_error",
			msg: "Invalid API Key provided (the fake accepts sk_test_ and rk_test_ keys)"})
		return
	}
	fault, hasFault := s.takeFault(r)
	if hasFault && fault.Mode == Answer {
		req.Status = fault.Status
		typ := "api_error"
		if fault.Status < 500 {
			typ = "invalid_request_error"
		}
		if fault.Code == "rate_limit" {
			typ = "invalid_request_error"
		}
		writeErr(w, &apiError{status: fault.Status, typ: typ, code: fault.Code, msg: "Injected fault " + fault.Code})
		return
	}

	status, body, replayed := s.route(r, req.IdempotencyKey)
	req.Status, req.Replayed = status, replayed
	if hasFault && fault.Mode == DropAfter {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				req.Status = 0
				return
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", fmt.Sprintf("req_fake%06d", len(s.requests)+1))
	if req.IdempotencyKey != "" {
		w.Header().Set("Idempotency-Key", req.IdempotencyKey)
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// apiKey is the key a request was made with.
func apiKey(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer ")
	}
	u, _, _ := r.BasicAuth()
	return u
}

func authorised(r *http.Request) bool {
	key := apiKey(r)
	return strings.HasPrefix(key, "sk_test_") || strings.HasPrefix(key, "rk_test_")
}

func (s *Server) takeFault(r *http.Request) (Fault, bool) {
	for i, f := range s.faults {
		if f.Method == r.Method && f.Path == r.URL.Path {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			return f, true
		}
	}
	return Fault{}, false
}

func writeErr(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body())
}

// route answers one request, replaying or refusing by idempotency key for
// POSTs. It returns the status, the body and whether it was a replay.
func (s *Server) route(r *http.Request, key string) (int, []byte, bool) {
	if r.Method == http.MethodPost && key != "" {
		fp := fingerprint(r.PostForm)
		if e, ok := s.idem[key]; ok {
			if e.method != r.Method || e.path != r.URL.Path || e.fingerprint != fp {
				ae := &apiError{status: 400, typ: "idempotency_error",
					msg: "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '" + key + "' if you meant to execute a different request."}
				return ae.status, ae.body(), false
			}
			return e.status, e.body, true
		}
		status, body := s.dispatch(r)
		// Like Stripe, keep every answer of a request that reached execution
		// (declines and 500s included), but not a refused validation.
		if status != http.StatusBadRequest {
			s.idem[key] = idemEntry{method: r.Method, path: r.URL.Path, fingerprint: fp, status: status, body: body}
		}
		return status, body, false
	}
	status, body := s.dispatch(r)
	return status, body, false
}

func fingerprint(v url.Values) string {
	sum := sha256.Sum256([]byte(v.Encode()))
	return hex.EncodeToString(sum[:])
}

func (s *Server) dispatch(r *http.Request) (int, []byte) {
	p := r.URL.Path
	var (
		v   any
		err *apiError
	)
	switch {
	case r.Method == http.MethodPost && p == "/v1/payment_intents":
		v, err = s.createIntent(r.PostForm)
	case r.Method == http.MethodGet && p == "/v1/payment_intents/search":
		v, err = s.searchIntents(r.Form)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1/payment_intents/"):
		id := strings.TrimPrefix(p, "/v1/payment_intents/")
		if pi, ok := s.intents[id]; ok {
			v = s.intentJSON(pi)
		} else {
			err = missing("payment_intent", id)
		}
	case r.Method == http.MethodGet && p == "/v1/charges":
		v, err = s.listCharges(r.Form)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1/charges/"):
		id := strings.TrimPrefix(p, "/v1/charges/")
		if c, ok := s.charges[id]; ok {
			v = s.chargeJSON(c, expanded(r.Form, "refunds"))
		} else {
			err = missing("charge", id)
		}
	case r.Method == http.MethodGet && p == "/v1/refunds":
		v, err = s.listRefunds(r.Form)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1/refunds/"):
		id := strings.TrimPrefix(p, "/v1/refunds/")
		if re, ok := s.refunds[id]; ok {
			v = refundJSON(re)
		} else {
			err = missing("refund", id)
		}
	case r.Method == http.MethodPost && p == "/v1/refunds":
		v, err = s.createRefund(r.PostForm)
	case r.Method == http.MethodGet && p == "/v1/balance_transactions":
		v, err = s.listBalanceTxns(r.Form)
	case r.Method == http.MethodGet && p == "/v1/disputes":
		v, err = s.listDisputes(r.Form)
	case r.Method == http.MethodGet && p == "/v1/payouts":
		v, err = s.listPayouts(r.Form)
	default:
		err = &apiError{status: 404, typ: "invalid_request_error",
			msg: fmt.Sprintf("Unrecognized request URL (%s: %s).", r.Method, p)}
	}
	if err != nil {
		return err.status, err.body()
	}
	b, _ := json.Marshal(v)
	return http.StatusOK, b
}

func missing(kind, id string) *apiError {
	return &apiError{status: 404, typ: "invalid_request_error", code: "resource_missing", param: "id",
		msg: fmt.Sprintf("No such %s: '%s'", kind, id)}
}

func badParam(param, format string, args ...any) *apiError {
	return &apiError{status: 400, typ: "invalid_request_error", code: "parameter_invalid_integer", param: param,
		msg: fmt.Sprintf(format, args...)}
}

func metadataOf(v url.Values) map[string]string {
	md := map[string]string{}
	for k, vs := range v {
		if strings.HasPrefix(k, "metadata[") && strings.HasSuffix(k, "]") && len(vs) > 0 {
			md[k[len("metadata["):len(k)-1]] = vs[0]
		}
	}
	return md
}

func (s *Server) createIntent(v url.Values) (any, *apiError) {
	amount, err := strconv.ParseInt(v.Get("amount"), 10, 64)
	if err != nil || amount <= 0 {
		return nil, badParam("amount", "Invalid positive integer amount %q", v.Get("amount"))
	}
	cur := v.Get("currency")
	if len(cur) != 3 || strings.ToLower(cur) != cur {
		return nil, &apiError{status: 400, typ: "invalid_request_error", code: "parameter_invalid", param: "currency",
			msg: fmt.Sprintf("Invalid currency: %s", cur)}
	}
	pi := &PaymentIntent{ID: s.id("pi"), Amount: amount, Currency: cur, Created: s.clock(), Customer: v.Get("customer"),
		Description: v.Get("description"), PaymentMethod: v.Get("payment_method"), Metadata: metadataOf(v),
		Status: "requires_payment_method", order: s.next()}
	if pi.PaymentMethod != "" {
		pi.Status = "requires_confirmation"
	}
	s.intents[pi.ID] = pi
	if v.Get("confirm") != "true" || pi.PaymentMethod == "" {
		return s.intentJSON(pi), nil
	}
	switch pi.PaymentMethod {
	case PaymentMethodDeclined, PaymentMethodInsufficientFunds:
		decline := "generic_decline"
		if pi.PaymentMethod == PaymentMethodInsufficientFunds {
			decline = "insufficient_funds"
		}
		c := s.addCharge(Charge{Amount: amount, Currency: cur, Status: "failed", PaymentIntent: pi.ID,
			Customer: pi.Customer, Metadata: copyMap(pi.Metadata), FailureCode: "card_declined", Created: pi.Created})
		pi.Status, pi.LatestCharge, pi.DeclineCode = "requires_payment_method", c.ID, decline
		return nil, &apiError{status: 402, typ: "card_error", code: "card_declined", declineCode: decline,
			msg: "Your card was declined.", paymentIntent: s.intentJSON(pi), charge: c.ID}
	case PaymentMethodProcessing:
		pi.Status = "processing"
	default:
		c := s.addCharge(Charge{Amount: amount, Currency: cur, Status: "succeeded", Captured: true, PaymentIntent: pi.ID,
			Customer: pi.Customer, Email: v.Get("receipt_email"), Metadata: copyMap(pi.Metadata), Created: pi.Created})
		pi.Status, pi.LatestCharge, pi.AmountReceived = "succeeded", c.ID, amount
	}
	return s.intentJSON(pi), nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *Server) createRefund(v url.Values) (any, *apiError) {
	var amount int64
	if a := v.Get("amount"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n <= 0 {
			return nil, badParam("amount", "Invalid positive integer amount %q", a)
		}
		amount = n
	}
	chargeID := v.Get("charge")
	if chargeID == "" && v.Get("payment_intent") != "" {
		if pi, ok := s.intents[v.Get("payment_intent")]; ok {
			chargeID = pi.LatestCharge
		}
	}
	r, err := s.addRefund(chargeID, amount, metadataOf(v))
	if err != nil {
		return nil, err
	}
	return refundJSON(r), nil
}

// searchIntents supports the one query form the adapter sends:
// metadata['KEY']:'VALUE', with \' and \\ escapes.
func (s *Server) searchIntents(v url.Values) (any, *apiError) {
	key, val, ok := parseMetadataQuery(v.Get("query"))
	if !ok {
		return nil, &apiError{status: 400, typ: "invalid_request_error", code: "parameter_invalid", param: "query",
			msg: "The fake supports only queries of the form metadata['key']:'value'"}
	}
	var all []*PaymentIntent
	for _, pi := range s.intents {
		if pi.Metadata[key] == val {
			all = append(all, pi)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].order > all[j].order })
	limit, aerr := limitOf(v)
	if aerr != nil {
		return nil, aerr
	}
	start := 0
	if p := v.Get("page"); p != "" {
		b, err := base64.RawURLEncoding.DecodeString(p)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 || n > len(all) {
			return nil, &apiError{status: 400, typ: "invalid_request_error", param: "page", msg: "Invalid page token"}
		}
		start = n
	}
	end := min(start+limit, len(all))
	data := make([]any, 0, end-start)
	for _, pi := range all[start:end] {
		data = append(data, s.intentJSON(pi))
	}
	var next any
	if end < len(all) {
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	return map[string]any{"object": "search_result", "url": "/v1/payment_intents/search", "has_more": end < len(all),
		"next_page": next, "data": data}, nil
}

func parseMetadataQuery(q string) (key, val string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(q), "metadata['")
	if !found {
		return "", "", false
	}
	key, rest, found = readQuoted(rest)
	if !found || !strings.HasPrefix(rest, "]:'") {
		return "", "", false
	}
	val, rest, found = readQuoted(rest[len("]:'"):])
	return key, val, found && rest == ""
}

// readQuoted reads up to the closing quote of a '...' string whose opening
// quote was already consumed.
func readQuoted(s string) (string, string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 == len(s) {
				return "", "", false
			}
			i++
			b.WriteByte(s[i])
		case '\'':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", false
}

func limitOf(v url.Values) (int, *apiError) {
	l := v.Get("limit")
	if l == "" {
		return 10, nil
	}
	n, err := strconv.Atoi(l)
	if err != nil || n < 1 || n > 100 {
		return 0, badParam("limit", "Invalid limit %q: must be between 1 and 100", l)
	}
	return n, nil
}

// createdFilter reads created[gt|gte|lt|lte] and created=.
func createdFilter(v url.Values) (func(time.Time) bool, *apiError) { return rangeFilter(v, "created") }

// rangeFilter reads the bounds of a Unix-time parameter (created,
// arrival_date): name, name[gt], name[gte], name[lt], name[lte].
func rangeFilter(v url.Values, name string) (func(time.Time) bool, *apiError) {
	type bound struct {
		op string
		at int64
	}
	var bounds []bound
	for _, op := range []string{"gt", "gte", "lt", "lte"} {
		if s := v.Get(name + "[" + op + "]"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, badParam(name+"["+op+"]", "Invalid integer %q", s)
			}
			bounds = append(bounds, bound{op, n})
		}
	}
	if s := v.Get(name); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, badParam(name, "Invalid integer %q", s)
		}
		bounds = append(bounds, bound{"eq", n})
	}
	return func(t time.Time) bool {
		u := t.Unix()
		for _, b := range bounds {
			switch {
			case b.op == "gt" && !(u > b.at), b.op == "gte" && !(u >= b.at), b.op == "lt" && !(u < b.at),
				b.op == "lte" && !(u <= b.at), b.op == "eq" && u != b.at:
				return false
			}
		}
		return true
	}, nil
}

func expanded(v url.Values, field string) bool {
	for k, vs := range v {
		if k == "expand[]" || (strings.HasPrefix(k, "expand[") && strings.HasSuffix(k, "]")) {
			for _, e := range vs {
				if e == field || e == "data."+field {
					return true
				}
			}
		}
	}
	return false
}

type listed struct {
	id      string
	created time.Time
	order   int
	json    func() map[string]any
}

// page sorts items newest first and cuts the page after starting_after.
func page(path string, v url.Values, items []listed) (any, *apiError) {
	if v.Get("ending_before") != "" {
		return nil, &apiError{status: 400, typ: "invalid_request_error", param: "ending_before",
			msg: "The fake pages forward only (starting_after)"}
	}
	keep, aerr := createdFilter(v)
	if aerr != nil {
		return nil, aerr
	}
	limit, aerr := limitOf(v)
	if aerr != nil {
		return nil, aerr
	}
	var sel []listed
	for _, it := range items {
		if keep(it.created) {
			sel = append(sel, it)
		}
	}
	sort.Slice(sel, func(i, j int) bool {
		if !sel[i].created.Equal(sel[j].created) {
			return sel[i].created.After(sel[j].created)
		}
		return sel[i].order > sel[j].order
	})
	start := 0
	if after := v.Get("starting_after"); after != "" {
		start = -1
		for i, it := range sel {
			if it.id == after {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, &apiError{status: 400, typ: "invalid_request_error", code: "resource_missing", param: "starting_after",
				msg: fmt.Sprintf("No such object: '%s'", after)}
		}
	}
	end := min(start+limit, len(sel))
	data := make([]any, 0, end-start)
	for _, it := range sel[start:end] {
		data = append(data, it.json())
	}
	return map[string]any{"object": "list", "url": path, "has_more": end < len(sel), "data": data}, nil
}

func (s *Server) listCharges(v url.Values) (any, *apiError) {
	exp := expanded(v, "refunds")
	items := make([]listed, 0, len(s.charges))
	for _, c := range s.charges {
		items = append(items, listed{c.ID, c.Created, c.order, func() map[string]any {
			m := s.chargeJSON(c, exp)
			s.expandBalance(v, "balance_transaction", m)
			if exp && expanded(v, "refunds.data.balance_transaction") {
				for _, r := range m["refunds"].(map[string]any)["data"].([]any) {
					s.expandBalance(v, "refunds.data.balance_transaction", r.(map[string]any))
				}
			}
			return m
		}})
	}
	return page("/v1/charges", v, items)
}

// expandBalance replaces m's balance_transaction id by the object when
// the request expanded field.
func (s *Server) expandBalance(v url.Values, field string, m map[string]any) {
	id, _ := m["balance_transaction"].(string)
	if b, ok := s.btxns[id]; ok && expanded(v, field) {
		m["balance_transaction"] = balanceJSON(b)
	}
}

func (s *Server) listRefunds(v url.Values) (any, *apiError) {
	items := make([]listed, 0, len(s.refunds))
	for _, r := range s.refunds {
		if ch := v.Get("charge"); ch != "" && r.Charge != ch {
			continue
		}
		if pi := v.Get("payment_intent"); pi != "" && r.PaymentIntent != pi {
			continue
		}
		items = append(items, listed{r.ID, r.Created, r.order, func() map[string]any {
			m := refundJSON(r)
			s.expandBalance(v, "balance_transaction", m)
			return m
		}})
	}
	return page("/v1/refunds", v, items)
}

func (s *Server) listBalanceTxns(v url.Values) (any, *apiError) {
	exp := expanded(v, "source")
	items := make([]listed, 0, len(s.btxns))
	for _, b := range s.btxns {
		if po := v.Get("payout"); po != "" && b.Payout != po {
			continue
		}
		items = append(items, listed{b.ID, b.Created, b.order, func() map[string]any {
			m := balanceJSON(b)
			if exp {
				m["source"] = s.sourceJSON(b.Source)
				if b.SourceCharge != "" {
					m["source"] = map[string]any{"id": b.Source, "object": "refund", "charge": b.SourceCharge}
				}
			}
			return m
		}})
	}
	return page("/v1/balance_transactions", v, items)
}

// sourceJSON is a balance transaction's source, expanded.
func (s *Server) sourceJSON(id string) any {
	if c, ok := s.charges[id]; ok {
		return s.chargeJSON(c, false)
	}
	if r, ok := s.refunds[id]; ok {
		return refundJSON(r)
	}
	if d, ok := s.disputes[id]; ok {
		return s.disputeJSON(d, false)
	}
	if id == "" {
		return nil
	}
	return map[string]any{"id": id, "object": "payout"}
}

func (s *Server) listDisputes(v url.Values) (any, *apiError) {
	exp := expanded(v, "charge")
	items := make([]listed, 0, len(s.disputes))
	for _, d := range s.disputes {
		items = append(items, listed{d.ID, d.Created, d.order, func() map[string]any { return s.disputeJSON(d, exp) }})
	}
	return page("/v1/disputes", v, items)
}

func (s *Server) disputeJSON(d *Dispute, withCharge bool) map[string]any {
	c := s.charges[d.Charge]
	bts := make([]any, 0, len(d.BalanceTxns))
	for _, id := range d.BalanceTxns {
		bts = append(bts, balanceJSON(s.btxns[id]))
	}
	var charge any = d.Charge
	if withCharge && c != nil {
		charge = s.chargeJSON(c, false)
	}
	pi := ""
	if c != nil {
		pi = c.PaymentIntent
	}
	return map[string]any{"id": d.ID, "object": "dispute", "amount": d.Amount, "currency": d.Currency,
		"created": d.Created.Unix(), "status": d.Status, "charge": charge, "payment_intent": nullable(pi),
		"balance_transactions": bts, "metadata": map[string]any{}, "reason": "fraudulent", "livemode": false,
		"is_charge_refundable": false}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) intentJSON(pi *PaymentIntent) map[string]any {
	var lastErr any
	if pi.DeclineCode != "" {
		lastErr = map[string]any{"type": "card_error", "code": "card_declined", "decline_code": pi.DeclineCode,
			"message": "Your card was declined."}
	}
	return map[string]any{"id": pi.ID, "object": "payment_intent", "amount": pi.Amount, "amount_received": pi.AmountReceived,
		"amount_capturable": 0, "currency": pi.Currency, "created": pi.Created.Unix(), "customer": nullable(pi.Customer),
		"description": nullable(pi.Description), "latest_charge": nullable(pi.LatestCharge), "livemode": false,
		"metadata": pi.Metadata, "payment_method": nullable(pi.PaymentMethod), "status": pi.Status,
		"capture_method": "automatic", "confirmation_method": "automatic", "last_payment_error": lastErr,
		"client_secret": pi.ID + "_secret_fake"}
}

func (s *Server) chargeJSON(c *Charge, withRefunds bool) map[string]any {
	m := map[string]any{"id": c.ID, "object": "charge", "amount": c.Amount, "amount_captured": 0,
		"amount_refunded": c.AmountRefunded, "balance_transaction": nullable(c.BalanceTxn), "captured": c.Captured,
		"created": c.Created.Unix(), "currency": c.Currency, "customer": nullable(c.Customer), "livemode": false,
		"metadata": c.Metadata, "paid": c.Status == "succeeded", "payment_intent": nullable(c.PaymentIntent),
		"refunded": c.AmountRefunded == c.Amount && c.Amount > 0, "status": c.Status,
		"failure_code": nullable(c.FailureCode), "receipt_email": nullable(c.Email),
		"billing_details": map[string]any{"email": nullable(c.Email), "name": nil, "phone": nil}}
	if c.Captured {
		m["amount_captured"] = c.Amount
	}
	if withRefunds {
		data := make([]any, 0, len(c.refunds))
		for i := len(c.refunds) - 1; i >= 0; i-- {
			data = append(data, refundJSON(s.refunds[c.refunds[i]]))
		}
		m["refunds"] = map[string]any{"object": "list", "data": data, "has_more": false,
			"url": "/v1/charges/" + c.ID + "/refunds"}
	}
	return m
}

func refundJSON(r *Refund) map[string]any {
	return map[string]any{"id": r.ID, "object": "refund", "amount": r.Amount, "charge": r.Charge,
		"created": r.Created.Unix(), "currency": r.Currency, "metadata": r.Metadata,
		"payment_intent": nullable(r.PaymentIntent), "status": r.Status, "balance_transaction": nullable(r.BalanceTxn)}
}

func balanceJSON(b *BalanceTxn) map[string]any {
	return map[string]any{"id": b.ID, "object": "balance_transaction", "amount": b.Amount, "fee": b.Fee,
		"net": b.Amount - b.Fee, "currency": b.Currency, "created": b.Created.Unix(), "available_on": b.Created.Unix(),
		"type": b.Type, "status": b.Status, "source": nullable(b.Source), "reporting_category": b.Category,
		"fee_details": []any{}, "exchange_rate": rateJSON(b.ExchangeRate), "description": nil}
}

// rateJSON is an exchange rate as Stripe writes it: a JSON number, or null.
func rateJSON(r string) any {
	if r == "" {
		return nil
	}
	return json.Number(r)
}
