package service

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

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/schedule"
)

// listeners are the addresses the service serves, taken before any work
// starts; public and console are nil when this process does not serve
// them.
type listeners struct {
	admin, public, console net.Listener
}

func (l listeners) close() {
	for _, ln := range []net.Listener{l.admin, l.public, l.console} {
		if ln != nil {
			ln.Close()
		}
	}
}

// servers are the HTTP servers running; public and console are nil when
// not served.
type servers struct {
	admin, public, console *http.Server
}

// Run serves until ctx ends, then shuts down softly, then hard: requests
// in flight and running jobs get queue.shutdown_grace to finish.
func (s *Server) Run(ctx context.Context) error {
	cfg := s.cfg
	ls, err := s.listen()
	if err != nil {
		return err
	}
	if cfg.Roles.Workers || cfg.Roles.Scheduler {
		// Jobs run on a context the signal does not cancel: on SIGTERM they
		// get queue.shutdown_grace to finish (Stop), and only then are they
		// cancelled (StopAndCancel).
		if err := s.queue.Start(context.WithoutCancel(ctx)); err != nil {
			ls.close()
			return err
		}
	}
	errc := make(chan error, 3)
	srvs := s.serve(ls, errc)
	background := s.background(ctx)
	var failed error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			failed = fmt.Errorf("http server: %w", err)
		}
	}
	s.shutdown(ctx, srvs)
	<-background
	s.logger.Info("stopped")
	return failed
}

// listen takes every address this process serves, so that a taken address
// stops serve at once. The admin listener (metrics, health) is taken in
// every role: workers and schedulers are scraped and probed too.
func (s *Server) listen() (listeners, error) {
	cfg := s.cfg
	var (
		ls  listeners
		err error
	)
	if ls.admin, err = net.Listen("tcp", cfg.HTTP.AdminListen); err != nil {
		return ls, fmt.Errorf("http.admin_listen %s: %w", cfg.HTTP.AdminListen, err)
	}
	if !cfg.Roles.HTTP {
		return ls, nil
	}
	if ls.public, err = net.Listen("tcp", cfg.HTTP.Listen); err != nil {
		ls.close()
		return ls, fmt.Errorf("http.listen %s: %w", cfg.HTTP.Listen, err)
	}
	if s.consoleMux != nil {
		if ls.console, err = net.Listen("tcp", cfg.Console.Listen); err != nil {
			ls.close()
			return ls, fmt.Errorf("console.listen %s: %w", cfg.Console.Listen, err)
		}
	}
	return ls, nil
}

// serve starts an HTTP server on each listener; a server that stops sends
// its error on errc.
func (s *Server) serve(ls listeners, errc chan<- error) servers {
	cfg := s.cfg
	newServer := func(h http.Handler) *http.Server {
		return &http.Server{Handler: h, ReadHeaderTimeout: cfg.HTTP.ReadTimeout, ReadTimeout: cfg.HTTP.ReadTimeout,
			WriteTimeout: cfg.HTTP.WriteTimeout, ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}
	}
	var srvs servers
	srvs.admin = newServer(s.admin)
	go func() { errc <- srvs.admin.Serve(ls.admin) }()
	s.logger.Info("admin serving", "addr", ls.admin.Addr().String(), "paths", "/metrics /healthz /readyz")
	if ls.public != nil {
		srvs.public = newServer(s.Public())
		go func() { errc <- srvs.public.Serve(ls.public) }()
		s.logger.Info("serving", "addr", ls.public.Addr().String(), "workers", cfg.Roles.Workers, "scheduler", cfg.Roles.Scheduler)
	}
	if ls.console != nil {
		srvs.console = newServer(http.MaxBytesHandler(s.consoleMux, cfg.HTTP.MaxBodyBytes))
		go func() { errc <- srvs.console.Serve(ls.console) }()
		s.logger.Info("console serving", "addr", ls.console.Addr().String(), "path", "/console/")
	}
	return srvs
}

// background registers for pulling what the books do not record as
// registered, reprocesses parked callbacks and refreshes the gauges kept
// from the books every minute until ctx ends; the channel closes when all
// have stopped.
func (s *Server) background(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	reprocessDone, booksDone, registered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(reprocessDone)
		callbacks := map[string]providers.CallbackParser{}
		for name, p := range s.d.Providers {
			if p.Callbacks != nil {
				callbacks[name] = p.Callbacks
			}
		}
		s.intake.ReprocessEvery(ctx, callbacks, time.Minute)
	}()
	go func() {
		defer close(booksDone)
		s.metrics.loop(ctx, time.Minute)
	}()
	go func() {
		defer close(registered)
		s.registerPulls(ctx)
	}()
	go func() {
		<-reprocessDone
		<-booksDone
		<-registered
		close(done)
	}()
	return done
}

// shutdown stops taking requests and jobs, lets those in flight finish
// for queue.shutdown_grace, then cancels the jobs left. Metrics and health
// answer until the work has stopped.
func (s *Server) shutdown(ctx context.Context, srvs servers) {
	cfg := s.cfg
	s.logger.Info("shutting down", "grace", cfg.Queue.ShutdownGrace.String())
	soft, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Queue.ShutdownGrace)
	defer cancel()
	// Requests in flight (callbacks being stored) finish; new ones are refused.
	for _, srv := range []struct {
		name string
		srv  *http.Server
	}{{"http shutdown", srvs.public}, {"console http shutdown", srvs.console}} {
		if srv.srv != nil {
			if err := srv.srv.Shutdown(soft); err != nil {
				s.logger.Warn(srv.name, "error", err)
			}
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
	if err := srvs.admin.Shutdown(soft); err != nil {
		s.logger.Warn("admin http shutdown", "error", err)
	}
}

// registerPulls registers for pulling every configured short code the
// books do not record as registered (M-Pesa's Pull Transactions API serves
// no pull before). A failure, or a setting it needs that is missing, is
// logged with its cause and counted, and never stops serve: it is tried
// again at the next start, or by `reconcile providers register`.
func (s *Server) registerPulls(ctx context.Context) {
	registrars := map[string]providers.PullRegistrar{}
	for _, name := range names(s.d.Providers) {
		p := s.d.Providers[name]
		switch {
		case p.Registrar == nil:
		case p.RegistrarSetting != "":
			s.logger.Warn("registration for pulling not made: pulls fail until it is", "provider", name,
				"short_code", p.Registrar.PullShortCode(), "missing", p.RegistrarSetting)
			s.metrics.registrations.Registrations.WithLabelValues(name, providers.RegistrationFailed).Inc()
		default:
			registrars[name] = p.Registrar
			for acct, r := range p.AccountRegistrars {
				registrars[ledger.Scope(name, acct)] = r
			}
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
