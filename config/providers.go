package config

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/csvfile"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
)

// ProvidersConfig configures the payment providers.
type ProvidersConfig struct {
	Mpesa  MpesaConfig  `mapstructure:"mpesa"`
	Stripe StripeConfig `mapstructure:"stripe"`
}

// MpesaConfig is Safaricom Daraja. Charging needs the credentials, the short
// code and callbacks.public_url; evidence (callbacks, statements) needs none.
type MpesaConfig struct {
	// Zone is where M-Pesa's times and date-only windows live; default Africa/Nairobi.
	Zone string `mapstructure:"zone"`
	// SettlementGrace keeps younger intents from being called missing; default 30m.
	SettlementGrace time.Duration `mapstructure:"settlement_grace"`
	// ReferenceNormalise links echoed references (the account number a
	// payer types) by their normal form: case, spaces, dashes, dots and
	// other separators ignored; default true.
	ReferenceNormalise bool `mapstructure:"reference_normalise"`
	// BaseURL is the Daraja API; default https://api.safaricom.co.ke
	// (sandbox: https://sandbox.safaricom.co.ke).
	BaseURL string `mapstructure:"base_url"`
	// ShortCode is the PayBill or till number that receives payments.
	ShortCode string `mapstructure:"short_code"`
	// PartyB is the till's store number when it differs from ShortCode.
	PartyB string `mapstructure:"party_b"`
	// TransactionType is CustomerPayBillOnline (default) or CustomerBuyGoodsOnline.
	TransactionType string `mapstructure:"transaction_type"`
	// HTTPTimeout bounds one Daraja request; default 30s.
	HTTPTimeout time.Duration `mapstructure:"http_timeout"`
	// ConsumerKey, ConsumerSecret and PassKey are secrets:
	// RECONCILE_PROVIDERS_MPESA_CONSUMER_KEY, _CONSUMER_SECRET, _PASS_KEY.
	ConsumerKey    string `mapstructure:"consumer_key" secret:"env"`
	ConsumerSecret string `mapstructure:"consumer_secret" secret:"env"`
	PassKey        string `mapstructure:"pass_key" secret:"env"`
	// Initiator is the API operator that refunds (Reversal API) and refund
	// status queries act as; it needs the Org Reversals Initiator role.
	// Empty: no refunds.
	Initiator string `mapstructure:"initiator"`
	// SecurityCredential is the initiator's encrypted password as the
	// Daraja portal generates it; a secret:
	// RECONCILE_PROVIDERS_MPESA_SECURITY_CREDENTIAL.
	SecurityCredential string               `mapstructure:"security_credential" secret:"env"`
	Callbacks          MpesaCallbacksConfig `mapstructure:"callbacks"`
	Pull               MpesaPullConfig      `mapstructure:"pull"`
}

// MpesaCallbacksConfig is the callback intake of `reconcile serve`.
type MpesaCallbacksConfig struct {
	// PathToken is the unguessable part of every callback URL (secret:
	// RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN; at least 32 of
	// A-Za-z0-9_-). Without it the endpoints are not served.
	PathToken string `mapstructure:"path_token" secret:"env"`
	// PublicURL is this service's public base URL as Safaricom reaches it,
	// e.g. https://pay.example.com; callback URLs are built from it.
	PublicURL string `mapstructure:"public_url"`
	// Prefix is the path prefix; default /daraja.
	Prefix string `mapstructure:"prefix"`
	// AllowIPs are the addresses callbacks may come from; empty means
	// Safaricom's published list.
	AllowIPs []string `mapstructure:"allow_ips"`
	// AllowAnyIP turns the address check off (behind a gateway that checks it).
	AllowAnyIP bool `mapstructure:"allow_any_ip"`
	// TrustedProxies are addresses or CIDRs whose X-Forwarded-For is believed.
	TrustedProxies []string `mapstructure:"trusted_proxies"`
	// MaxBodyBytes caps a callback body; default 64 KiB.
	MaxBodyBytes int64 `mapstructure:"max_body_bytes"`
	// ReadTimeout bounds reading a callback; default 10s.
	ReadTimeout time.Duration `mapstructure:"read_timeout"`
}

// MpesaPullConfig is the Pull Transactions API (48-hour look-back for C2B
// payments whose callbacks never arrived).
type MpesaPullConfig struct {
	// Enabled pulls before each run of a window younger than 48 hours.
	Enabled bool `mapstructure:"enabled"`
	// NominatedNumber is the registration's nominated phone number (secret:
	// RECONCILE_PROVIDERS_MPESA_PULL_NOMINATED_NUMBER).
	NominatedNumber string `mapstructure:"nominated_number" secret:"env"`
	// MaxPages caps pages per pull; default 1000.
	MaxPages int `mapstructure:"max_pages"`
}

// StripeConfig is Stripe. Charging and pulling need the API key; report
// imports and webhooks do not.
type StripeConfig struct {
	// Zone is where date-only windows live; default UTC.
	Zone string `mapstructure:"zone"`
	// SettlementGrace keeps younger intents from being called missing; default 2h.
	SettlementGrace time.Duration `mapstructure:"settlement_grace"`
	// ReferenceNormalise links echoed references by their normal form;
	// default true.
	ReferenceNormalise bool `mapstructure:"reference_normalise"`
	// APIKey is a secret: RECONCILE_PROVIDERS_STRIPE_API_KEY.
	APIKey string `mapstructure:"api_key" secret:"env"`
	// BaseURL overrides https://api.stripe.com (stripe-mock, a fake).
	BaseURL string `mapstructure:"base_url"`
	// MaxNetworkRetries lets stripe-go retry safe failures; default 2.
	MaxNetworkRetries int `mapstructure:"max_network_retries"`
	// Timeout bounds one request; default 30s.
	Timeout time.Duration `mapstructure:"timeout"`
	// PaymentMethod charges intents whose metadata names none.
	PaymentMethod string `mapstructure:"payment_method"`
	// PullBalanceTransactions also pulls fees and payouts.
	PullBalanceTransactions bool `mapstructure:"pull_balance_transactions"`
	// PageSize is the list page size (1-100); default 100.
	PageSize int `mapstructure:"page_size"`
	// ReportTimezone is the zone of the payout report's non-_utc columns; default UTC.
	ReportTimezone string `mapstructure:"report_timezone"`
	// WebhookSecrets verify webhook signatures (secret, comma-separated:
	// RECONCILE_PROVIDERS_STRIPE_WEBHOOK_SECRETS). Without them no webhook
	// endpoint is served.
	WebhookSecrets []string `mapstructure:"webhook_secrets" secret:"env"`
	// WebhookTolerance is the oldest signature accepted; default 5m.
	WebhookTolerance time.Duration `mapstructure:"webhook_tolerance"`
	// IntentMetadataKey is the PaymentIntent metadata key that carries the
	// intent key (charges write it; pulls, webhooks and reports read it,
	// reports as the payment_metadata[KEY] column); default intent_key.
	IntentMetadataKey string `mapstructure:"intent_metadata_key"`
}

// Provider is what reconcile knows of one provider from the configuration:
// its zone and grace, how its evidence is read, and the clients built from
// its settings.
type Provider struct {
	// Zone is where the provider's local times and date-only windows live.
	Zone *time.Location
	// Grace keeps intents younger than this from being called missing.
	Grace time.Duration
	// ExactReferences links echoed references as given (upper-cased)
	// rather than by their normal form.
	ExactReferences bool
	Puller          providers.Puller
	// PullSetting names what to configure so that a provider whose evidence
	// is pulled (Stripe) can be pulled; empty when Puller is set or when the
	// provider's evidence arrives by itself (callbacks, statements).
	PullSetting string
	Charger     providers.Charger
	// Statement reads the provider's statement files.
	Statement providers.StatementParser
	// Callbacks reads captured callback bodies.
	Callbacks providers.CallbackParser
}

// Quarantiner keeps a record a pull refused, for the source it came from
// (mpesa_pull, stripe_pull).
type Quarantiner func(source string) func(ctx context.Context, perr *ledger.ParseError, raw []byte) error

// BuildProviders builds the configured providers by name: M-Pesa, Stripe
// and every statement layout. quarantine keeps what their pulls refuse.
func BuildProviders(cfg *Config, clock func() time.Time, quarantine Quarantiner) (map[string]Provider, error) {
	out := map[string]Provider{}
	m := cfg.Providers.Mpesa
	mz, err := LoadZone(m.Zone)
	if err != nil {
		return nil, fmt.Errorf("config providers.mpesa.zone: %w", err)
	}
	mp := Provider{Zone: mz, Grace: m.SettlementGrace, ExactReferences: !m.ReferenceNormalise, Statement: mpesa.StatementParser{Clock: clock}, Callbacks: mpesa.CallbackParser{}}
	mcfg := mpesa.Config{BaseURL: m.BaseURL, ShortCode: m.ShortCode, PartyB: m.PartyB, ConsumerKey: m.ConsumerKey,
		ConsumerSecret: m.ConsumerSecret, PassKey: m.PassKey, TransactionType: m.TransactionType, HTTPTimeout: m.HTTPTimeout, Clock: clock}
	hcfg := m.HandlerConfig(nil, clock)
	if m.ConsumerKey != "" || m.PassKey != "" {
		if m.Callbacks.PublicURL == "" || m.Callbacks.PathToken == "" {
			return nil, fmt.Errorf("config providers.mpesa: charging needs callbacks.public_url and %s so STK results can come back",
				EnvName("providers.mpesa.callbacks.path_token"))
		}
		mcfg.CallbackURL = hcfg.CallbackURL(m.Callbacks.PublicURL, "stk")
		if (m.Initiator == "") != (m.SecurityCredential == "") {
			return nil, fmt.Errorf("config providers.mpesa: refunds need both initiator and %s", EnvName("providers.mpesa.security_credential"))
		}
		if m.Initiator != "" {
			mcfg.Initiator, mcfg.SecurityCredential = m.Initiator, m.SecurityCredential
			mcfg.ReversalURLs = hcfg.ResultURLsAt(m.Callbacks.PublicURL, "reversal")
			mcfg.StatusURLs = hcfg.ResultURLsAt(m.Callbacks.PublicURL, "status")
		}
		ch, err := mpesa.NewCharger(mcfg)
		if err != nil {
			return nil, fmt.Errorf("config providers.mpesa: %w", err)
		}
		mp.Charger = ch
	}
	if m.Pull.Enabled {
		p, err := mpesa.NewPuller(mcfg, mpesa.PullConfig{ShortCode: m.ShortCode, NominatedNumber: m.Pull.NominatedNumber,
			CallbackURL: hcfg.CallbackURL(m.Callbacks.PublicURL, "c2b/confirmation"), MaxPages: m.Pull.MaxPages,
			OnReject: quarantine("mpesa_pull")})
		if err != nil {
			return nil, fmt.Errorf("config providers.mpesa.pull: %w", err)
		}
		mp.Puller = mpesa.RecentOnly(p, clock)
	}
	out[mpesa.Provider] = mp

	s := cfg.Providers.Stripe
	sz, err := LoadZone(s.Zone)
	if err != nil {
		return nil, fmt.Errorf("config providers.stripe.zone: %w", err)
	}
	rz, err := LoadZone(s.ReportTimezone)
	if err != nil {
		return nil, fmt.Errorf("config providers.stripe.report_timezone: %w", err)
	}
	sp := Provider{Zone: sz, Grace: s.SettlementGrace, ExactReferences: !s.ReferenceNormalise,
		Statement: stripe.ReportParser{Location: rz, MetadataKey: s.IntentMetadataKey, Clock: clock},
		Callbacks: stripe.EventParser{MetadataKey: s.IntentMetadataKey}}
	if s.APIKey != "" {
		c, err := stripe.New(stripe.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, MaxNetworkRetries: s.MaxNetworkRetries,
			Timeout: s.Timeout, PaymentMethod: s.PaymentMethod, BalanceTransactions: s.PullBalanceTransactions,
			PageSize: s.PageSize, Clock: clock, IntentMetadataKey: s.IntentMetadataKey, OnReject: quarantine("stripe_pull")})
		if err != nil {
			return nil, fmt.Errorf("config providers.stripe: %w", err)
		}
		sp.Charger, sp.Puller = c, c
	} else {
		sp.PullSetting = EnvName("providers.stripe.api_key")
	}
	out["stripe"] = sp

	for i, mapping := range cfg.Statements {
		key := fmt.Sprintf("statements[%d]", i)
		name := strings.ToLower(strings.TrimSpace(mapping.Provider))
		if _, dup := out[name]; dup || name == "" {
			return nil, fmt.Errorf("config %s.provider: %q is empty or already a provider", key, mapping.Provider)
		}
		p, err := csvfile.NewParser(mapping, clock)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", key, err)
		}
		z, err := LoadZone(mapping.Zone)
		if err != nil {
			return nil, fmt.Errorf("config %s.zone: %w", key, err)
		}
		out[name] = Provider{Zone: z, Grace: cfg.Reconcile.StatementGrace, Statement: p}
	}
	return out, nil
}

// HandlerConfig is the configuration of the M-Pesa callback handler: its
// path, address checks and limits, keeping what it refuses in q.
func (m MpesaConfig) HandlerConfig(q mpesa.Quarantiner, clock func() time.Time) mpesa.HandlerConfig {
	allow := m.Callbacks.AllowIPs
	if len(allow) == 0 {
		allow = nil // Safaricom's list
	}
	if m.Callbacks.AllowAnyIP {
		allow = []string{}
	}
	return mpesa.HandlerConfig{PathToken: m.Callbacks.PathToken, Prefix: m.Callbacks.Prefix, AllowIPs: allow,
		TrustedProxies: m.Callbacks.TrustedProxies, MaxBodyBytes: m.Callbacks.MaxBodyBytes,
		ReadTimeout: m.Callbacks.ReadTimeout, Quarantine: q, Clock: clock}
}

// LoadZone loads a zone by its IANA name; "" and "UTC" are UTC.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	return time.LoadLocation(name)
}
