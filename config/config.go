package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/shopspring/decimal"
	"github.com/spf13/viper"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/console"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/csvfile"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
)

// Config is the whole configuration. Precedence: flags > RECONCILE_*
// environment variables > config file > defaults.
//
// To add a key: a field with a mapstructure tag here (or in a section's
// struct), its default in Default (a library package's exported
// constant when the library has a default of its own), its description in
// configDocs (docs.go), the tag secret:"env" if it is a secret (read only
// from the environment, scrubbed from errors), and a check in Validate if
// some values are wrong. Then `go generate ./config` rewrites
// config.example.yaml and docs/configuration.md; TestConfigDocsGenerated
// fails until they are current.
type Config struct {
	// DatabaseURL is postgres://... or sqlite:PATH; default sqlite:reconcile.db.
	DatabaseURL string          `mapstructure:"database_url"`
	Database    DatabaseConfig  `mapstructure:"database"`
	Log         LogConfig       `mapstructure:"log"`
	HTTP        HTTPConfig      `mapstructure:"http"`
	Roles       RolesConfig     `mapstructure:"roles"`
	Workers     WorkersConfig   `mapstructure:"workers"`
	Queue       QueueConfig     `mapstructure:"queue"`
	Charges     ChargesConfig   `mapstructure:"charges"`
	Events      EventsConfig    `mapstructure:"events"`
	Reconcile   ReconcileConfig `mapstructure:"reconcile"`
	Alerts      AlertsConfig    `mapstructure:"alerts"`
	Console     ConsoleConfig   `mapstructure:"console"`
	Providers   ProvidersConfig `mapstructure:"providers"`
	// Statements are generic CSV statement layouts, each a provider of its own.
	Statements []csvfile.Mapping `mapstructure:"statements"`
	// Schedules reconcile providers periodically in `reconcile serve`, by
	// provider name.
	Schedules map[string]ScheduleConfig `mapstructure:"schedules"`
	// Limits bound what input may bring in.
	Limits LimitsConfig `mapstructure:"limits"`
}

// LimitsConfig sets the limits at the edge that are configurable.
type LimitsConfig struct {
	// MaxAmounts is the largest amount accepted per currency, in major
	// units as decimal text ({KES: "1000000000"}). A currency not listed
	// accepts up to ledger.DefaultMaxMinor minor units.
	MaxAmounts map[string]string `mapstructure:"max_amounts"`
}

// Amounts parses MaxAmounts, by currency.
func (l LimitsConfig) Amounts() (map[string]decimal.Decimal, error) {
	out := make(map[string]decimal.Decimal, len(l.MaxAmounts))
	for cur, v := range l.MaxAmounts {
		d, err := decimal.NewFromString(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a decimal amount", cur, v)
		}
		out[cur] = d
	}
	return out, ledger.ValidateMaxAmounts(out)
}

// ReconcileConfig tunes reconcile runs.
type ReconcileConfig struct {
	// Tolerance widens every window on both sides when linking evidence, so
	// an intent at 23:59:50 matches its receipt at 00:00:20; default 2h.
	Tolerance time.Duration `mapstructure:"tolerance"`
	// Lease is how long a run holds its window; default 15m.
	Lease time.Duration `mapstructure:"lease"`
	// Fuzzy links evidence without a reference by amount, currency and
	// customer when exactly one candidate fits; off by default.
	Fuzzy bool `mapstructure:"fuzzy"`
	// StatementGrace keeps intents younger than this from being called
	// missing by the generic CSV statement providers (statements); default 2h.
	StatementGrace time.Duration `mapstructure:"statement_grace"`
}

// HTTPConfig is the server of `reconcile serve`.
type HTTPConfig struct {
	// Listen is the address of the public port (provider callbacks, the
	// intents API); default ":8080".
	Listen string `mapstructure:"listen"`
	// AdminListen is the address of the admin port (/metrics, /healthz,
	// /readyz), kept off the public callback port; default
	// "127.0.0.1:8081" (loopback only: set ":8081" for a scraper on
	// another host or container).
	AdminListen string `mapstructure:"admin_listen"`
	// ReadTimeout bounds reading a request, headers and body; default 10s.
	ReadTimeout time.Duration `mapstructure:"read_timeout"`
	// WriteTimeout bounds writing a response; default 30s.
	WriteTimeout time.Duration `mapstructure:"write_timeout"`
	// MaxBodyBytes caps request bodies; default 1 MiB.
	MaxBodyBytes int64 `mapstructure:"max_body_bytes"`
	// APIToken is the bearer token of the intents API (secret, environment
	// only: RECONCILE_HTTP_API_TOKEN). Without it the API is not served.
	APIToken string `mapstructure:"api_token" secret:"env"`
}

// RolesConfig switches the parts of `reconcile serve` on and off, so large
// deployments can run them in separate processes.
type RolesConfig struct {
	// HTTP serves callbacks, the intents API, health and metrics.
	HTTP bool `mapstructure:"http"`
	// Workers works River jobs (charges, events, alerts, runs).
	Workers bool `mapstructure:"workers"`
	// Scheduler schedules periodic reconcile runs (leader-elected).
	Scheduler bool `mapstructure:"scheduler"`
}

// WorkersConfig is how many jobs of each queue run at once in this process.
type WorkersConfig struct {
	Charges int `mapstructure:"charges"`
	Events  int `mapstructure:"events"`
	Alerts  int `mapstructure:"alerts"`
	Runs    int `mapstructure:"runs"`
}

// QueueConfig tunes River.
type QueueConfig struct {
	// JobTimeout bounds one try of a job; default 90s.
	JobTimeout time.Duration `mapstructure:"job_timeout"`
	// RescueAfter is when a job whose worker died runs again; default 5m.
	RescueAfter time.Duration `mapstructure:"rescue_after"`
	// ShutdownGrace is how long serve lets running jobs finish on SIGTERM
	// before cancelling them; default 30s.
	ShutdownGrace time.Duration `mapstructure:"shutdown_grace"`
	// RetryBase is the first retry's wait of a failed job (any kind),
	// doubled each time up to RetryMax, with jitter; default 2s and 10m.
	RetryBase time.Duration `mapstructure:"retry_base"`
	RetryMax  time.Duration `mapstructure:"retry_max"`
}

// ChargesConfig tunes charge jobs.
type ChargesConfig struct {
	// Lease is how long a worker holds an intent; default 2m.
	Lease time.Duration `mapstructure:"lease"`
	// MaxAttempts caps the tries of a charge job; default 12. With the
	// queue's default backoff they span about 40 minutes, far inside
	// Stripe's 24-hour idempotency key retention; the span must stay under
	// 20 hours.
	MaxAttempts int `mapstructure:"max_attempts"`
	// PendingPoll is how often an accepted, unfinished charge is asked about; default 30s.
	PendingPoll time.Duration `mapstructure:"pending_poll"`
	// PendingGiveUp is when a still-pending attempt is marked unknown; default 10m.
	PendingGiveUp time.Duration `mapstructure:"pending_give_up"`
}

// EventsConfig is where outgoing events go.
type EventsConfig struct {
	// Endpoints receive every event (POST, JSON, signed).
	Endpoints []string `mapstructure:"endpoints"`
	// SigningSecret signs them (secret, environment only:
	// RECONCILE_EVENTS_SIGNING_SECRET). Required by serve, which delivers
	// events, when endpoints are set.
	SigningSecret string `mapstructure:"signing_secret" secret:"env"`
}

// DatabaseConfig tunes the database connection.
type DatabaseConfig struct {
	// MaxConns is the PostgreSQL pool size; 0 means pgx's default (max(4, CPUs)).
	MaxConns int32 `mapstructure:"max_conns"`
}

// LogConfig sets up logging.
type LogConfig struct {
	// Level is debug, info, warn or error; default info.
	Level string `mapstructure:"level"`
	// Format is text, json or auto (text on a terminal, JSON otherwise).
	Format string `mapstructure:"format"`
}

// LevelOf is Level as a slog level (info when it is not one).
func (c LogConfig) LevelOf() slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(c.Level)) // validated at load
	return l
}

// Default is the configuration with nothing set: every default is
// here, and nowhere else in the binary. Where a library package applies a
// default of its own, the value is that package's exported constant, so the
// two cannot disagree. registerDefaults gives every key of it to viper.
func Default() Config {
	return Config{
		DatabaseURL: database.DefaultURL,
		Log:         LogConfig{Level: "info", Format: "auto"},
		HTTP: HTTPConfig{
			Listen:       ":8080",
			AdminListen:  "127.0.0.1:8081",
			ReadTimeout:  10 * time.Second,
			WriteTimeout: 30 * time.Second,
			MaxBodyBytes: 1 << 20,
		},
		Roles:   RolesConfig{HTTP: true, Workers: true, Scheduler: true},
		Workers: WorkersConfig{Charges: 8, Events: 4, Alerts: 1, Runs: 2},
		Queue: QueueConfig{
			JobTimeout:    queue.DefaultJobTimeout,
			RescueAfter:   queue.DefaultRescueAfter,
			ShutdownGrace: 30 * time.Second,
			RetryBase:     queue.DefaultRetryBase,
			RetryMax:      queue.DefaultRetryMax,
		},
		Charges: ChargesConfig{
			Lease:         charge.DefaultLease,
			MaxAttempts:   charge.DefaultMaxAttempts,
			PendingPoll:   charge.DefaultPendingPoll,
			PendingGiveUp: charge.DefaultPendingGiveUp,
		},
		Reconcile: ReconcileConfig{
			Tolerance:      reconciler.DefaultTolerance,
			Lease:          reconciler.DefaultLease,
			StatementGrace: reconciler.DefaultGrace,
		},
		Alerts: AlertsConfig{
			Mode:              "off",
			ImmediateSeverity: string(ledger.SeverityHigh),
			SummaryTop:        alerts.DefaultSummaryTop,
			ChannelInterval:   alerts.DefaultChannelInterval,
			MaxAttempts:       alerts.DefaultMaxAttempts,
			APIURL:            alerts.DefaultAPIURL,
		},
		Console: ConsoleConfig{
			Mode:       "off",
			UserHeader: "X-Forwarded-Email",
			OIDC: ConsoleOIDC{
				Scopes:      console.DefaultScopes(),
				GroupsClaim: console.DefaultGroupsClaim,
				SessionTTL:  console.DefaultSessionTTL,
			},
		},
		Providers: ProvidersConfig{
			Mpesa: MpesaConfig{
				Zone:               mpesa.ZoneName,
				SettlementGrace:    mpesa.DefaultSettlementGrace,
				ReferenceNormalise: true,
				BaseURL:            mpesa.ProductionURL,
				TransactionType:    mpesa.PayBillOnline,
				HTTPTimeout:        mpesa.DefaultHTTPTimeout,
				Callbacks: MpesaCallbacksConfig{
					Prefix:       mpesa.DefaultPrefix,
					MaxBodyBytes: mpesa.DefaultMaxBodyBytes,
					ReadTimeout:  mpesa.DefaultReadTimeout,
				},
				Pull: MpesaPullConfig{MaxPages: mpesa.DefaultPullMaxPages},
			},
			Stripe: StripeConfig{
				Zone:               "UTC",
				SettlementGrace:    stripe.DefaultSettlementGrace,
				ReferenceNormalise: true,
				// The SDK's own retries of safe failures; the library's
				// zero means none, so this is the binary's choice.
				MaxNetworkRetries:       2,
				Timeout:                 stripe.DefaultTimeout,
				PullBalanceTransactions: true,
				PageSize:                stripe.DefaultPageSize,
				ReportTimezone:          "UTC",
				WebhookTolerance:        stripe.DefaultWebhookTolerance,
				IntentMetadataKey:       stripe.MetadataIntentKey,
			},
		},
	}
}

// registerDefaults gives viper every key of the configuration with its
// default (the fields of def, walked by their mapstructure names), so that a
// RECONCILE_* variable reaches any key, also one the config file does not
// mention. Nil lists and maps are registered empty. Lists and maps of
// sections (statements, schedules) come from the config file only.
func registerDefaults(v *viper.Viper, def reflect.Value, prefix string) {
	t := def.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("mapstructure")
		if name == "" || name == "-" {
			continue
		}
		key, val := prefix+name, def.Field(i)
		switch k := f.Type.Kind(); {
		case k == reflect.Struct:
			registerDefaults(v, val, key+".")
		case (k == reflect.Slice || k == reflect.Map) && f.Type.Elem().Kind() == reflect.Struct:
		case k == reflect.Slice && val.IsNil():
			v.SetDefault(key, reflect.MakeSlice(f.Type, 0, 0).Interface())
		case k == reflect.Map && val.IsNil():
			v.SetDefault(key, reflect.MakeMap(f.Type).Interface())
		default:
			v.SetDefault(key, val.Interface())
		}
	}
}

// SecretKeys lists the keys that may only come from the environment: those
// whose field is tagged secret:"env".
func SecretKeys() []string { return slices.Clone(secretKeys) }

// secretKeys are the keys of SecretKeys.
var secretKeys = func() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := f.Tag.Get("mapstructure")
			switch {
			case name == "" || name == "-":
			case f.Tag.Get("secret") == "env":
				out = append(out, prefix+name)
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}()

// EnvName is the environment variable of a key: RECONCILE_ and the key in
// upper case, dots as underscores.
func EnvName(key string) string {
	return "RECONCILE_" + strings.ToUpper(strings.NewReplacer(".", "_").Replace(key))
}

// Source says where the configuration comes from besides the environment
// and the defaults.
type Source struct {
	// File is the config file; "" reads ./config.yaml when it exists.
	File string
	// DatabaseURL, when set, is the --database-url flag: it overrides the
	// environment and the file.
	DatabaseURL string
}

// Load reads the config file, the environment and the flags over the
// defaults, then validates.
func Load(src Source) (*Config, error) {
	v := viper.New()
	registerDefaults(v, reflect.ValueOf(Default()), "")
	v.SetEnvPrefix("RECONCILE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if src.DatabaseURL != "" {
		v.Set("database_url", src.DatabaseURL)
	}
	file := src.File
	switch {
	case file != "":
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
	default:
		if _, err := os.Stat("config.yaml"); err == nil {
			v.SetConfigFile("config.yaml")
			if err := v.ReadInConfig(); err != nil {
				return nil, fmt.Errorf("config config.yaml: %w", err)
			}
		}
	}
	for _, k := range secretKeys {
		if v.InConfig(k) {
			return nil, fmt.Errorf("config %s: %s is a secret and is read only from the environment (%s)",
				v.ConfigFileUsed(), k, EnvName(k))
		}
	}
	if err := unknownKeys(v); err != nil {
		return nil, err
	}
	var cfg Config
	if err := v.Unmarshal(&cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	)), func(dc *mapstructure.DecoderConfig) {
		// Keys inside lists and maps (statements, schedules) are checked here.
		dc.ErrorUnused = true
	}); err != nil {
		return nil, fmt.Errorf("config %s: %w", v.ConfigFileUsed(), err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// unknownKeys refuses keys in the config file that the configuration does
// not have, so a typo fails instead of being ignored.
func unknownKeys(v *viper.Viper) error {
	if v.ConfigFileUsed() == "" {
		return nil
	}
	known := map[string]bool{}
	collectKeys(reflect.TypeFor[Config](), "", known)
	for _, k := range v.AllKeys() {
		if !v.InConfig(k) {
			continue
		}
		if !known[k] && !knownPrefix(known, k) {
			return fmt.Errorf("config %s: unknown key %s", v.ConfigFileUsed(), k)
		}
	}
	return nil
}

// knownPrefix allows free-form maps (keys below a map-typed key).
func knownPrefix(known map[string]bool, k string) bool {
	for p := range known {
		if strings.HasSuffix(p, ".*") && strings.HasPrefix(k, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

func collectKeys(t reflect.Type, prefix string, out map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("mapstructure")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		switch f.Type.Kind() {
		case reflect.Struct:
			collectKeys(f.Type, key+".", out)
		case reflect.Map:
			out[key] = true
			out[key+".*"] = true
			if f.Type.Elem().Kind() == reflect.Struct {
				collectKeys(f.Type.Elem(), key+".*.", out)
			}
		default:
			out[key] = true
		}
	}
}

// Validate checks every setting and names the key at fault.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if _, err := database.Engine(c.DatabaseURL); err != nil {
		bad("database_url", "%v", err)
	}
	if _, err := c.Limits.Amounts(); err != nil {
		bad("limits.max_amounts", "%v", err)
	}
	// Slack links to the console's findings pages when it is served and
	// its address is known.
	if u, err := c.Console.FindingsURL(); err != nil {
		errs = append(errs, err)
	} else if c.Alerts.FindingsURL == "" {
		c.Alerts.FindingsURL = u
	}
	if c.Database.MaxConns < 0 {
		bad("database.max_conns", "must not be negative")
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.Log.Level)); err != nil {
		bad("log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
	}
	if !slices.Contains([]string{"auto", "text", "json"}, c.Log.Format) {
		bad("log.format", "unknown format %q (want auto, text or json)", c.Log.Format)
	}
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			bad(key, "must be a positive duration such as 30s or 5m")
		}
	}
	positive("http.read_timeout", c.HTTP.ReadTimeout)
	positive("http.write_timeout", c.HTTP.WriteTimeout)
	if c.HTTP.MaxBodyBytes <= 0 {
		bad("http.max_body_bytes", "must be positive")
	}
	switch {
	case strings.TrimSpace(c.HTTP.AdminListen) == "":
		bad("http.admin_listen", "is required: the address of /metrics, /healthz and /readyz, e.g. 127.0.0.1:8081")
	case c.HTTP.AdminListen == c.HTTP.Listen && !strings.HasSuffix(c.HTTP.Listen, ":0"):
		bad("http.admin_listen", "must differ from http.listen: metrics and health stay off the public port")
	}
	switch l := c.Console.Listen; {
	case l == "" || strings.HasSuffix(l, ":0"):
	case l == c.HTTP.Listen || l == c.HTTP.AdminListen:
		bad("console.listen", "must differ from http.listen and http.admin_listen (leave it empty to serve the console on http.listen)")
	}
	for key, n := range map[string]int{"workers.charges": c.Workers.Charges, "workers.events": c.Workers.Events,
		"workers.alerts": c.Workers.Alerts, "workers.runs": c.Workers.Runs} {
		if n < 0 {
			bad(key, "must not be negative")
		}
	}
	positive("queue.job_timeout", c.Queue.JobTimeout)
	positive("queue.rescue_after", c.Queue.RescueAfter)
	positive("queue.shutdown_grace", c.Queue.ShutdownGrace)
	if c.Queue.RescueAfter < c.Queue.JobTimeout {
		bad("queue.rescue_after", "must be at least queue.job_timeout (%s)", c.Queue.JobTimeout)
	}
	positive("charges.lease", c.Charges.Lease)
	positive("queue.retry_base", c.Queue.RetryBase)
	positive("queue.retry_max", c.Queue.RetryMax)
	if c.Queue.RetryBase > 0 && c.Queue.RetryMax > 0 {
		var span time.Duration
		b := queue.Backoff{Base: c.Queue.RetryBase, Max: c.Queue.RetryMax}
		for n := 1; n < c.Charges.MaxAttempts; n++ {
			span += b.Nominal(n)
		}
		if span > 20*time.Hour {
			bad("charges.max_attempts", "%d tries with this backoff span %s; charges must stay well inside Stripe's 24-hour idempotency key retention (at most 20h)", c.Charges.MaxAttempts, span.Round(time.Minute))
		}
	}
	positive("charges.pending_poll", c.Charges.PendingPoll)
	positive("charges.pending_give_up", c.Charges.PendingGiveUp)
	if c.Charges.MaxAttempts < 1 {
		bad("charges.max_attempts", "must be at least 1")
	}
	for key, n := range map[string]int{"workers.charges": c.Workers.Charges, "workers.events": c.Workers.Events} {
		if c.Roles.Workers && n < 1 {
			bad(key, "must be at least 1 when roles.workers is on")
		}
	}
	if c.Roles.Workers && c.Alerts.Mode != "off" && c.Workers.Alerts < 1 {
		bad("workers.alerts", "must be at least 1 when alerts are on")
	}
	if c.Roles.Workers && len(c.Schedules) > 0 && c.Workers.Runs < 1 {
		bad("workers.runs", "must be at least 1 when schedules are set")
	}
	for key, d := range map[string]time.Duration{"providers.mpesa.settlement_grace": c.Providers.Mpesa.SettlementGrace,
		"providers.stripe.settlement_grace": c.Providers.Stripe.SettlementGrace, "reconcile.statement_grace": c.Reconcile.StatementGrace} {
		if d < 0 {
			bad(key, "must not be negative")
		}
	}
	for key, d := range map[string]time.Duration{"providers.mpesa.http_timeout": c.Providers.Mpesa.HTTPTimeout,
		"providers.mpesa.callbacks.read_timeout": c.Providers.Mpesa.Callbacks.ReadTimeout,
		"providers.stripe.timeout":               c.Providers.Stripe.Timeout, "providers.stripe.webhook_tolerance": c.Providers.Stripe.WebhookTolerance} {
		positive(key, d)
	}
	if c.Providers.Stripe.PageSize < 1 || c.Providers.Stripe.PageSize > 100 {
		bad("providers.stripe.page_size", "must be 1 to 100")
	}
	if k := c.Providers.Stripe.IntentMetadataKey; k == "" || len(k) > 40 || strings.ContainsAny(k, "[]'\"\\ \t\n") {
		bad("providers.stripe.intent_metadata_key", "must be 1 to 40 characters without brackets, quotes, backslashes or spaces (Stripe metadata keys are at most 40)")
	}
	if c.Providers.Stripe.MaxNetworkRetries < 0 {
		bad("providers.stripe.max_network_retries", "must not be negative")
	}
	if c.Providers.Mpesa.Callbacks.MaxBodyBytes <= 0 {
		bad("providers.mpesa.callbacks.max_body_bytes", "must be positive")
	}
	positive("reconcile.tolerance", c.Reconcile.Tolerance)
	positive("reconcile.lease", c.Reconcile.Lease)
	if !slices.Contains([]string{"off", "webhook", "bot"}, c.Alerts.Mode) {
		bad("alerts.mode", "unknown mode %q (want off, webhook or bot)", c.Alerts.Mode)
	} else if _, _, err := c.Alerts.Planning(); err != nil {
		// Secrets are checked by the commands that deliver (serve).
		errs = append(errs, err)
	}
	errs = append(errs, c.Console.validate()...)
	setups, err := BuildProviders(c, time.Now, func(string) func(context.Context, *ledger.ParseError, []byte) error { return nil })
	if err != nil {
		errs = append(errs, err)
	}
	c.Alerts.zones = map[string]*time.Location{}
	for name, p := range setups {
		c.Alerts.zones[name] = p.Zone
	}
	for name, sc := range c.Schedules {
		if _, err := sc.Spec(name, time.UTC); err != nil {
			bad("schedules."+name, "%v", err)
		} else if _, ok := setups[name]; !ok && err == nil {
			bad("schedules."+name, "no provider %q is configured", name)
		}
	}
	for i, ep := range c.Events.Endpoints {
		if u, err := url.Parse(ep); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad(fmt.Sprintf("events.endpoints[%d]", i), "not an http(s) URL")
		}
	}
	// Sorted, so that the same mistakes read the same on every run.
	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// ValidateDelivery checks the secrets only delivering needs (the Slack
// secrets, the events signing secret): `reconcile serve` needs them, the
// other commands do not, so a missing one does not stop them.
func (c *Config) ValidateDelivery() error {
	var errs []error
	if _, _, err := c.Alerts.Delivery(); err != nil {
		errs = append(errs, err)
	}
	if c.Alerts.Interactions.Enabled {
		if _, err := c.Alerts.InteractionsEndpoint(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.Events.Endpoints) > 0 && len(c.Events.SigningSecret) < 16 {
		errs = append(errs, fmt.Errorf("config events.signing_secret: set %s to a secret of at least 16 characters to sign events",
			EnvName("events.signing_secret")))
	}
	return errors.Join(errs...)
}

// SecretValues lists the configured secrets and the database password, for
// scrubbing error text.
func (c *Config) SecretValues() []string {
	var out []string
	if u := c.DatabaseURL; u != "" && database.Redact(u) != u {
		out = append(out, u)
		if p := database.Password(u); p != "" {
			out = append(out, p)
		}
	}
	for _, k := range secretKeys {
		var vs []string
		switch v := c.value(k).Interface().(type) {
		case string:
			vs = []string{v}
		case []string:
			vs = v
		}
		for _, v := range vs {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// value is the setting at key (a dotted mapstructure path, such as
// providers.stripe.api_key), or the zero Value when there is none.
func (c *Config) value(key string) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for _, name := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}
		}
		t, found := v.Type(), false
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("mapstructure") == name {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}
		}
	}
	return v
}
