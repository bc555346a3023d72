package mpesafake

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Daraja paths the fake serves.
const (
	PathOAuth        = "/oauth/v1/generate"
	PathSTKPush      = "/mpesa/stkpush/v1/processrequest"
	PathSTKQuery     = "/mpesa/stkpushquery/v1/query"
	PathPullRegister = "/pulltransactions/v1/register"
	PathPullQuery    = "/pulltransactions/v1/query"
)

// Sandbox credentials, the defaults of Config.
const (
	SandboxShortCode = "174379"
	SandboxPassKey   = "bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919"
	SandboxKey       = "fake-consumer-key"
	SandboxSecret    = "fake-consumer-secret"
)

// Delivery says how a push's callback reaches the CallBackURL.
type Delivery int

// Deliveries.
const (
	DeliverOnce Delivery = iota
	DeliverTwice
	// DeliverNever loses the callback: only a query (or the pull API, or a
	// statement) can tell the outcome.
	DeliverNever
)

// Outcome is how the customer answers a prompt.
type Outcome struct {
	// ResultCode 0 pays; see the Result* constants.
	ResultCode int
	Callback   Delivery
	// WithBalance adds the valueless Balance item to a success callback.
	WithBalance bool
	// AlsoC2B also posts a C2B confirmation for a successful push (an STK
	// push to a PayBill reaches the confirmation URL too) when
	// Config.ConfirmationURL is set.
	AlsoC2B bool
}

// Push is an accepted STK push.
type Push struct {
	MerchantRequestID string
	CheckoutRequestID string
	ShortCode         string
	Phone             string
	Amount            string
	AccountReference  string
	TransactionDesc   string
	CallbackURL       string
	At                time.Time
	// Settled is true once the customer answered; Outcome and Receipt are
	// then final.
	Settled   bool
	SettledAt time.Time
	Outcome   Outcome
	Receipt   string
	// Delivered counts callback deliveries made.
	Delivered int
}

// Txn is money the fake's books hold, as the pull API lists it.
type Txn struct {
	ID      string
	At      time.Time
	Amount  string
	MSISDN  string
	BillRef string
	Type    string
}

// Fault makes the next requests to a path misbehave.
type Fault struct {
	// Status and the Daraja error body to answer with (when Status != 0).
	Status       int
	ErrorCode    string
	ErrorMessage string
	RetryAfter   int
	// Drop handles the request (an STK push is accepted and recorded) and
	// then closes the connection without answering.
	Drop bool
	// Delay before answering.
	Delay time.Duration
	// Times is how many requests it affects; default 1.
	Times int
}

// Config configures the fake.
type Config struct {
	// Seed makes receipts, ids and random outcomes repeatable.
	Seed                        uint64
	ShortCode, PassKey          string
	ConsumerKey, ConsumerSecret string
	// Clock is the fake's time; time.Now when nil.
	Clock func() time.Time
	// TokenTTL is the lifetime of access tokens; default 3599 s.
	TokenTTL time.Duration
	// PageSize is the pull query page size; default 100.
	PageSize int
	// Latency delays every answer.
	Latency time.Duration
	// Decide picks the outcome of a push; default: the customer pays and
	// the callback is delivered once. rng is seeded from Seed.
	Decide func(p Push, rng *rand.Rand) Outcome
	// Deliver posts a callback body to url. Default: an HTTP POST with a
	// 10-second timeout.
	Deliver func(ctx context.Context, url string, body []byte) error
	// ConfirmationURL receives C2B confirmations (Outcome.AlsoC2B, AddC2B).
	ConfirmationURL string
	// AutoSettle, when positive, settles every accepted push and reversal
	// after this delay (the demo), and delays status results as long;
	// otherwise tests call Settle and SettleReversal, and status results
	// are posted at once.
	AutoSettle time.Duration
	// Initiator and SecurityCredential are what the Reversal and
	// Transaction Status APIs accept; default SandboxInitiator and
	// SandboxSecurityCredential. Wrong ones get result code 2001.
	Initiator, SecurityCredential string
	// DecideReversal picks the outcome of a reversal request; default: the
	// books decide and the result is delivered once. rng is seeded from
	// Seed.
	DecideReversal func(r Reversal, rng *rand.Rand) ReversalOutcome
	// StatusCallback says how often a status result is posted; default
	// once. DeliverNever loses every status result.
	StatusCallback Delivery
}

// Server is a fake Daraja API.
type Server struct {
	cfg Config

	mu  sync.Mutex
	rng *rand.Rand
	// noise draws ids that depend on how often a client asks (error and
	// pull request ids), so that polling does not change outcomes or
	// receipts drawn from rng.
	noise      *rand.Rand
	seq        int
	tokens     map[string]time.Time
	pushes     map[string]*Push
	order      []string
	txns       []Txn
	faults     map[string][]Fault
	requests   map[string]int
	registered map[string]bool
	// registrations are the registrations for pulling received, in order.
	registrations []Registration
	// reversals by OriginatorConversationID, in order; reversed maps a
	// reversed payment's receipt to its reversal.
	reversals     map[string]*Reversal
	reversalOrder []string
	reversed      map[string]string
	statusQueries []*StatusQuery

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ts     *httptest.Server
}

// New returns a fake with cfg's defaults filled.
func New(cfg Config) *Server {
	if cfg.ShortCode == "" {
		cfg.ShortCode = SandboxShortCode
	}
	if cfg.PassKey == "" {
		cfg.PassKey = SandboxPassKey
	}
	if cfg.ConsumerKey == "" {
		cfg.ConsumerKey, cfg.ConsumerSecret = SandboxKey, SandboxSecret
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = 3599 * time.Second
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 100
	}
	if cfg.Initiator == "" {
		cfg.Initiator, cfg.SecurityCredential = SandboxInitiator, SandboxSecurityCredential
	}
	if cfg.Decide == nil {
		cfg.Decide = func(Push, *rand.Rand) Outcome { return Outcome{} }
	}
	if cfg.Deliver == nil {
		client := &http.Client{Timeout: 10 * time.Second}
		cfg.Deliver = func(ctx context.Context, url string, body []byte) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("callback answered HTTP %d", resp.StatusCode)
			}
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		noise:  rand.New(rand.NewPCG(cfg.Seed+1, cfg.Seed^0x632be59bd9b4e019)),
		tokens: map[string]time.Time{}, pushes: map[string]*Push{}, faults: map[string][]Fault{},
		requests: map[string]int{}, registered: map[string]bool{}, reversals: map[string]*Reversal{},
		reversed: map[string]string{}, ctx: ctx, cancel: cancel}
}

// Start serves the fake on a local port and returns its base URL.
func (s *Server) Start() string {
	s.ts = httptest.NewServer(s)
	return s.ts.URL
}

// Close stops the server and waits for callbacks in flight.
func (s *Server) Close() {
	s.cancel()
	if s.ts != nil {
		s.ts.Close()
	}
	s.wg.Wait()
}

// InitiatorCredentials returns the initiator name and security credential
// the fake accepts.
func (s *Server) InitiatorCredentials() (initiator, securityCredential string) {
	return s.cfg.Initiator, s.cfg.SecurityCredential
}

// Credentials returns the short code, pass key, consumer key and secret the
// fake accepts.
func (s *Server) Credentials() (shortCode, passKey, key, secret string) {
	return s.cfg.ShortCode, s.cfg.PassKey, s.cfg.ConsumerKey, s.cfg.ConsumerSecret
}

// Inject queues a fault for the next requests to path.
func (s *Server) Inject(path string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times <= 0 {
		f.Times = 1
	}
	s.faults[path] = append(s.faults[path], f)
}

// Requests counts the requests made to path.
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// Pushes returns the accepted pushes in order.
func (s *Server) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Push, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, *s.pushes[id])
	}
	return out
}

// Txns returns the money the fake's books hold, in time order.
func (s *Server) Txns() []Txn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.txns)
}

func (s *Server) nextFault(path string) (Fault, bool) {
	q := s.faults[path]
	if len(q) == 0 {
		return Fault{}, false
	}
	f := q[0]
	f.Times--
	if f.Times <= 0 {
		s.faults[path] = q[1:]
	} else {
		q[0] = f
	}
	return f, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) requestID() string {
	s.seq++
	return fmt.Sprintf("%d-%d-%d", 10000+s.noise.IntN(90000), 10000000+s.noise.IntN(90000000), s.seq)
}

func (s *Server) darajaError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"requestId": s.requestID(), "errorCode": code, "errorMessage": msg})
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Latency > 0 {
		select {
		case <-time.After(s.cfg.Latency):
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	s.requests[r.URL.Path]++
	fault, faulty := s.nextFault(r.URL.Path)
	s.mu.Unlock()
	if faulty && fault.Delay > 0 {
		select {
		case <-time.After(fault.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if faulty && fault.Status != 0 {
		if fault.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(fault.RetryAfter))
		}
		s.mu.Lock()
		s.darajaError(w, fault.Status, fault.ErrorCode, fault.ErrorMessage)
		s.mu.Unlock()
		return
	}
	rec := httptest.NewRecorder()
	switch r.URL.Path {
	case PathOAuth:
		s.oauth(rec, r)
	case PathSTKPush:
		s.authorized(rec, r, s.stkPush)
	case PathSTKQuery:
		s.authorized(rec, r, s.stkQuery)
	case PathPullRegister:
		s.authorized(rec, r, s.pullRegister)
	case PathPullQuery:
		s.authorized(rec, r, s.pullQuery)
	case PathReversal:
		s.authorized(rec, r, s.reversal)
	case PathTransactionStatus:
		s.authorized(rec, r, s.transactionStatus)
	default:
		s.mu.Lock()
		s.darajaError(rec, http.StatusNotFound, "404.001.01", "Resource not found")
		s.mu.Unlock()
	}
	if faulty && fault.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (s *Server) oauth(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, secret, ok := r.BasicAuth()
	if r.Method != http.MethodGet || r.URL.Query().Get("grant_type") != "client_credentials" {
		s.darajaError(w, http.StatusBadRequest, "400.008.02", "Invalid grant type passed")
		return
	}
	if !ok || key != s.cfg.ConsumerKey || secret != s.cfg.ConsumerSecret {
		s.darajaError(w, http.StatusBadRequest, "400.008.01", "Invalid Authentication passed")
		return
	}
	tok := fmt.Sprintf("%016x%016x", s.noise.Uint64(), s.noise.Uint64())
	s.tokens[tok] = s.cfg.Clock().Add(s.cfg.TokenTTL)
	writeJSON(w, http.StatusOK, map[string]string{"access_token": tok,
		"expires_in": strconv.Itoa(int(s.cfg.TokenTTL / time.Second))})
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request, next func(http.ResponseWriter, map[string]json.RawMessage)) {
	s.mu.Lock()
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	exp, ok := s.tokens[tok]
	valid := ok && s.cfg.Clock().Before(exp)
	s.mu.Unlock()
	if !valid {
		s.mu.Lock()
		s.darajaError(w, http.StatusUnauthorized, "404.001.03", "Invalid Access Token")
		s.mu.Unlock()
		return
	}
	if r.Method != http.MethodPost {
		s.mu.Lock()
		s.darajaError(w, http.StatusMethodNotAllowed, "405.001", "Method Not Allowed")
		s.mu.Unlock()
		return
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		s.mu.Lock()
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid JSON")
		s.mu.Unlock()
		return
	}
	next(w, body)
}

// text reads a string or number field as text.
func text(body map[string]json.RawMessage, name string) string {
	raw := bytes.TrimSpace(body[name])
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	return string(raw)
}

var (
	phonePattern  = regexp.MustCompile(`^254[17]\d{8}$`)
	amountPattern = regexp.MustCompile(`^[1-9]\d*$`)
)

func (s *Server) stkPush(w http.ResponseWriter, body map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	invalid := func(field string) {
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid "+field)
	}
	ts := text(body, "Timestamp")
	switch {
	case text(body, "BusinessShortCode") != s.cfg.ShortCode:
		invalid("BusinessShortCode")
		return
	case text(body, "Password") != base64.StdEncoding.EncodeToString([]byte(s.cfg.ShortCode+s.cfg.PassKey+ts)):
		s.darajaError(w, http.StatusInternalServerError, "500.001.1001", "Wrong credentials")
		return
	case !validTimestamp(ts):
		invalid("Timestamp")
		return
	case text(body, "TransactionType") != "CustomerPayBillOnline" && text(body, "TransactionType") != "CustomerBuyGoodsOnline":
		invalid("TransactionType")
		return
	case !amountPattern.MatchString(text(body, "Amount")):
		invalid("Amount")
		return
	case !phonePattern.MatchString(text(body, "PhoneNumber")) || text(body, "PartyA") != text(body, "PhoneNumber"):
		invalid("PhoneNumber")
		return
	case !strings.HasPrefix(text(body, "CallBackURL"), "http"):
		invalid("CallBackURL")
		return
	case text(body, "AccountReference") == "" || len(text(body, "AccountReference")) > 12:
		invalid("AccountReference")
		return
	case text(body, "TransactionDesc") == "" || len(text(body, "TransactionDesc")) > 13:
		invalid("TransactionDesc")
		return
	}
	now := s.cfg.Clock()
	phone := text(body, "PhoneNumber")
	s.seq++
	p := &Push{
		MerchantRequestID: fmt.Sprintf("%04x-%04x-%04x-%x%d", s.rng.IntN(1<<16), s.rng.IntN(1<<16), s.rng.IntN(1<<16), s.rng.Uint32(), s.seq),
		CheckoutRequestID: fmt.Sprintf("ws_CO_%s%06d%s", now.In(EAT).Format("02012006150405"), s.seq, phone),
		ShortCode:         text(body, "BusinessShortCode"), Phone: phone, Amount: text(body, "Amount"),
		AccountReference: text(body, "AccountReference"), TransactionDesc: text(body, "TransactionDesc"),
		CallbackURL: text(body, "CallBackURL"), At: now,
	}
	s.pushes[p.CheckoutRequestID] = p
	s.order = append(s.order, p.CheckoutRequestID)
	writeJSON(w, http.StatusOK, map[string]string{"MerchantRequestID": p.MerchantRequestID, "CheckoutRequestID": p.CheckoutRequestID,
		"ResponseCode": "0", "ResponseDescription": "Success. Request accepted for processing",
		"CustomerMessage": "Success. Request accepted for processing"})
	if s.cfg.AutoSettle > 0 {
		id := p.CheckoutRequestID
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			select {
			case <-time.After(s.cfg.AutoSettle):
				_ = s.Settle(s.ctx, id)
			case <-s.ctx.Done():
			}
		}()
	}
}

func validTimestamp(ts string) bool {
	_, err := time.ParseInLocation("20060102150405", ts, EAT)
	return err == nil && len(ts) == 14
}

func (s *Server) stkQuery(w http.ResponseWriter, body map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := text(body, "Timestamp")
	if text(body, "BusinessShortCode") != s.cfg.ShortCode ||
		text(body, "Password") != base64.StdEncoding.EncodeToString([]byte(s.cfg.ShortCode+s.cfg.PassKey+ts)) {
		s.darajaError(w, http.StatusInternalServerError, "500.001.1001", "Wrong credentials")
		return
	}
	p, ok := s.pushes[text(body, "CheckoutRequestID")]
	if !ok {
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid CheckoutRequestID")
		return
	}
	if !p.Settled {
		s.darajaError(w, http.StatusInternalServerError, "500.001.1001", "The transaction is being processed")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"ResponseCode": "0",
		"ResponseDescription": "The service request has been accepted successsfully", "MerchantRequestID": p.MerchantRequestID,
		"CheckoutRequestID": p.CheckoutRequestID, "ResultCode": strconv.Itoa(p.Outcome.ResultCode),
		"ResultDesc": Describe(p.Outcome.ResultCode)})
}

// receipt makes an M-Pesa-like receipt number.
func (s *Server) receipt() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := []byte("S")
	for range 9 {
		b = append(b, alphabet[s.rng.IntN(len(alphabet))])
	}
	return string(b)
}

// Settle has the customer answer the push: it decides the outcome (once),
// books a payment, and delivers the callback as the outcome says. Settling
// a settled push delivers nothing more.
func (s *Server) Settle(ctx context.Context, checkoutID string) error {
	s.mu.Lock()
	p, ok := s.pushes[checkoutID]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("mpesafake: no push %s", checkoutID)
	}
	if p.Settled {
		s.mu.Unlock()
		return nil
	}
	p.Outcome = s.cfg.Decide(*p, s.rng)
	p.Settled = true
	now := s.cfg.Clock()
	p.SettledAt = now
	var c2b []byte
	if p.Outcome.ResultCode == ResultSuccess {
		p.Receipt = s.receipt()
		s.txns = append(s.txns, Txn{ID: p.Receipt, At: now, Amount: p.Amount, MSISDN: p.Phone, BillRef: p.AccountReference,
			Type: "c2b-pay-bill-debit"})
		if p.Outcome.AlsoC2B && s.cfg.ConfirmationURL != "" {
			c2b = C2BBody(C2BPayment{TransID: p.Receipt, At: now, Amount: p.Amount + ".00", ShortCode: p.ShortCode,
				BillRef: p.AccountReference, MSISDN: MaskMSISDN(p.Phone), FirstName: "CUSTOMER"})
		}
	}
	body := STKCallbackBody(STKResult{MerchantRequestID: p.MerchantRequestID, CheckoutRequestID: p.CheckoutRequestID,
		ResultCode: p.Outcome.ResultCode, Amount: p.Amount + ".00", Receipt: p.Receipt, At: now, Phone: p.Phone,
		WithBalance: p.Outcome.WithBalance})
	times := map[Delivery]int{DeliverOnce: 1, DeliverTwice: 2, DeliverNever: 0}[p.Outcome.Callback]
	url := p.CallbackURL
	s.mu.Unlock()
	for range times {
		if err := s.cfg.Deliver(ctx, url, body); err != nil {
			return fmt.Errorf("mpesafake: deliver callback of %s: %w", checkoutID, err)
		}
		s.mu.Lock()
		p.Delivered++
		s.mu.Unlock()
	}
	if c2b != nil {
		if err := s.cfg.Deliver(ctx, s.cfg.ConfirmationURL, c2b); err != nil {
			return fmt.Errorf("mpesafake: deliver C2B confirmation of %s: %w", checkoutID, err)
		}
	}
	return nil
}

// SettleAll settles every unsettled push, in order.
func (s *Server) SettleAll(ctx context.Context) error {
	s.mu.Lock()
	ids := slices.Clone(s.order)
	s.mu.Unlock()
	for _, id := range ids {
		if err := s.Settle(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// CallbackBody returns the STK callback body of a settled push.
func (s *Server) CallbackBody(checkoutID string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pushes[checkoutID]
	if !ok || !p.Settled {
		return nil, false
	}
	return STKCallbackBody(STKResult{MerchantRequestID: p.MerchantRequestID, CheckoutRequestID: p.CheckoutRequestID,
		ResultCode: p.Outcome.ResultCode, Amount: p.Amount + ".00", Receipt: p.Receipt, At: p.SettledAt, Phone: p.Phone,
		WithBalance: p.Outcome.WithBalance}), true
}

// AddC2B books a customer payment made straight to the PayBill (no push)
// and returns its confirmation body; it is delivered to ConfirmationURL
// when deliver is true. An empty TransID gets a fresh receipt.
func (s *Server) AddC2B(ctx context.Context, p C2BPayment, deliver bool) (C2BPayment, []byte, error) {
	s.mu.Lock()
	if p.TransID == "" {
		p.TransID = s.receipt()
	}
	if p.At.IsZero() {
		p.At = s.cfg.Clock()
	}
	if p.ShortCode == "" {
		p.ShortCode = s.cfg.ShortCode
	}
	s.txns = append(s.txns, Txn{ID: p.TransID, At: p.At, Amount: p.Amount, MSISDN: p.MSISDN, BillRef: p.BillRef,
		Type: "c2b-pay-bill-debit"})
	url := s.cfg.ConfirmationURL
	s.mu.Unlock()
	body := C2BBody(p)
	if deliver && url != "" {
		if err := s.cfg.Deliver(ctx, url, body); err != nil {
			return p, body, err
		}
	}
	return p, body, nil
}

// Registration is a registration for pulling as the fake received it.
type Registration struct {
	ShortCode       string
	NominatedNumber string
	CallbackURL     string
	At              time.Time
	// RefID and Status are what the fake answered: 1000 registered, 1001
	// already registered.
	RefID, Status string
}

// nominatedPattern is a Safaricom number, international or local.
var nominatedPattern = regexp.MustCompile(`^(254|0)[17]\d{8}$`)

func (s *Server) pullRegister(w http.ResponseWriter, body map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	invalid := func(field string) {
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid "+field)
	}
	code := text(body, "ShortCode")
	switch {
	case code != s.cfg.ShortCode:
		invalid("ShortCode")
		return
	case text(body, "RequestType") != "Pull":
		invalid("RequestType")
		return
	case !nominatedPattern.MatchString(text(body, "NominatedNumber")):
		invalid("NominatedNumber")
		return
	case !strings.HasPrefix(text(body, "CallBackURL"), "http"):
		invalid("CallBackURL")
		return
	}
	status, desc := "1000", "Service request successful"
	if s.registered[code] {
		status, desc = "1001", "Short code already registered"
	}
	s.registered[code] = true
	reg := Registration{ShortCode: code, NominatedNumber: text(body, "NominatedNumber"), CallbackURL: text(body, "CallBackURL"),
		At: s.cfg.Clock(), RefID: s.requestID(), Status: status}
	s.registrations = append(s.registrations, reg)
	writeJSON(w, http.StatusOK, map[string]string{"ResponseRefID": reg.RefID, "ResponseStatus": status,
		"ResponseDescription": desc})
}

// Registrations returns the registrations for pulling received, in order,
// those answered 1001 (already registered) included.
func (s *Server) Registrations() []Registration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.registrations)
}

// Unregister forgets that a short code is registered for pulling, as
// Safaricom does when a registration is withdrawn: its pull queries are
// refused with 400.002.02 Invalid ShortCode until it registers again.
func (s *Server) Unregister(shortCode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.registered, shortCode)
}

func (s *Server) pullQuery(w http.ResponseWriter, body map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if text(body, "ShortCode") != s.cfg.ShortCode || !s.registered[s.cfg.ShortCode] {
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid ShortCode")
		return
	}
	from, err1 := time.ParseInLocation("2006-01-02 15:04:05", text(body, "StartDate"), EAT)
	to, err2 := time.ParseInLocation("2006-01-02 15:04:05", text(body, "EndDate"), EAT)
	offset, err3 := strconv.Atoi(text(body, "OffSetValue"))
	switch {
	case err1 != nil:
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid StartDate")
		return
	case err2 != nil:
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid EndDate")
		return
	case err3 != nil || offset < 0:
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid OffSetValue")
		return
	case from.Before(s.cfg.Clock().Add(-48 * time.Hour)):
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - StartDate older than 48 hours")
		return
	}
	var in []Txn
	for _, t := range s.txns {
		if !t.At.Before(from) && !t.At.After(to) {
			in = append(in, t)
		}
	}
	slices.SortStableFunc(in, func(a, b Txn) int { return a.At.Compare(b.At) })
	if offset >= len(in) {
		writeJSON(w, http.StatusOK, map[string]any{"ResponseRefID": s.requestID(), "ResponseCode": "1001",
			"ResponseMessage": "No transactions found", "Transaction": "[[]]"})
		return
	}
	page := in[offset:min(len(in), offset+s.cfg.PageSize)]
	records := make([]any, len(page))
	for i, t := range page {
		records[i] = map[string]any{"transactionId": t.ID, "trxDate": t.At.UTC().Format(time.RFC3339),
			"msisdn": msisdnValue(t.MSISDN), "sender": t.MSISDN, "transactiontype": t.Type,
			"billreference": t.BillRef, "amount": json.Number(t.Amount), "organizationname": "Fake Org"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ResponseRefID": s.requestID(), "ResponseCode": "1000",
		"ResponseMessage": "Success", "Response": []any{records}})
}

// msisdnValue writes a plain number as a JSON number, as the API
// documents, and anything else (masked, hashed) as a string.
func msisdnValue(s string) any {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		return json.Number(s)
	}
	return s
}
