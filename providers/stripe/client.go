package stripe

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"time"

	stripeapi "github.com/stripe/stripe-go/v85"

	"github.com/reconcilehq/reconcile/ledger"
)

// Defaults of Config and of the reconcile settings of Stripe, which the
// CLI's configuration shares.
const (
	// DefaultTimeout bounds one HTTP request.
	DefaultTimeout = 30 * time.Second
	// DefaultPageSize is the number of objects per list request (Stripe's
	// largest).
	DefaultPageSize = 100
	// DefaultSettlementGrace is how long Stripe's evidence of a charge
	// (a webhook, a report line) may take to arrive: a reconcile run does
	// not call intents younger than this missing.
	DefaultSettlementGrace = 2 * time.Hour
)

// Config configures a Client. The zero values of the optional fields are
// the defaults.
type Config struct {
	// APIKey is the secret or restricted key (sk_live_..., sk_test_...,
	// rk_...). Required; never logged.
	APIKey string
	// BaseURL replaces https://api.stripe.com, for stripe-mock or a fake.
	BaseURL string
	// MaxNetworkRetries is how many times the SDK itself re-sends a request
	// that failed on the network or with a 409 or 5xx, with the same
	// idempotency key and no pause beyond the SDK's backoff. Default 0: the
	// charge worker's own retries re-send the key.
	MaxNetworkRetries int
	// HTTPClient carries the requests. Default: a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one HTTP request when HTTPClient is nil. Default
	// DefaultTimeout.
	Timeout time.Duration
	// PaymentMethod is the payment method (pm_...) charged when a request's
	// metadata names none under "payment_method". Empty: such requests are
	// refused before any call.
	PaymentMethod string
	// BalanceTransactions makes Pull also list the window's balance
	// transactions, adding Stripe fees (as fee transactions linked to the
	// charge) and payouts. Default false: charges and refunds only.
	BalanceTransactions bool
	// PageSize is the number of objects per list request, 1 to 100.
	// Default DefaultPageSize.
	PageSize int
	// Clock stamps sightings with their receipt time. Default time.Now.
	Clock func() time.Time
	// IntentMetadataKey is the metadata key under which charges carry the
	// intent key and pulls read it back. Default MetadataIntentKey.
	IntentMetadataKey string
	// OnReject receives each object a pull cannot read (an amount or a
	// time beyond the limits at the edge, a malformed field), as a
	// *ledger.ParseError naming the object ("stripe /v1/charges ch_…") and
	// the field, with the object's JSON; the pull goes on with the next
	// object. When it fails, the pull stops with its error. When nil, the
	// objects are reported together in Pull's error.
	OnReject func(ctx context.Context, perr *ledger.ParseError, raw []byte) error
	// Account, when set, is the connected account (acct_...) every request
	// acts on, through the Stripe-Account header, with the platform's
	// APIKey: its charges, refunds, pulls and payouts are that account's.
	// A separate account with a key of its own needs no Account: its
	// client is made with its key as APIKey, and acts in that account.
	Account string
}

// Client talks to Stripe's API: it charges (create and confirm a
// PaymentIntent under the intent key), answers status queries and look-ups
// by intent key, and pulls a window's charges and refunds.
type Client struct {
	sc  *stripeapi.Client
	cfg Config
}

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("stripe: config: api key is empty")
	}
	if cfg.MaxNetworkRetries < 0 {
		return nil, errors.New("stripe: config: max network retries is negative")
	}
	switch {
	case cfg.PageSize == 0:
		cfg.PageSize = DefaultPageSize
	case cfg.PageSize < 1 || cfg.PageSize > 100:
		return nil, errors.New("stripe: config: page size must be between 1 and 100")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.HTTPClient == nil {
		t := cfg.Timeout
		if t == 0 {
			t = DefaultTimeout
		}
		cfg.HTTPClient = &http.Client{Timeout: t}
	}
	if cfg.Account != "" {
		hc := *cfg.HTTPClient
		hc.Transport = accountTransport{base: cmp.Or[http.RoundTripper](hc.Transport, http.DefaultTransport), account: cfg.Account}
		cfg.HTTPClient = &hc
	}
	bc := &stripeapi.BackendConfig{
		HTTPClient:        cfg.HTTPClient,
		MaxNetworkRetries: stripeapi.Int64(int64(cfg.MaxNetworkRetries)),
		// The SDK's own log lines can carry response bodies with customer
		// data; errors are returned instead.
		LeveledLogger:   &stripeapi.LeveledLogger{Level: stripeapi.LevelNull},
		EnableTelemetry: stripeapi.Bool(false),
	}
	if cfg.BaseURL != "" {
		bc.URL = stripeapi.String(cfg.BaseURL)
	}
	backends := &stripeapi.Backends{
		API:         stripeapi.GetBackendWithConfig(stripeapi.APIBackend, bc),
		Connect:     stripeapi.GetBackendWithConfig(stripeapi.ConnectBackend, bc),
		Uploads:     stripeapi.GetBackendWithConfig(stripeapi.UploadsBackend, bc),
		MeterEvents: stripeapi.GetBackendWithConfig(stripeapi.MeterEventsBackend, bc),
	}
	return &Client{sc: stripeapi.NewClient(cfg.APIKey, stripeapi.WithBackends(backends)), cfg: cfg}, nil
}

func (c *Client) now() time.Time { return c.cfg.Clock().UTC() }

// accountTransport sends every request on behalf of a connected account.
type accountTransport struct {
	base    http.RoundTripper
	account string
}

func (t accountTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Stripe-Account", t.account)
	return t.base.RoundTrip(r)
}

// key is the metadata key of the intent key.
func (c *Client) key() string { return metadataKey(c.cfg.IntentMetadataKey) }

// metadataKey returns key, or MetadataIntentKey when it is empty.
func metadataKey(key string) string {
	if key == "" {
		return MetadataIntentKey
	}
	return key
}
