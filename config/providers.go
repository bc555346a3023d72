package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
	"github.com/reconcilehq/reconcile/providers/csvfile"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/reconciler"
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
	// Horizon is how far each way from its window a run looks for the
	// other half of what it could not settle (a payment days after the
	// invoice, a refund of last week's charge); default 840h (35 days).
	Horizon time.Duration `mapstructure:"horizon"`
	// IntentKind is the kind of an imported intent that names neither a
	// kind nor a provider reference: expected (a paybill invoice the
	// customer pays, possibly in parts; the default) or charge.
	IntentKind string `mapstructure:"intent_kind"`
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
	// Accounts are the other paybills and tills of the business, each
	// reconciled apart from the default one (ShortCode).
	Accounts []MpesaAccount `mapstructure:"accounts"`
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
	// Horizon is how far each way from its window a run looks for the
	// other half of what it could not settle; default 840h (35 days).
	Horizon time.Duration `mapstructure:"horizon"`
	// IntentKind is the kind of an imported intent that names neither a
	// kind nor a provider reference: charge (the default) or expected (a
	// payment link the customer pays).
	IntentKind string `mapstructure:"intent_kind"`
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
	// RECONCILE_PROVIDERS_STRIPE_WEBHOOK_SECRETS). Without them, and
	// without any account's own (StripeAccount), no webhook endpoint is
	// served.
	WebhookSecrets []string `mapstructure:"webhook_secrets" secret:"env"`
	// WebhookTolerance is the oldest signature accepted; default 5m.
	WebhookTolerance time.Duration `mapstructure:"webhook_tolerance"`
	// IntentMetadataKey is the PaymentIntent metadata key that carries the
	// intent key (charges write it; pulls, webhooks and reports read it,
	// reports as the payment_metadata[KEY] column); default intent_key.
	IntentMetadataKey string `mapstructure:"intent_metadata_key"`
	// Accounts are other Stripe accounts, each reconciled apart from the
	// default one: connected accounts of a Connect platform, or separate
	// accounts with their own API key and webhook secrets from the
	// environment (StripeAccount).
	Accounts []StripeAccount `mapstructure:"accounts"`
}

// Provider is what reconcile knows of one provider from the configuration:
// its zone and grace, how its evidence is read, and, once built
// (BuildProviders), the clients its credentials make.
type Provider struct {
	// Zone is where the provider's local times and date-only windows live.
	Zone *time.Location
	// Grace keeps intents younger than this from being called missing.
	Grace time.Duration
	// ExactReferences links echoed references as given (upper-cased)
	// rather than by their normal form.
	ExactReferences bool
	// Horizon is how far each way a run looks beyond its window.
	Horizon time.Duration
	// IntentKind is the kind of an imported intent that names neither a
	// kind nor a provider reference.
	IntentKind ledger.IntentKind
	// Pulled says its evidence is pulled before each run (Stripe with its
	// API key, M-Pesa with pull.enabled): Puller is built for it.
	Pulled bool
	// PullSetting names what to configure so that a provider whose evidence
	// is pulled (Stripe) can be pulled; empty when it is pulled or when the
	// provider's evidence arrives by itself (callbacks, statements).
	PullSetting string
	// Statement reads the provider's statement files; StatementOf, when
	// set, reads those of one account (ledger.ParseAccount), refusing a
	// file that says it is of another.
	Statement   providers.StatementParser
	StatementOf func(account string) providers.StatementParser
	// Callbacks reads captured callback bodies; nil for statement layouts.
	Callbacks providers.CallbackParser
	// Charger and Puller are built from the credentials by BuildProviders:
	// nil in what DescribeProviders describes, and when the credentials are not
	// set.
	Charger providers.Charger
	Puller  providers.Puller
	// Registrar registers the provider's short code for pulling (M-Pesa
	// with pull.enabled), built with Puller; nil when the provider needs
	// no registration or is not pulled.
	Registrar providers.PullRegistrar
	// RegistrarSetting names what is not configured that registering for
	// pulling needs (the nominated number, the public URL), "" when
	// nothing is missing or the provider needs no registration.
	RegistrarSetting string
	// PayoutPuller pulls the payouts the provider makes to bank accounts
	// (Stripe with its API key), for the runs of those accounts.
	PayoutPuller providers.PayoutPuller
	// Bank is the bank account a bank:<name> provider is; nil for the
	// others.
	Bank *bankaccount.Account
	// Accounts are the provider's accounts beyond its default one, by id
	// (an M-Pesa short code); each is reconciled apart.
	Accounts []string
	// AccountPullers and AccountRegistrars are Puller and Registrar for
	// each of Accounts, built by BuildProviders when the provider is
	// pulled.
	AccountPullers    map[string]providers.Puller
	AccountRegistrars map[string]providers.PullRegistrar
	// AccountChargers is Charger for each of Accounts: an intent of the
	// account is charged (and refunded) through its short code.
	AccountChargers map[string]providers.Charger
	// AccountPayoutPullers is PayoutPuller for each of Accounts (Stripe's,
	// with the API key): a bank run pulls the payouts of the accounts that
	// pay into its bank account through them.
	AccountPayoutPullers map[string]providers.PayoutPuller
}

// Quarantiner keeps a record a pull refused, for the source it came from
// (mpesa_pull, stripe_pull).
type Quarantiner func(source string) func(ctx context.Context, perr *ledger.ParseError, raw []byte) error

// QuarantineTo is the Quarantiner that keeps what a provider's pull
// refuses in store, once: pulling the window again meets the same record.
// clock stamps the record.
func QuarantineTo(store interface {
	AddQuarantineOnce(ctx context.Context, q ledger.QuarantineItem) (int64, bool, error)
}, clock func() time.Time) Quarantiner {
	return func(source string) func(ctx context.Context, perr *ledger.ParseError, raw []byte) error {
		return func(ctx context.Context, perr *ledger.ParseError, raw []byte) error {
			_, _, err := store.AddQuarantineOnce(ctx, ledger.QuarantineItem{Source: source, Origin: perr.File, Line: perr.Line,
				Field: perr.Field, Reason: perr.Err.Error(), Raw: raw, At: clock()})
			return err
		}
	}
}

// DescribeProviders describes the configured providers by name (M-Pesa, Stripe and
// every statement layout) without building their clients: enough to check
// a command line (a provider's name, zone, parsers, whether it is pulled)
// before anything is opened. clock stamps what the parsers read.
func (c Config) DescribeProviders(clock func() time.Time) (map[string]Provider, error) {
	if errs := c.validateProviders(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := map[string]Provider{}
	m, s := c.Providers.Mpesa, c.Providers.Stripe
	mz, _ := LoadZone(m.Zone)
	out[mpesa.Provider] = Provider{Zone: mz, Grace: m.SettlementGrace, ExactReferences: !m.ReferenceNormalise, Pulled: m.Pull.Enabled,
		Horizon: m.Horizon, IntentKind: ledger.IntentKind(m.IntentKind),
		Statement: mpesa.StatementParser{Clock: clock}, Callbacks: mpesa.CallbackParser{Accounts: m.AccountSet()},
		StatementOf: func(account string) providers.StatementParser {
			return mpesa.StatementParser{Clock: clock, ShortCode: cmp.Or(account, m.ShortCode)}
		},
		Accounts: m.AccountIDs()}
	sz, _ := LoadZone(s.Zone)
	rz, _ := LoadZone(s.ReportTimezone)
	sp := Provider{Zone: sz, Grace: s.SettlementGrace, ExactReferences: !s.ReferenceNormalise, Pulled: s.APIKey != "",
		Horizon: s.Horizon, IntentKind: ledger.IntentKind(s.IntentKind),
		Statement: stripe.ReportParser{Location: rz, MetadataKey: s.IntentMetadataKey, Clock: clock},
		Callbacks: s.EventParser(), Accounts: s.AccountIDs()}
	if s.APIKey == "" {
		sp.PullSetting = EnvName("providers.stripe.api_key")
	}
	out[stripe.Provider] = sp
	for i, mapping := range c.Statements {
		p, err := csvfile.NewParser(mapping, clock)
		if err != nil {
			return nil, fmt.Errorf("config statements[%d]: %w", i, err)
		}
		z, _ := LoadZone(mapping.Zone)
		out[statementName(mapping)] = Provider{Zone: z, Grace: c.Reconcile.StatementGrace, Statement: p,
			Horizon: DefaultHorizon, IntentKind: ledger.IntentCharge}
	}
	if err := c.describeBanks(out, clock); err != nil {
		return nil, err
	}
	return out, nil
}

// BuildProviders is DescribeProviders with the clients built from the credentials:
// the chargers, and the pullers, which keep what they refuse through
// quarantine. It is called once, by the command that needs them.
func (c Config) BuildProviders(clock func() time.Time, quarantine Quarantiner) (map[string]Provider, error) {
	out, err := c.DescribeProviders(clock)
	if err != nil {
		return nil, err
	}
	m := c.Providers.Mpesa
	mp := out[mpesa.Provider]
	mcfg := mpesa.Config{BaseURL: m.BaseURL, ShortCode: m.ShortCode, PartyB: m.PartyB, ConsumerKey: m.ConsumerKey,
		ConsumerSecret: m.ConsumerSecret, PassKey: m.PassKey, TransactionType: m.TransactionType, HTTPTimeout: m.HTTPTimeout, Clock: clock}
	hcfg := m.HandlerConfig(nil, clock)
	if m.charges() {
		mcfg.CallbackURL = hcfg.CallbackURL(m.Callbacks.PublicURL, "stk")
		if m.Initiator != "" {
			mcfg.Initiator, mcfg.SecurityCredential = m.Initiator, m.SecurityCredential
			mcfg.ReversalURLs = hcfg.ResultURLsAt(m.Callbacks.PublicURL, "reversal")
			mcfg.StatusURLs = hcfg.ResultURLsAt(m.Callbacks.PublicURL, "status")
		}
		if mp.Charger, err = mpesa.NewCharger(mcfg); err != nil {
			return nil, fmt.Errorf("config providers.mpesa: %w", err)
		}
		if mp.AccountChargers, err = m.buildAccountChargers(mcfg); err != nil {
			return nil, err
		}
	}
	if m.Pull.Enabled {
		p, err := mpesa.NewPuller(mcfg, mpesa.PullConfig{ShortCode: m.ShortCode, NominatedNumber: m.Pull.NominatedNumber,
			CallbackURL: hcfg.CallbackURL(m.Callbacks.PublicURL, "c2b/confirmation"), CallbackSecret: m.Callbacks.PathToken,
			MaxPages: m.Pull.MaxPages, OnReject: quarantine("mpesa_pull")})
		if err != nil {
			return nil, fmt.Errorf("config providers.mpesa.pull: %w", err)
		}
		mp.Puller, mp.Registrar, mp.RegistrarSetting = mpesa.RecentOnly(p, clock), p, m.registrarSetting()
		if err := m.buildAccountPullers(&mp, mcfg, hcfg, clock, quarantine); err != nil {
			return nil, err
		}
	}
	out[mpesa.Provider] = mp

	if s := c.Providers.Stripe; s.APIKey != "" {
		sp := out[stripe.Provider]
		scfg := stripe.Config{APIKey: s.APIKey, BaseURL: s.BaseURL, MaxNetworkRetries: s.MaxNetworkRetries,
			Timeout: s.Timeout, PaymentMethod: s.PaymentMethod, BalanceTransactions: s.PullBalanceTransactions,
			PageSize: s.PageSize, Clock: clock, IntentMetadataKey: s.IntentMetadataKey, OnReject: quarantine("stripe_pull")}
		cl, err := stripe.New(scfg)
		if err != nil {
			return nil, fmt.Errorf("config providers.stripe: %w", err)
		}
		sp.Charger, sp.Puller, sp.PayoutPuller = cl, cl, cl
		if err := s.buildAccounts(&sp, scfg); err != nil {
			return nil, err
		}
		out[stripe.Provider] = sp
	}
	return out, nil
}

// registrarSetting names what registering the short code for pulling
// needs and is not set: the nominated number, and the public URL the
// callback URL is built from.
func (m MpesaConfig) registrarSetting() string {
	var missing []string
	if strings.TrimSpace(m.Pull.NominatedNumber) == "" {
		missing = append(missing, EnvName("providers.mpesa.pull.nominated_number"))
	}
	if strings.TrimSpace(m.Callbacks.PublicURL) == "" {
		missing = append(missing, "providers.mpesa.callbacks.public_url")
	}
	return strings.Join(missing, " and ")
}

// charges reports whether M-Pesa is configured to charge (STK push): its
// credentials are set.
func (m MpesaConfig) charges() bool { return m.ConsumerKey != "" || m.PassKey != "" }

// statementName is the provider name of a statement layout.
func statementName(m csvfile.Mapping) string { return strings.ToLower(strings.TrimSpace(m.Provider)) }

// validateProviders checks what the providers need to be built: their
// zones, M-Pesa's settings for charging and pulling, and the statement
// layouts. Each mistake is reported, naming its key.
func (c Config) validateProviders() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config %s: %s", key, fmt.Sprintf(format, args...)))
	}
	zone := func(key, name string) {
		if _, err := LoadZone(name); err != nil {
			errs = append(errs, fmt.Errorf("config %s: %w", key, err))
		}
	}
	m, s := c.Providers.Mpesa, c.Providers.Stripe
	zone("providers.mpesa.zone", m.Zone)
	zone("providers.stripe.zone", s.Zone)
	zone("providers.stripe.report_timezone", s.ReportTimezone)
	m.validateAccounts(bad)
	s.validateAccounts(bad)
	if m.charges() {
		if m.Callbacks.PublicURL == "" || m.Callbacks.PathToken == "" {
			bad("providers.mpesa", "charging needs callbacks.public_url and %s so STK results can come back",
				EnvName("providers.mpesa.callbacks.path_token"))
		}
		if (m.Initiator == "") != (m.SecurityCredential == "") {
			bad("providers.mpesa", "refunds need both initiator and %s", EnvName("providers.mpesa.security_credential"))
		}
		if m.PassKey == "" {
			bad("providers.mpesa", "charging needs %s", EnvName("providers.mpesa.pass_key"))
		}
	}
	if m.charges() || m.Pull.Enabled {
		// What every Daraja client needs.
		if strings.TrimSpace(m.BaseURL) == "" {
			bad("providers.mpesa.base_url", "is empty (Daraja: %s, sandbox: %s)", mpesa.ProductionURL, mpesa.SandboxURL)
		}
		if m.ShortCode == "" {
			bad("providers.mpesa.short_code", "is required to charge or pull: the PayBill or till number")
		}
		if m.ConsumerKey == "" || m.ConsumerSecret == "" {
			bad("providers.mpesa", "charging and pulling need both %s and %s", EnvName("providers.mpesa.consumer_key"),
				EnvName("providers.mpesa.consumer_secret"))
		}
		if t := m.TransactionType; t != "" && t != mpesa.PayBillOnline && t != mpesa.BuyGoodsOnline {
			bad("providers.mpesa.transaction_type", "%q: want %s or %s", t, mpesa.PayBillOnline, mpesa.BuyGoodsOnline)
		}
	}
	names := map[string]bool{mpesa.Provider: true, stripe.Provider: true}
	for i, mapping := range c.Statements {
		key := fmt.Sprintf("statements[%d]", i)
		name := statementName(mapping)
		if names[name] || name == "" {
			bad(key+".provider", "%q is empty or already a provider", mapping.Provider)
		}
		if ledger.IsBankProvider(name) {
			bad(key+".provider", "%q: bank:<name> is a bank account's (banks)", mapping.Provider)
		}
		names[name] = true
		if err := mapping.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("config %s: %w", key, err))
		}
		zone(key+".zone", mapping.Zone)
	}
	return append(errs, c.validateBanks()...)
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

// CheckPull refuses a run of provider (named provider) that would pull its
// evidence but cannot, because what the pull needs is not set (Pulled is
// false and PullSetting names it); a run that only matches what is stored
// (matchOnly: --no-pull or --dry-run) needs no pull.
func (setup Provider) CheckPull(provider string, matchOnly bool) error {
	if setup.Pulled || setup.PullSetting == "" || matchOnly {
		return nil
	}
	return fmt.Errorf("run --provider %s: its evidence cannot be pulled: set %s, or pass --no-pull to match only "+
		"the evidence already stored (imported reports, webhooks)", provider, setup.PullSetting)
}

// Evidence says where a run of provider p (named provider) takes its
// evidence from, so that a run that pulled nothing says so.
func (setup Provider) Evidence(provider string, dryRun, noPull bool) string {
	switch {
	case setup.Bank != nil && setup.Pulled && (dryRun || noPull):
		return "stored only: imported bank statements and payouts (no payout pull)"
	case setup.Bank != nil && setup.Pulled:
		return "imported bank statements; Stripe's payouts pulled by arrival date, and stored"
	case setup.Bank != nil:
		return "stored: imported bank statements and payouts (no payout pull configured)"
	case dryRun && setup.Pulled:
		return "stored only (--dry-run never pulls)"
	case noPull && setup.Pulled:
		return "stored only (--no-pull)"
	case setup.Pulled:
		return "pulled from " + provider + ", and stored"
	case setup.PullSetting != "":
		return "stored only (" + provider + " is not pulled without " + setup.PullSetting + ")"
	case setup.Callbacks != nil:
		return "stored: callbacks and imported statements (no pull configured)"
	default:
		return "stored: imported statements"
	}
}

// RefunderSetting says what makes provider able to send refunds.
func RefunderSetting(provider string) string {
	switch provider {
	case "mpesa":
		return "set providers.mpesa.initiator and " + EnvName("providers.mpesa.security_credential") +
			" (with the charging settings: " + ChargerSetting(provider) + ")"
	case "stripe":
		return ChargerSetting(provider)
	}
	return "only mpesa and stripe can refund; import without --charge"
}

// ChargerSetting says what makes provider able to charge.
func ChargerSetting(provider string) string {
	switch provider {
	case "mpesa":
		return "set " + EnvName("providers.mpesa.consumer_key") + ", " + EnvName("providers.mpesa.consumer_secret") +
			" and " + EnvName("providers.mpesa.pass_key") + " (with providers.mpesa.short_code and callbacks)"
	case "stripe":
		return "set " + EnvName("providers.stripe.api_key")
	}
	return "only mpesa and stripe can charge; import without --charge"
}

// DefaultHorizon is how far each way from its window a run looks up the
// intents and evidence of other windows (reconciler.DefaultHorizon).
const DefaultHorizon = reconciler.DefaultHorizon

// MaxHorizon bounds providers.<name>.horizon.
const MaxHorizon = 366 * 24 * time.Hour

// RegisterForPulling registers the short code of the provider name (p)
// for pulling, unless book records it registered already and force is
// false (providers.PullRegistrar), recording the registration by by. A
// provider that is not pulled, that needs no registration or whose
// configuration lacks what registering needs is refused with the setting
// to change. A non-empty account registers that account's short code.
func (p Provider) RegisterForPulling(ctx context.Context, name, account string, book ledger.PullRegistrationStore, by string, force bool) (ledger.PullRegistration, bool, error) {
	if account != "" {
		r := p.AccountRegistrars[account]
		if r == nil || p.RegistrarSetting != "" {
			return ledger.PullRegistration{}, false, fmt.Errorf("providers register %s --account %s: the account is not pulled "+
				"(providers.mpesa.pull.enabled, %s)", name, account, cmp.Or(p.RegistrarSetting, "its short code under accounts"))
		}
		return r.EnsureRegistered(ctx, book, by, force)
	}
	switch {
	case p.Registrar == nil && name == mpesa.Provider:
		return ledger.PullRegistration{}, false, fmt.Errorf("providers register mpesa: M-Pesa is not pulled: set providers.mpesa.pull.enabled " +
			"(with the short code and the Daraja credentials) to pull and register")
	case p.Registrar == nil:
		return ledger.PullRegistration{}, false, fmt.Errorf("providers register %s: %s needs no registration for pulling", name, name)
	case p.RegistrarSetting != "":
		return ledger.PullRegistration{}, false, fmt.Errorf("providers register %s: registering for pulling needs %s", name, p.RegistrarSetting)
	}
	return p.Registrar.EnsureRegistered(ctx, book, by, force)
}

// Chargers returns the configured chargers of setups, by account scope
// (ledger.Scope: the provider's name for its default account): what the
// charge service sends charges and refunds through.
func Chargers(setups map[string]Provider) map[string]providers.Charger {
	out := map[string]providers.Charger{}
	for name, p := range setups {
		if p.Charger != nil {
			out[name] = p.Charger
		}
		for acct, c := range p.AccountChargers {
			out[ledger.Scope(name, acct)] = c
		}
	}
	return out
}

// CallbackParsers returns the callback parsers of setups, by provider
// name: what the intake interprets callback bodies with.
func CallbackParsers(setups map[string]Provider) map[string]providers.CallbackParser {
	out := map[string]providers.CallbackParser{}
	for name, p := range setups {
		if p.Callbacks != nil {
			out[name] = p.Callbacks
		}
	}
	return out
}
