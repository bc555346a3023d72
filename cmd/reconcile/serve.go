package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"
	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/api"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/logging"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/schedule"
)

func newServeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the service: scheduled runs, HTTP (callbacks, API, health, metrics) and workers",
		Long: `Run everything in one process: River workers (charges, outgoing events, alerts, scheduled
reconcile runs), the public HTTP server (http.listen: provider callbacks, the intents API), the
admin HTTP server (http.admin_listen, loopback by default: /metrics, /healthz, /readyz) and the
leader-elected scheduler. Roles can be switched off in the config (roles.*) to split a large
deployment; the admin server runs in every process. Any number of replicas can share one
PostgreSQL. Every endpoint is described in docs/openapi.yaml.

On SIGTERM or SIGINT it stops taking new work, lets running jobs and requests finish for
queue.shutdown_grace, then cancels what is left; nothing acknowledged is lost.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := newServer(cmd.Context(), a)
			if err != nil {
				return err
			}
			return srv.run(cmd.Context())
		},
	}
}

// server is the wiring of `reconcile serve`.
type server struct {
	a *app
	// d are the resolved dependencies: the books, the providers, the
	// findings service.
	d       *deps
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

func newServer(ctx context.Context, a *app) (*server, error) {
	cfg := a.cfg
	d, err := a.resolve(ctx, storeCreate)
	if err != nil {
		return nil, err
	}
	store := d.store
	k := known{providers: sortedNames(d.providers), chargers: sortedNames(d.chargers()), alerts: alerts.Mode(cfg.Alerts.Mode)}
	s := &server{a: a, d: d, store: store, registry: prometheus.NewRegistry(), mux: newRouteMux(), admin: newRouteMux(),
		logger: a.logger, metrics: newServeMetrics(store, k.providers, a.logger)}
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	s.charges = a.chargeService(d, s.metrics.charges)
	s.findings = d.findings
	specs, err := cfg.Specs(d.providers)
	if err != nil {
		return nil, err
	}
	workers := river.NewWorkers()
	charge.AddWorkers(workers, s.charges)
	ticks := &reconciler.TickWorker{Store: store, Specs: map[string]schedule.Spec{}, Clock: a.clock, Logger: a.logger}
	for _, sp := range specs {
		ticks.Specs[sp.Provider] = sp
	}
	river.AddWorker(workers, ticks)
	runs := &reconciler.RunWorker{Store: store, Lease: cfg.Reconcile.Lease, Logger: a.logger,
		Outcome: s.metrics.runs.Outcome, AfterRun: s.metrics.refresh}
	river.AddWorker(workers, runs)
	for _, sp := range specs {
		k.scheduled = append(k.scheduled, sp.Provider)
	}
	slack, alertsOn, err := cfg.AlertsDelivery(d.zones)
	if err != nil {
		return nil, err
	}
	if alertsOn {
		s.metrics.alerts = alerts.NewMetrics()
		d, err := alerts.NewDeliverer(store, slack, alerts.Options{Logger: a.logger, Metrics: s.metrics.alerts, Now: a.clock})
		if err != nil {
			return nil, err
		}
		river.AddWorker(workers, &alerts.Worker{Deliverer: d})
	}
	host, _ := os.Hostname()
	qcfg := queue.Config{ID: riverID(host, os.Getpid()), Logger: slog.New(logging.AtLeast(a.logger.Handler(), slog.LevelWarn)).With("component", "river"), JobTimeout: cfg.Queue.JobTimeout,
		RescueStuckJobsAfter: cfg.Queue.RescueAfter, RetryPolicy: queue.Backoff{Base: cfg.Queue.RetryBase, Max: cfg.Queue.RetryMax}}
	if cfg.Roles.Workers || cfg.Roles.Scheduler {
		qcfg.Workers = workers
	}
	if cfg.Roles.Workers {
		qcfg.Queues = map[string]int{queue.QueueCharges: cfg.Workers.Charges, queue.QueueEvents: cfg.Workers.Events,
			queue.QueueAlerts: cfg.Workers.Alerts, queue.QueueRuns: cfg.Workers.Runs}
	}
	logSchedules(a.logger, specs, cfg.Roles.Scheduler, a.clock())
	if cfg.Roles.Scheduler {
		qcfg.PeriodicJobs = reconciler.PeriodicJobs(specs)
	} else {
		// Only scheduler replicas stand for leader: the leader is the one
		// that schedules (and runs River's maintenance).
		qcfg.NoLeader = true
	}
	if s.queue, err = queue.New(store, qcfg); err != nil {
		return nil, err
	}
	s.charges.UseQueue(s.queue)
	ticks.Queue = s.queue
	if runs.Reconciler, err = a.newReconciler(d, s.queue, s.charges); err != nil {
		return nil, err
	}
	s.metrics.register(s.registry, s.queue)
	if k.callbacks, err = s.routes(); err != nil {
		return nil, err
	}
	s.metrics.initialise(k)
	s.metrics.refresh(ctx)
	return s, nil
}

// routes sets up both listeners' handlers and returns the providers whose
// callback endpoints are served.
func (s *server) routes() ([]string, error) {
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
	if s.a.cfg.HTTP.APIToken != "" {
		api.New(api.Config{Token: s.a.cfg.HTTP.APIToken, Store: s.store, Charges: s.charges, Providers: s.providers,
			Findings: s.findings, Clock: s.a.clock, Logger: s.logger}).Routes(s.mux)
	} else {
		s.logger.Info("intents API off: set RECONCILE_HTTP_API_TOKEN to serve it")
	}
	return callbacks, nil
}

// callbackRoutes serves the M-Pesa callback endpoints and the Stripe webhook
// when their secrets are configured, and returns the providers served.
func (s *server) callbackRoutes() ([]string, error) {
	var served []string
	cfg := s.a.cfg
	s.intake = &intake.Processor{Store: s.store, Applier: s.charges, Clock: s.a.clock, Logger: s.logger}
	m := cfg.Providers.Mpesa
	if m.Callbacks.PathToken != "" {
		h, err := mpesa.NewHandler(m.HandlerConfig(s.store, s.a.clock), s.metrics.callbacks.Counting(s.intake), s.logger)
		if err != nil {
			return nil, fmt.Errorf("config providers.mpesa.callbacks: %w", err)
		}
		s.mux.Handle(h.Pattern(), s.metrics.callbacks.CountResponses(mpesa.Provider, h))
		served = append(served, mpesa.Provider)
		s.logger.Info("m-pesa callbacks served", "prefix", h.Pattern())
	} else {
		s.logger.Info("m-pesa callbacks off: set RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN to serve them")
	}
	if st := cfg.Providers.Stripe; len(st.WebhookSecrets) > 0 {
		h, err := stripe.NewWebhookHandler(stripe.WebhookConfig{Secrets: st.WebhookSecrets, Receiver: s.metrics.callbacks.Counting(s.intake),
			Tolerance: st.WebhookTolerance, MaxBodyBytes: cfg.HTTP.MaxBodyBytes, Logger: s.logger, Clock: s.a.clock})
		if err != nil {
			return nil, fmt.Errorf("config providers.stripe: %w", err)
		}
		s.mux.Handle("POST /webhooks/stripe", s.metrics.callbacks.CountResponses(stripe.Provider, h))
		served = append(served, stripe.Provider)
	}
	return served, nil
}

// providers lists the providers findings can be filtered by, with their
// zones.
func (s *server) providers(ctx context.Context) (map[string]*time.Location, error) {
	return findings.Providers(ctx, s.store, s.d.zones)
}

// publicHandler serves the public port, with the body limit.
func (s *server) publicHandler() http.Handler {
	return http.MaxBytesHandler(s.mux, s.a.cfg.HTTP.MaxBodyBytes)
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

// run serves until ctx ends, then shuts down softly, then hard.
func (s *server) run(ctx context.Context) error {
	cfg := s.a.cfg
	var (
		httpSrv, adminSrv, consoleSrv *http.Server
		errc                          = make(chan error, 3)
	)
	// Both addresses are taken before any work starts, so that a taken
	// address stops serve at once. The admin listener (metrics, health)
	// runs in every role: workers and schedulers are scraped and probed too.
	adminLn, err := net.Listen("tcp", cfg.HTTP.AdminListen)
	if err != nil {
		return fmt.Errorf("http.admin_listen %s: %w", cfg.HTTP.AdminListen, err)
	}
	var ln net.Listener
	if cfg.Roles.HTTP {
		if ln, err = net.Listen("tcp", cfg.HTTP.Listen); err != nil {
			adminLn.Close()
			return fmt.Errorf("http.listen %s: %w", cfg.HTTP.Listen, err)
		}
	}
	var consoleLn net.Listener
	if cfg.Roles.HTTP && s.consoleMux != nil {
		if consoleLn, err = net.Listen("tcp", cfg.Console.Listen); err != nil {
			adminLn.Close()
			ln.Close()
			return fmt.Errorf("console.listen %s: %w", cfg.Console.Listen, err)
		}
	}
	if cfg.Roles.Workers || cfg.Roles.Scheduler {
		// Jobs run on a context the signal does not cancel: on SIGTERM they
		// get queue.shutdown_grace to finish (Stop), and only then are they
		// cancelled (StopAndCancel).
		if err := s.queue.Start(context.WithoutCancel(ctx)); err != nil {
			adminLn.Close()
			if ln != nil {
				ln.Close()
			}
			if consoleLn != nil {
				consoleLn.Close()
			}
			return err
		}
	}
	adminSrv = &http.Server{Handler: s.admin, ReadHeaderTimeout: cfg.HTTP.ReadTimeout, ReadTimeout: cfg.HTTP.ReadTimeout,
		WriteTimeout: cfg.HTTP.WriteTimeout, ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}
	go func() { errc <- adminSrv.Serve(adminLn) }()
	s.logger.Info("admin serving", "addr", adminLn.Addr().String(), "paths", "/metrics /healthz /readyz")
	if ln != nil {
		httpSrv = &http.Server{Handler: s.publicHandler(),
			ReadHeaderTimeout: cfg.HTTP.ReadTimeout, ReadTimeout: cfg.HTTP.ReadTimeout, WriteTimeout: cfg.HTTP.WriteTimeout,
			ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}
		go func() { errc <- httpSrv.Serve(ln) }()
		s.logger.Info("serving", "addr", ln.Addr().String(), "workers", cfg.Roles.Workers, "scheduler", cfg.Roles.Scheduler)
	}
	if consoleLn != nil {
		consoleSrv = &http.Server{Handler: http.MaxBytesHandler(s.consoleMux, cfg.HTTP.MaxBodyBytes),
			ReadHeaderTimeout: cfg.HTTP.ReadTimeout, ReadTimeout: cfg.HTTP.ReadTimeout, WriteTimeout: cfg.HTTP.WriteTimeout,
			ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}
		go func() { errc <- consoleSrv.Serve(consoleLn) }()
		s.logger.Info("console serving", "addr", consoleLn.Addr().String(), "path", "/console/")
	}
	reprocessDone := make(chan struct{})
	go func() {
		defer close(reprocessDone)
		callbacks := map[string]providers.CallbackParser{}
		for name, p := range s.d.providers {
			if p.Callbacks != nil {
				callbacks[name] = p.Callbacks
			}
		}
		s.intake.ReprocessEvery(ctx, callbacks, time.Minute)
	}()
	booksDone := make(chan struct{})
	go func() {
		defer close(booksDone)
		s.metrics.loop(ctx, time.Minute)
	}()
	registered := make(chan struct{})
	go func() {
		defer close(registered)
		s.registerPulls(ctx)
	}()
	var failed error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			failed = fmt.Errorf("http server: %w", err)
		}
	}
	s.logger.Info("shutting down", "grace", cfg.Queue.ShutdownGrace.String())
	soft, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Queue.ShutdownGrace)
	defer cancel()
	if httpSrv != nil {
		// Requests in flight (callbacks being stored) finish; new ones are refused.
		if err := httpSrv.Shutdown(soft); err != nil {
			s.logger.Warn("http shutdown", "error", err)
		}
	}
	if consoleSrv != nil {
		if err := consoleSrv.Shutdown(soft); err != nil {
			s.logger.Warn("console http shutdown", "error", err)
		}
	}
	if cfg.Roles.Workers || cfg.Roles.Scheduler {
		if err := s.queue.Stop(soft); err != nil {
			s.logger.Warn("jobs still running after the grace period; cancelling them", "error", err)
			hard, cancelHard := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancelHard()
			_ = s.queue.StopAndCancel(hard)
		}
	}
	// Metrics and health answer until the work has stopped.
	if err := adminSrv.Shutdown(soft); err != nil {
		s.logger.Warn("admin http shutdown", "error", err)
	}
	<-reprocessDone
	<-booksDone
	<-registered
	s.logger.Info("stopped")
	return failed
}

// registerPulls registers for pulling every configured short code the
// books do not record as registered (M-Pesa's Pull Transactions API serves
// no pull before). A failure, or a setting it needs that is missing, is
// logged with its cause and counted, and never stops serve: it is tried
// again at the next start, or by `reconcile providers register`.
func (s *server) registerPulls(ctx context.Context) {
	registrars := map[string]providers.PullRegistrar{}
	for _, name := range sortedNames(s.d.providers) {
		p := s.d.providers[name]
		switch {
		case p.Registrar == nil:
		case p.RegistrarSetting != "":
			s.logger.Warn("registration for pulling not made: pulls fail until it is", "provider", name,
				"short_code", p.Registrar.PullShortCode(), "missing", p.RegistrarSetting)
			s.metrics.registrations.Registrations.WithLabelValues(name, providers.RegistrationFailed).Inc()
		default:
			registrars[name] = p.Registrar
		}
	}
	host, _ := os.Hostname()
	providers.RegisterPulls(ctx, s.store, registrars, "serve:"+host, s.metrics.registrations, s.logger)
}

// riverID names this process among replicas (River's leader table shows it).
func riverID(host string, pid int) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, host)
	if len(clean) > 60 {
		clean = clean[:60]
	}
	return fmt.Sprintf("%s_pid%d", clean, pid)
}

// logSchedules says at start when each provider is reconciled next, or why
// nothing is scheduled in this process.
func logSchedules(logger *slog.Logger, specs []schedule.Spec, scheduler bool, now time.Time) {
	switch {
	case !scheduler:
		logger.Info("scheduler off in this process (roles.scheduler: false): another replica schedules runs")
		return
	case len(specs) == 0:
		logger.Info("no schedules: nothing is reconciled periodically; set schedules.<provider>.cron to schedule runs")
		return
	}
	for _, spec := range specs {
		size := spec.Size
		if size == 0 {
			size = schedule.DefaultSize
		}
		logger.Info("schedule", "provider", spec.Provider, "cron", spec.Expr, "next_run", spec.Local(spec.Next(now)),
			"window", size.String(), "lookback", spec.Lookback, "catch_up", spec.CatchUp,
			"note", "the elected leader ticks at start and then on the cron; each tick logs the next run")
	}
}
