package service

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/api"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/console"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/logging"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/schedule"
)

// Deps are what the service is built from: the checked configuration and
// the parts the command line resolved from it, built once.
type Deps struct {
	Config config.Config
	Store  ledger.Store
	// ConsoleStore is what the console reads and acts through: Store, or
	// Store with its lists read from a replica.
	ConsoleStore console.Store
	// Providers are the configured providers with their clients, by name;
	// Zones their zones.
	Providers map[string]config.Provider
	Zones     map[string]*time.Location
	// Findings applies people's decisions from the console, the API and
	// Slack.
	Findings *findings.Service
	// Charges builds the charge service of this process, counting into m;
	// the service gives it its queue.
	Charges func(m *charge.Metrics) *charge.Service
	// Reconciler builds the reconciler scheduled runs use.
	Reconciler func(q *queue.Queue, charges *charge.Service) (*reconciler.Reconciler, error)
	// Replay feeds a quarantined item through its path again (the
	// console's Replay).
	Replay func(ctx context.Context, q ledger.QuarantineItem) (string, error)
	// Redact scrubs secret values from text shown to people.
	Redact func(string) string
	Clock  func() time.Time
	Logger *slog.Logger
}

// Server is `reconcile serve`: the queue's workers and scheduler, the public
// HTTP server (callbacks, the API, Slack's interactions, the console), the
// admin server (metrics and health) and the metrics it keeps.
type Server struct {
	d       Deps
	cfg     config.Config
	store   ledger.Store
	queue   *queue.Queue
	charges *charge.Service
	// findings applies people's decisions from the console, the API and
	// Slack.
	findings *findings.Service
	registry *prometheus.Registry
	intake   *intake.Processor
	metrics  *serveMetrics
	// mux serves the public port: callbacks and the intents API.
	mux *routeMux
	// consoleMux serves the console when it has a listener of its own
	// (console.listen); nil otherwise.
	consoleMux *routeMux
	// admin serves the admin port: /metrics, /healthz, /readyz.
	admin  *routeMux
	logger *slog.Logger
}

// New builds the service: its workers, its queue, its routes and its
// metrics, with every series known at start at zero. It starts nothing.
func New(ctx context.Context, d Deps) (*Server, error) {
	cfg := d.Config
	if d.ConsoleStore == nil {
		d.ConsoleStore = d.Store
	}
	k := known{providers: names(d.Providers), chargers: chargers(d.Providers), alerts: alerts.Mode(cfg.Alerts.Mode)}
	s := &Server{d: d, cfg: cfg, store: d.Store, findings: d.Findings, registry: prometheus.NewRegistry(), mux: newRouteMux(),
		admin: newRouteMux(), logger: d.Logger, metrics: newServeMetrics(d.Store, k.providers, d.Logger)}
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.charges = d.Charges(s.metrics.charges)
	specs, err := cfg.Specs(d.Providers)
	if err != nil {
		return nil, err
	}
	for _, sp := range specs {
		k.scheduled = append(k.scheduled, sp.Provider)
	}
	workers, ticks, runs, err := s.workers(specs)
	if err != nil {
		return nil, err
	}
	if s.queue, err = queue.New(s.store, s.queueConfig(workers, specs)); err != nil {
		return nil, err
	}
	s.charges.UseQueue(s.queue)
	ticks.Queue = s.queue
	if runs.Reconciler, err = d.Reconciler(s.queue, s.charges); err != nil {
		return nil, err
	}
	s.metrics.register(ctx, s.registry, s.queue)
	if k.callbacks, err = s.routes(); err != nil {
		return nil, err
	}
	s.metrics.initialise(k)
	s.metrics.refresh(ctx)
	return s, nil
}

// workers registers the jobs this process can work: charges and events,
// the scheduler's ticks, reconcile runs and, when alerts are on, their
// delivery. The caller gives the ticks their queue and the runs their
// reconciler.
func (s *Server) workers(specs []schedule.Spec) (*river.Workers, *reconciler.TickWorker, *reconciler.RunWorker, error) {
	workers := river.NewWorkers()
	charge.AddWorkers(workers, s.charges)
	ticks := &reconciler.TickWorker{Store: s.store, Specs: map[string]schedule.Spec{}, Accounts: config.AccountsOf(s.d.Providers),
		Clock: s.d.Clock, Logger: s.logger}
	for _, sp := range specs {
		ticks.Specs[sp.Provider] = sp
	}
	river.AddWorker(workers, ticks)
	runs := &reconciler.RunWorker{Store: s.store, Lease: s.cfg.Reconcile.Lease, Logger: s.logger,
		Outcome: s.metrics.runs.Outcome, AfterRun: s.metrics.refresh}
	river.AddWorker(workers, runs)
	slack, alertsOn, err := s.cfg.AlertsDelivery(s.d.Zones)
	if err != nil {
		return nil, nil, nil, err
	}
	if alertsOn {
		s.metrics.alerts = alerts.NewMetrics()
		d, err := alerts.NewDeliverer(s.store, slack, alerts.Options{Logger: s.logger, Metrics: s.metrics.alerts, Now: s.d.Clock})
		if err != nil {
			return nil, nil, nil, err
		}
		river.AddWorker(workers, &alerts.Worker{Deliverer: d})
	}
	return workers, ticks, runs, nil
}

// queueConfig sets the queue up for this process's roles: which queues it
// works, whether it schedules and stands for leader.
func (s *Server) queueConfig(workers *river.Workers, specs []schedule.Spec) queue.Config {
	cfg := s.cfg
	host, _ := os.Hostname()
	qcfg := queue.Config{ID: riverID(host, os.Getpid()), Logger: slog.New(logging.AtLeast(s.logger.Handler(), slog.LevelWarn)).With("component", "river"),
		JobTimeout: cfg.Queue.JobTimeout, RescueStuckJobsAfter: cfg.Queue.RescueAfter,
		RetryPolicy: queue.Backoff{Base: cfg.Queue.RetryBase, Max: cfg.Queue.RetryMax}}
	if cfg.Roles.Workers || cfg.Roles.Scheduler {
		qcfg.Workers = workers
	}
	if cfg.Roles.Workers {
		qcfg.Queues = map[string]int{queue.QueueCharges: cfg.Workers.Charges, queue.QueueEvents: cfg.Workers.Events,
			queue.QueueAlerts: cfg.Workers.Alerts, queue.QueueRuns: cfg.Workers.Runs}
	}
	logSchedules(s.logger, specs, cfg.Roles.Scheduler, s.d.Clock())
	if cfg.Roles.Scheduler {
		qcfg.PeriodicJobs = reconciler.PeriodicJobs(specs)
	} else {
		// Only scheduler replicas stand for leader: the leader is the one
		// that schedules (and runs River's maintenance).
		qcfg.NoLeader = true
	}
	return qcfg
}

// Public serves the public port: callbacks, the API, Slack's interactions
// and, without a listener of its own, the console; with the body limit.
func (s *Server) Public() http.Handler {
	return http.MaxBytesHandler(s.mux, s.cfg.HTTP.MaxBodyBytes)
}

// Admin serves the admin port: /metrics, /healthz and /readyz.
func (s *Server) Admin() http.Handler { return s.admin }

// Patterns lists the routes of the public and the admin ports, for
// checking them against the OpenAPI description.
func (s *Server) Patterns() []string { return slices.Concat(s.mux.patterns, s.admin.patterns) }

// routes sets up both listeners' handlers and returns the providers whose
// callback endpoints are served.
func (s *Server) routes() ([]string, error) {
	s.admin.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		api.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.admin.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.store.Ping(ctx); err != nil {
			api.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unreachable"})
			return
		}
		api.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	s.admin.Handle("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	callbacks, err := s.callbackRoutes()
	if err != nil {
		return nil, err
	}
	if err := s.consoleRoutes(); err != nil {
		return nil, err
	}
	if err := s.slackRoutes(); err != nil {
		return nil, err
	}
	if s.cfg.HTTP.APIToken != "" {
		api.New(api.Config{Token: s.cfg.HTTP.APIToken, Store: s.store, Charges: s.charges, Providers: s.providers,
			Accounts: config.AccountsOf(s.d.Providers), Findings: s.findings, Clock: s.d.Clock, Logger: s.logger}).Routes(s.mux)
	} else {
		s.logger.Info("intents API off: set RECONCILE_HTTP_API_TOKEN to serve it")
	}
	return callbacks, nil
}

// callbackRoutes serves the M-Pesa callback endpoints and the Stripe webhook
// when their secrets are configured, and returns the providers served.
func (s *Server) callbackRoutes() ([]string, error) {
	var served []string
	cfg := s.cfg
	s.intake = &intake.Processor{Store: s.store, Applier: s.charges, AttemptAccounts: config.AttemptAccounts(s.d.Providers),
		Clock: s.d.Clock, Logger: s.logger}
	m := cfg.Providers.Mpesa
	if m.Callbacks.PathToken != "" {
		h, err := mpesa.NewHandler(m.HandlerConfig(s.store, s.d.Clock), s.metrics.callbacks.Counting(s.intake), s.logger)
		if err != nil {
			return nil, fmt.Errorf("config providers.mpesa.callbacks: %w", err)
		}
		s.mux.Handle(h.Pattern(), s.metrics.callbacks.CountResponses(mpesa.Provider, h))
		served = append(served, mpesa.Provider)
		s.logger.Info("m-pesa callbacks served", "prefix", h.Pattern())
	} else {
		s.logger.Info("m-pesa callbacks off: set RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN to serve them")
	}
	if st := cfg.Providers.Stripe; st.ServesWebhook() {
		h, err := stripe.NewWebhookHandler(stripe.WebhookConfig{Secrets: st.WebhookSecrets, Accounts: st.WebhookAccounts(),
			Parser: st.EventParser(), Receiver: s.metrics.callbacks.Counting(s.intake),
			Tolerance: st.WebhookTolerance, MaxBodyBytes: cfg.HTTP.MaxBodyBytes, Logger: s.logger, Clock: s.d.Clock})
		if err != nil {
			return nil, fmt.Errorf("config providers.stripe: %w", err)
		}
		s.mux.Handle("POST /webhooks/stripe", s.metrics.callbacks.CountResponses(stripe.Provider, h))
		served = append(served, stripe.Provider)
	}
	return served, nil
}

// consoleRoutes serves the console under /console when it is on.
func (s *Server) consoleRoutes() error {
	cc, err := s.cfg.Console.Console()
	if err != nil || cc == nil {
		return err
	}
	c, err := console.New(*cc, console.Deps{Store: s.d.ConsoleStore, Jobs: console.QueueJobs(s.queue, s.d.Redact), Replay: s.d.Replay,
		Findings: s.findings, Providers: s.providers, Accounts: config.AccountsOf(s.d.Providers), Clock: s.d.Clock, Logger: s.logger})
	if err != nil {
		return err
	}
	mux := s.mux
	if s.cfg.Console.Listen != "" {
		s.consoleMux = newRouteMux()
		mux = s.consoleMux
	}
	mux.Handle("/console/", c.Handler())
	s.logger.Info("console served", "path", "/console/", "mode", cc.Mode, "own_listener", s.cfg.Console.Listen != "")
	return nil
}

// slackRoutes serves POST /slack/interactions when the buttons are on.
func (s *Server) slackRoutes() error {
	if !s.cfg.Alerts.Interactions.Enabled {
		return nil
	}
	cfg, err := s.cfg.SlackInteractions(s.d.Zones)
	if err != nil {
		return err
	}
	cfg.Store, cfg.Clock, cfg.Logger, cfg.Findings = s.store, s.d.Clock, s.logger, s.findings
	h, err := alerts.NewInteractions(cfg)
	if err != nil {
		return fmt.Errorf("config %w", err)
	}
	s.mux.Handle("POST /slack/interactions", h)
	s.logger.Info("slack interactions served", "path", "/slack/interactions")
	return nil
}

// providers lists the providers findings can be filtered by, with their
// zones.
func (s *Server) providers(ctx context.Context) (map[string]*time.Location, error) {
	return findings.Providers(ctx, s.store, s.d.Zones)
}

// routeMux is a ServeMux that remembers its patterns, so that tests can
// check each route against the OpenAPI description.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func newRouteMux() *routeMux { return &routeMux{ServeMux: http.NewServeMux()} }

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *routeMux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// names lists the providers' names, sorted.
func names(ps map[string]config.Provider) []string {
	out := make([]string, 0, len(ps))
	for name := range ps {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// chargers lists the providers that can charge, sorted.
func chargers(ps map[string]config.Provider) []string {
	var out []string
	for _, name := range names(ps) {
		if ps[name].Charger != nil {
			out = append(out, name)
		}
	}
	return out
}
