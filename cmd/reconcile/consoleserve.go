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
	c, err := console.New(*cc, console.Deps{Store: consoleBooks(s.d), Jobs: console.QueueJobs(s.queue, func(t string) string { return redactAll(t, s.a.secrets()) }),
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

// consoleBooks are the books the console reads and acts through: its lists
// (findings, runs) read the replica while it keeps up; a finding's page, on
// which a person decides and lands again after deciding, and the
// quarantine, which the console changes, read the primary.
func consoleBooks(d *deps) console.Store {
	if d.replica == nil {
		return d.store
	}
	return replicaLists{Store: d.store, d: d}
}

// replicaLists is the primary with the console's lists read through
// deps.reads.
type replicaLists struct {
	ledger.Store
	d *deps
}

func (r replicaLists) ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error) {
	return r.d.reads(ctx).ListFindings(ctx, f)
}

func (r replicaLists) ListRuns(ctx context.Context, provider string, limit int) ([]ledger.Run, error) {
	return r.d.reads(ctx).ListRuns(ctx, provider, limit)
}
