package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/console"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
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
	DatabaseURL string `mapstructure:"database_url"`
	// DatabaseReadURL is a read replica of database_url (a PostgreSQL
	// standby) for the reads that can go there: reports, the console's
	// lists and a run's matching when the replica has caught up; empty
	// (the default) reads the primary. PostgreSQL only.
	DatabaseReadURL string `mapstructure:"database_read_url"`
	// DatabaseReadMaxLag is how far the replica may lag behind the primary
	// before reads go to the primary instead; default 30s.
	DatabaseReadMaxLag time.Duration   `mapstructure:"database_read_max_lag"`
	Database           DatabaseConfig  `mapstructure:"database"`
	Log                LogConfig       `mapstructure:"log"`
	HTTP               HTTPConfig      `mapstructure:"http"`
	Roles              RolesConfig     `mapstructure:"roles"`
	Workers            WorkersConfig   `mapstructure:"workers"`
	Queue              QueueConfig     `mapstructure:"queue"`
	Charges            ChargesConfig   `mapstructure:"charges"`
	Events             EventsConfig    `mapstructure:"events"`
	Reconcile          ReconcileConfig `mapstructure:"reconcile"`
	Alerts             AlertsConfig    `mapstructure:"alerts"`
	Console            ConsoleConfig   `mapstructure:"console"`
	Providers          ProvidersConfig `mapstructure:"providers"`
	// Statements are generic CSV statement layouts, each a provider of its own.
	Statements []csvfile.Mapping `mapstructure:"statements"`
	// Banks are bank accounts, each a provider of its own (bank:<name>).
	Banks []BankConfig `mapstructure:"banks"`
	// Schedules reconcile providers periodically in `reconcile serve`, by
	// provider name.
	Schedules map[string]ScheduleConfig `mapstructure:"schedules"`
	// Limits bound what input may bring in.
	Limits LimitsConfig `mapstructure:"limits"`
	Books  BooksConfig  `mapstructure:"books"`
	// Approvals say which refunds and write-offs need a second person.
	Approvals ApprovalsConfig `mapstructure:"approvals"`
}

// BooksConfig configures work on the books as a whole (`reconcile books`).
type BooksConfig struct {
	// Retention is how long raw payloads are kept: `books prune` without
	// --before or --older-than removes those older than this; 0 (the
	// default) keeps them until told.
	Retention time.Duration `mapstructure:"retention"`
	// EraseKey is the secret erasure tokens are computed with (at least 16
	// bytes; keep it the same, so that a person erased twice gets one
	// token): RECONCILE_BOOKS_ERASE_KEY.
	EraseKey string `mapstructure:"erase_key" secret:"env"`
}

// ApprovalsConfig is the two-person rule for money: a refund or a write-off
// from a finding above its currency's threshold waits for another operator
// to approve it.
type ApprovalsConfig struct {
	// Thresholds by currency, in major units as decimal text ({KES:
	// "10000", USD: "100"}); a currency not listed needs no approval.
	Thresholds map[string]string `mapstructure:"thresholds"`
	// ExpireAfter is how long a request waits for its approval; default 24h.
	ExpireAfter time.Duration `mapstructure:"expire_after"`
}

// Rules parses the section into the findings service's approval rules.
func (a ApprovalsConfig) Rules() (findings.Approvals, error) {
	out := findings.Approvals{Thresholds: make(map[string]decimal.Decimal, len(a.Thresholds)), ExpireAfter: a.ExpireAfter}
	var errs []error
	for _, cur := range slices.Sorted(maps.Keys(a.Thresholds)) {
		code, err := money.NormalizeCurrency(cur)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", cur, err))
			continue
		}
		d, err := decimal.NewFromString(strings.TrimSpace(a.Thresholds[cur]))
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %q is not a decimal amount", cur, a.Thresholds[cur]))
		case d.IsNegative():
			errs = append(errs, fmt.Errorf("%s: %s is negative", cur, a.Thresholds[cur]))
		default:
			out.Thresholds[code] = d
		}
	}
	return out, errors.Join(errs...)
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
	// ReceiptPoll is how often a refund that waits for the charge's
	// receipt (an M-Pesa reversal of a charge whose callback was lost)
	// looks again; default 5m.
	ReceiptPoll time.Duration `mapstructure:"receipt_poll"`
	// ReceiptWait is how long such a refund waits before it fails, nothing
	// sent; default 840h (35 days).
	ReceiptWait time.Duration `mapstructure:"receipt_wait"`
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
		DatabaseURL:        database.DefaultURL,
		DatabaseReadMaxLag: database.DefaultReadMaxLag,
		Log:                LogConfig{Level: "info", Format: "auto"},
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
			ReceiptPoll:   charge.DefaultReceiptPoll,
			ReceiptWait:   charge.DefaultReceiptWait,
		},
		Approvals: ApprovalsConfig{Thresholds: map[string]string{}, ExpireAfter: findings.DefaultApprovalExpiry},
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
				Horizon:            DefaultHorizon,
				IntentKind:         string(ledger.IntentExpected),
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
				Horizon:            DefaultHorizon,
				IntentKind:         string(ledger.IntentCharge),
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
