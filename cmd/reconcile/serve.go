package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/console"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/service"
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
			return srv.Run(cmd.Context())
		},
	}
}

// newServer resolves the books and the providers and builds the service
// from them.
func newServer(ctx context.Context, a *app) (*service.Server, error) {
	d, err := a.resolve(ctx, storeCreate)
	if err != nil {
		return nil, err
	}
	return service.New(ctx, service.Deps{Config: a.cfg, Store: d.store, ConsoleStore: consoleBooks(d), Providers: d.providers, Zones: d.zones, Findings: d.findings,
		Charges: func(m *charge.Metrics) *charge.Service { return a.chargeService(d, m) },
		Reconciler: func(q *queue.Queue, svc *charge.Service) (*reconciler.Reconciler, error) {
			return a.newReconciler(d, q, svc)
		},
		Replay: func(ctx context.Context, q ledger.QuarantineItem) (string, error) { return a.replay(ctx, d, q) },
		Redact: func(t string) string { return redactAll(t, a.secrets()) },
		Clock:  a.clock, Logger: a.logger})
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
