package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/queue"
)

// Validate checks every setting and names the key at fault. It reports
// every mistake, not the first, one section after another, sorted so that
// the same mistakes read the same on every run. It changes nothing, builds
// nothing and reads nothing but the zone database.
func (c Config) Validate() error {
	var errs []error
	for _, section := range []func() []error{
		c.validateDatabase, c.Log.validate, c.HTTP.validate, c.validateConsole, c.validateWorkers, c.validateQueue,
		c.Charges.validate, c.Events.validate, c.Reconcile.validate, c.validateAlerts, c.validateProviders,
		c.Providers.validate, c.validateSchedules, c.Limits.validate, c.Approvals.validate,
	} {
		errs = append(errs, section()...)
	}
	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// ValidateDelivery checks the secrets only delivering needs (the Slack
// secrets, the events signing secret): `reconcile serve` needs them, the
// other commands do not, so a missing one does not stop them.
func (c Config) ValidateDelivery() error {
	var errs []error
	if _, _, err := c.AlertsDelivery(nil); err != nil {
		errs = append(errs, err)
	}
	if c.Alerts.Interactions.Enabled {
		if _, err := c.SlackInteractions(nil); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.Events.Endpoints) > 0 && len(c.Events.SigningSecret) < 16 {
		errs = append(errs, fmt.Errorf("config events.signing_secret: set %s to a secret of at least 16 characters to sign events",
			EnvName("events.signing_secret")))
	}
	return errors.Join(errs...)
}

// checker collects the mistakes of one section.
type checker struct{ errs []error }

func (k *checker) bad(key, format string, args ...any) {
	k.errs = append(k.errs, fmt.Errorf("config %s: %s", key, fmt.Sprintf(format, args...)))
}

func (k *checker) positive(key string, d time.Duration) {
	if d <= 0 {
		k.bad(key, "must be a positive duration such as 30s or 5m")
	}
}

func (k *checker) notNegative(key string, d time.Duration) {
	if d < 0 {
		k.bad(key, "must not be negative")
	}
}

func (c Config) validateDatabase() []error {
	var k checker
	if _, err := database.Engine(c.DatabaseURL); err != nil {
		k.bad("database_url", "%v", err)
	}
	if c.Database.MaxConns < 0 {
		k.bad("database.max_conns", "must not be negative")
	}
	if c.DatabaseReadURL != "" {
		primary, _ := database.Engine(c.DatabaseURL)
		replica, err := database.Engine(c.DatabaseReadURL)
		switch {
		case primary == ledger.EngineSQLite:
			k.bad("database_read_url", "a read replica needs PostgreSQL: database_url is SQLite, which has none (unset database_read_url)")
		case err != nil:
			k.bad("database_read_url", "%v", err)
		case replica != ledger.EnginePostgres:
			k.bad("database_read_url", "a read replica is a PostgreSQL standby: want postgres://..., not %s", database.Redact(c.DatabaseReadURL))
		}
	}
	k.positive("database_read_max_lag", c.DatabaseReadMaxLag)
	return k.errs
}

func (l LogConfig) validate() []error {
	var k checker
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(l.Level)); err != nil {
		k.bad("log.level", "unknown level %q (want debug, info, warn or error)", l.Level)
	}
	if !slices.Contains([]string{"auto", "text", "json"}, l.Format) {
		k.bad("log.format", "unknown format %q (want auto, text or json)", l.Format)
	}
	return k.errs
}

func (h HTTPConfig) validate() []error {
	var k checker
	k.positive("http.read_timeout", h.ReadTimeout)
	k.positive("http.write_timeout", h.WriteTimeout)
	if h.MaxBodyBytes <= 0 {
		k.bad("http.max_body_bytes", "must be positive")
	}
	switch {
	case strings.TrimSpace(h.AdminListen) == "":
		k.bad("http.admin_listen", "is required: the address of /metrics, /healthz and /readyz, e.g. 127.0.0.1:8081")
	case h.AdminListen == h.Listen && !strings.HasSuffix(h.Listen, ":0"):
		k.bad("http.admin_listen", "must differ from http.listen: metrics and health stay off the public port")
	}
	return k.errs
}

func (c Config) validateConsole() []error {
	var k checker
	switch l := c.Console.Listen; {
	case l == "" || strings.HasSuffix(l, ":0"):
	case l == c.HTTP.Listen || l == c.HTTP.AdminListen:
		k.bad("console.listen", "must differ from http.listen and http.admin_listen (leave it empty to serve the console on http.listen)")
	}
	return append(k.errs, c.Console.validate()...)
}

// validateWorkers checks the workers against the roles and what they work.
func (c Config) validateWorkers() []error {
	var k checker
	w := c.Workers
	for _, n := range []struct {
		key string
		n   int
	}{{"workers.charges", w.Charges}, {"workers.events", w.Events}, {"workers.alerts", w.Alerts}, {"workers.runs", w.Runs}} {
		if n.n < 0 {
			k.bad(n.key, "must not be negative")
		}
	}
	if c.Roles.Workers {
		if w.Charges < 1 {
			k.bad("workers.charges", "must be at least 1 when roles.workers is on")
		}
		if w.Events < 1 {
			k.bad("workers.events", "must be at least 1 when roles.workers is on")
		}
		if c.Alerts.Mode != "off" && w.Alerts < 1 {
			k.bad("workers.alerts", "must be at least 1 when alerts are on")
		}
		if len(c.Schedules) > 0 && w.Runs < 1 {
			k.bad("workers.runs", "must be at least 1 when schedules are set")
		}
	}
	return k.errs
}

// validateQueue checks the queue, and that a charge's retries stay inside
// Stripe's idempotency key retention.
func (c Config) validateQueue() []error {
	var k checker
	q := c.Queue
	k.positive("queue.job_timeout", q.JobTimeout)
	k.positive("queue.rescue_after", q.RescueAfter)
	k.positive("queue.shutdown_grace", q.ShutdownGrace)
	if q.RescueAfter < q.JobTimeout {
		k.bad("queue.rescue_after", "must be at least queue.job_timeout (%s)", q.JobTimeout)
	}
	k.positive("queue.retry_base", q.RetryBase)
	k.positive("queue.retry_max", q.RetryMax)
	if q.RetryBase > 0 && q.RetryMax > 0 {
		var span time.Duration
		b := queue.Backoff{Base: q.RetryBase, Max: q.RetryMax}
		for n := 1; n < c.Charges.MaxAttempts; n++ {
			span += b.Nominal(n)
		}
		if span > 20*time.Hour {
			k.bad("charges.max_attempts", "%d tries with this backoff span %s; charges must stay well inside Stripe's 24-hour idempotency key retention (at most 20h)", c.Charges.MaxAttempts, span.Round(time.Minute))
		}
	}
	return k.errs
}

func (ch ChargesConfig) validate() []error {
	var k checker
	k.positive("charges.lease", ch.Lease)
	k.positive("charges.pending_poll", ch.PendingPoll)
	k.positive("charges.pending_give_up", ch.PendingGiveUp)
	k.positive("charges.receipt_poll", ch.ReceiptPoll)
	k.positive("charges.receipt_wait", ch.ReceiptWait)
	if ch.MaxAttempts < 1 {
		k.bad("charges.max_attempts", "must be at least 1")
	}
	return k.errs
}

func (e EventsConfig) validate() []error {
	var k checker
	for i, ep := range e.Endpoints {
		if u, err := url.Parse(ep); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			k.bad(fmt.Sprintf("events.endpoints[%d]", i), "not an http(s) URL")
		}
	}
	return k.errs
}

func (r ReconcileConfig) validate() []error {
	var k checker
	k.positive("reconcile.tolerance", r.Tolerance)
	k.positive("reconcile.lease", r.Lease)
	k.notNegative("reconcile.statement_grace", r.StatementGrace)
	return k.errs
}

// validateAlerts checks the alerts as the commands that plan them build
// them; the secrets are checked by ValidateDelivery.
func (c Config) validateAlerts() []error {
	var k checker
	if !slices.Contains([]string{"off", "webhook", "bot"}, c.Alerts.Mode) {
		k.bad("alerts.mode", "unknown mode %q (want off, webhook or bot)", c.Alerts.Mode)
	} else if _, _, err := c.AlertsPlanning(nil); err != nil {
		k.errs = append(k.errs, err)
	}
	return k.errs
}

// validate checks the providers' settings that need no client: the
// durations, Stripe's list size and metadata key; validateProviders checks
// what building them needs.
func (p ProvidersConfig) validate() []error {
	var k checker
	m, s := p.Mpesa, p.Stripe
	k.notNegative("providers.mpesa.settlement_grace", m.SettlementGrace)
	k.notNegative("providers.stripe.settlement_grace", s.SettlementGrace)
	for _, h := range []struct {
		key string
		v   time.Duration
	}{{"providers.mpesa.horizon", m.Horizon}, {"providers.stripe.horizon", s.Horizon}} {
		if h.v < 24*time.Hour || h.v > MaxHorizon {
			k.bad(h.key, "must be from 24h to %s (the look-ups beyond a window are bounded by it)", MaxHorizon)
		}
	}
	for _, ik := range []struct{ key, v string }{{"providers.mpesa.intent_kind", m.IntentKind}, {"providers.stripe.intent_kind", s.IntentKind}} {
		if ik.v != string(ledger.IntentCharge) && ik.v != string(ledger.IntentExpected) {
			k.bad(ik.key, "must be charge or expected")
		}
	}
	k.positive("providers.mpesa.http_timeout", m.HTTPTimeout)
	k.positive("providers.mpesa.callbacks.read_timeout", m.Callbacks.ReadTimeout)
	k.positive("providers.stripe.timeout", s.Timeout)
	k.positive("providers.stripe.webhook_tolerance", s.WebhookTolerance)
	if s.PageSize < 1 || s.PageSize > 100 {
		k.bad("providers.stripe.page_size", "must be 1 to 100")
	}
	if key := s.IntentMetadataKey; key == "" || len(key) > 40 || strings.ContainsAny(key, "[]'\"\\ \t\n") {
		k.bad("providers.stripe.intent_metadata_key", "must be 1 to 40 characters without brackets, quotes, backslashes or spaces (Stripe metadata keys are at most 40)")
	}
	if s.MaxNetworkRetries < 0 {
		k.bad("providers.stripe.max_network_retries", "must not be negative")
	}
	if m.Callbacks.MaxBodyBytes <= 0 {
		k.bad("providers.mpesa.callbacks.max_body_bytes", "must be positive")
	}
	return k.errs
}

// validateSchedules checks each schedule's cron and window, and that it
// names a configured provider.
func (c Config) validateSchedules() []error {
	var k checker
	names := map[string]bool{mpesa.Provider: true, stripe.Provider: true}
	for _, m := range c.Statements {
		names[statementName(m)] = true
	}
	for _, b := range c.Banks {
		names[ledger.BankProvider(b.Name)] = true
	}
	for name, sc := range c.Schedules {
		if _, err := sc.Spec(name, time.UTC); err != nil {
			k.bad("schedules."+name, "%v", err)
		} else if !names[name] {
			k.bad("schedules."+name, "no provider %q is configured", name)
		}
	}
	return k.errs
}

func (l LimitsConfig) validate() []error {
	var k checker
	if _, err := l.Amounts(); err != nil {
		k.bad("limits.max_amounts", "%v", err)
	}
	return k.errs
}

func (a ApprovalsConfig) validate() []error {
	var k checker
	if _, err := a.Rules(); err != nil {
		k.bad("approvals.thresholds", "%v", err)
	}
	k.positive("approvals.expire_after", a.ExpireAfter)
	return k.errs
}
