package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/service"
	"github.com/reconcilehq/reconcile/wiring"
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
	d, err := a.resolve(ctx, wiring.Create)
	if err != nil {
		return nil, err
	}
	return service.New(ctx, d.ServiceDeps())
}
