package main

import (
	"context"

	"github.com/reconcilehq/reconcile/console"
	"github.com/reconcilehq/reconcile/ledger"
)

// consoleRoutes serves the console under /console when it is on.
func (s *server) consoleRoutes() error {
	cc, err := s.a.cfg.Console.Console()
	if err != nil || cc == nil {
		return err
	}
	c, err := console.New(*cc, console.Deps{Store: s.store, Jobs: console.QueueJobs(s.queue, func(t string) string { return redactAll(t, s.a.secrets()) }),
		Replay: func(ctx context.Context, q ledger.QuarantineItem) (string, error) { return s.a.replay(ctx, s.d, q) }, Findings: s.findings, Providers: s.providers, Clock: s.a.clock, Logger: s.logger})
	if err != nil {
		return err
	}
	mux := s.mux
	if s.a.cfg.Console.Listen != "" {
		s.consoleMux = newRouteMux()
		mux = s.consoleMux
	}
	mux.Handle("/console/", c.Handler())
	s.logger.Info("console served", "path", "/console/", "mode", cc.Mode, "own_listener", s.a.cfg.Console.Listen != "")
	return nil
}
