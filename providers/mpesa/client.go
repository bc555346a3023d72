package mpesa

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reconcilehq/reconcile/providers"
)

// Daraja base URLs.
const (
	SandboxURL    = "https://sandbox.safaricom.co.ke"
	ProductionURL = "https://api.safaricom.co.ke"
)

// Transaction types of an STK push.
const (
	PayBillOnline  = "CustomerPayBillOnline"
	BuyGoodsOnline = "CustomerBuyGoodsOnline"
)

// DefaultHTTPTimeout bounds one Daraja call.
const DefaultHTTPTimeout = 30 * time.Second

// DefaultSettlementGrace is how long M-Pesa's evidence of a payment (a
// callback, a statement line) usually takes to arrive: a reconcile run
// does not call intents younger than this missing.
const DefaultSettlementGrace = 30 * time.Minute

// Config is what talking to Daraja needs.
type Config struct {
	// BaseURL is SandboxURL, ProductionURL or a fake's URL. Required.
	BaseURL string
	// ShortCode is the PayBill or Till (head office) number: the STK
	// BusinessShortCode and the Pull API's ShortCode. Required.
	ShortCode string
	// PartyB receives the money; default ShortCode (a Till number for Buy
	// Goods).
	PartyB         string
	ConsumerKey    string
	ConsumerSecret string
	// PassKey is the Lipa Na M-Pesa Online pass key. Required for STK.
	PassKey string
	// CallbackURL is where the STK callback is posted (the handler's "stk"
	// endpoint; HandlerConfig.CallbackURL builds it). Required for STK.
	CallbackURL string
	// TransactionType is PayBillOnline (default) or BuyGoodsOnline.
	TransactionType string
	// Initiator is the API operator (initiator) name that the Reversal and
	// Transaction Status APIs act as; it needs the Org Reversals Initiator
	// role. Required for refunds.
	Initiator string
	// SecurityCredential is the initiator's password encrypted with
	// Safaricom's public certificate and base64-encoded, as the Daraja
	// portal generates it. A secret: take it from the environment, never a
	// file in the repository. Required for refunds.
	SecurityCredential string
	// ReversalURLs are where reversal results and queue timeouts are
	// posted (the handler's "reversal/result" and "reversal/timeout"
	// endpoints). Required for refunds.
	ReversalURLs ResultURLs
	// StatusURLs are where Transaction Status results and queue timeouts
	// are posted (the handler's "status/result" and "status/timeout"
	// endpoints). Required for refund status queries.
	StatusURLs ResultURLs
	// HTTPTimeout bounds one call; default 30 s. Ignored when HTTPClient
	// is set.
	HTTPTimeout time.Duration
	// HTTPClient replaces the default client.
	HTTPClient *http.Client
	// Clock gives the time of STK timestamps and token expiry; time.Now
	// when nil.
	Clock func() time.Time
}

// ResultURLs are the two URLs of an asynchronous Daraja API: ResultURL
// receives the result, QueueTimeOutURL the notice that the request timed
// out in M-Pesa's queue.
type ResultURLs struct {
	Result  string
	Timeout string
}

func (c Config) withDefaults() (Config, error) {
	if c.BaseURL == "" {
		return c, errors.New("mpesa: config: BaseURL is empty (want SandboxURL, ProductionURL or a test server)")
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.ShortCode == "" {
		return c, errors.New("mpesa: config: ShortCode is empty")
	}
	if c.ConsumerKey == "" || c.ConsumerSecret == "" {
		return c, errors.New("mpesa: config: ConsumerKey and ConsumerSecret are required")
	}
	if c.PartyB == "" {
		c.PartyB = c.ShortCode
	}
	if c.TransactionType == "" {
		c.TransactionType = PayBillOnline
	}
	if c.TransactionType != PayBillOnline && c.TransactionType != BuyGoodsOnline {
		return c, fmt.Errorf("mpesa: config: TransactionType %q (want %s or %s)", c.TransactionType, PayBillOnline, BuyGoodsOnline)
	}
	if c.HTTPTimeout <= 0 {
		c.HTTPTimeout = DefaultHTTPTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.HTTPTimeout}
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c, nil
}

// daraja is an authenticated Daraja client: it caches the OAuth token until
// shortly before it expires.
type daraja struct {
	cfg Config

	mu      sync.Mutex
	token   string
	expires time.Time
}

// errorBody is Daraja's synchronous error.
type errorBody struct {
	RequestID    string `json:"requestId"`
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
}

// reply is one Daraja answer.
type reply struct {
	status int
	body   []byte
	// sent is true once the request headers were written: the provider may
	// have acted from then on.
	sent       bool
	retryAfter time.Duration
	daraja     errorBody
}

func (e errorBody) present() bool { return e.ErrorCode != "" || e.ErrorMessage != "" }

func providerErr(kind providers.ErrorKind, code, msg string, err error) *providers.Error {
	return &providers.Error{Provider: Provider, Kind: kind, Code: code, Message: msg, Err: err}
}

// accessToken returns a cached token or fetches one. Any failure here
// happens before a payment request is sent, so it is retryable.
func (d *daraja) accessToken(ctx context.Context) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.cfg.Clock()
	if d.token != "" && now.Before(d.expires) {
		return d.token, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.cfg.BaseURL+"/oauth/v1/generate?grant_type=client_credentials", nil)
	if err != nil {
		return "", providerErr(providers.Retryable, "", "build token request", err)
	}
	req.SetBasicAuth(d.cfg.ConsumerKey, d.cfg.ConsumerSecret)
	resp, err := d.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", providerErr(providers.Retryable, "", "fetch access token", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", providerErr(providers.Retryable, "", "read access token", err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		_ = json.Unmarshal(body, &eb)
		// Refused credentials will not fix themselves, but nothing was
		// charged: retryable, so the attempt is retried (and in the end
		// discarded for a person) instead of failing the intent.
		return "", providerErr(providers.Retryable, eb.ErrorCode,
			fmt.Sprintf("access token refused: HTTP %d %s", resp.StatusCode, eb.ErrorMessage), nil)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   flex   `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		return "", providerErr(providers.Retryable, "", "access token response has no access_token", err)
	}
	ttl := time.Hour
	if secs, err := strconv.Atoi(tok.ExpiresIn.String()); err == nil && secs > 0 {
		ttl = time.Duration(secs) * time.Second
	}
	// Renew a minute early (or halfway, for short-lived tokens) so that a
	// token never expires between being read here and used.
	margin := min(time.Minute, ttl/2)
	d.token, d.expires = tok.AccessToken, now.Add(ttl-margin)
	return d.token, nil
}

func (d *daraja) dropToken(tok string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.token == tok {
		d.token = ""
	}
}

// post sends a JSON request with the bearer token. An invalid-token answer
// (404.001.03, 401) drops the cached token and tries once more: the request
// was refused before processing. The error is a transport failure; HTTP
// errors come back in the reply.
func (d *daraja) post(ctx context.Context, path string, in any) (reply, error) {
	payload, err := json.Marshal(in)
	if err != nil {
		return reply{}, providerErr(providers.Permanent, "", "encode request", err)
	}
	for try := 0; ; try++ {
		tok, err := d.accessToken(ctx)
		if err != nil {
			return reply{}, err
		}
		rep, err := d.send(ctx, path, tok, payload)
		if err != nil {
			return rep, err
		}
		if try == 0 && (rep.daraja.ErrorCode == "404.001.03" || rep.status == http.StatusUnauthorized) {
			d.dropToken(tok)
			continue
		}
		return rep, nil
	}
}

func (d *daraja) send(ctx context.Context, path, tok string, payload []byte) (reply, error) {
	var rep reply
	trace := &httptrace.ClientTrace{WroteHeaders: func() { rep.sent = true }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, d.cfg.BaseURL+path, bytes.NewReader(payload))
	if err != nil {
		return rep, providerErr(providers.Permanent, "", "build request", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := d.cfg.HTTPClient.Do(req)
	if err != nil {
		if !rep.sent {
			return rep, providerErr(providers.Retryable, "", "request not sent", err)
		}
		return rep, providerErr(providers.Ambiguous, "", "no answer after the request was sent", err)
	}
	defer resp.Body.Close()
	rep.sent = true
	rep.status = resp.StatusCode
	rep.body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return rep, providerErr(providers.Ambiguous, "", "answer cut off", err)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil && secs >= 0 {
			rep.retryAfter = time.Duration(secs) * time.Second
		}
	}
	if resp.StatusCode != http.StatusOK {
		_ = json.Unmarshal(rep.body, &rep.daraja)
	} else if bytes.Contains(rep.body, []byte(`"errorCode"`)) {
		_ = json.Unmarshal(rep.body, &rep.daraja)
	}
	return rep, nil
}

// classify turns a Daraja error answer into a provider error. Errors that
// Daraja raises before processing (invalid field, authentication, rate
// limits) certainly started nothing; a server error of unknown meaning may
// have.
func classify(rep reply, what string) *providers.Error {
	code, msg := rep.daraja.ErrorCode, rep.daraja.ErrorMessage
	if msg == "" {
		msg = fmt.Sprintf("%s: HTTP %d", what, rep.status)
	} else {
		msg = fmt.Sprintf("%s: HTTP %d: %s", what, rep.status, msg)
	}
	kind := providers.Ambiguous
	switch {
	case code == "400.002.02":
		// Invalid field: the request is wrong and will stay wrong.
		kind = providers.Permanent
	case strings.HasPrefix(code, "500.003."), rep.status == http.StatusTooManyRequests:
		// Spike arrest, quota, system busy: refused before processing.
		// 500.003.1001 (internal error) is the exception below.
		kind = providers.Retryable
		if code == "500.003.1001" {
			kind = providers.Ambiguous
		}
	case code == "500.001.1001":
		// Unable to lock subscriber / merchant or credentials problem:
		// refused before a prompt was pushed.
		kind = providers.Retryable
	case code == "404.001.03", code == "404.001.01", code == "405.001",
		strings.HasPrefix(code, "401."), strings.HasPrefix(code, "400.008."),
		rep.status == http.StatusUnauthorized, rep.status == http.StatusForbidden:
		// Authentication or routing problems: refused before processing.
		kind = providers.Retryable
	case rep.status >= 400 && rep.status < 500:
		kind = providers.Permanent
	}
	return &providers.Error{Provider: Provider, Kind: kind, Code: code, Message: msg, RetryAfter: rep.retryAfter}
}

// password is the STK password: base64(shortcode + passkey + timestamp).
func password(shortCode, passKey, timestamp string) string {
	return base64.StdEncoding.EncodeToString([]byte(shortCode + passKey + timestamp))
}
