// Package service is `reconcile serve`, the long-running process: River's
// workers (charges, outgoing events, alert delivery, reconcile runs) and
// its leader-elected scheduler, the public HTTP server (provider callbacks,
// the JSON API, Slack's interactions, the console), the admin server
// (/metrics, /healthz, /readyz) and the metric families they count into.
//
// The command line resolves the configuration and the parts built from it
// (the books, the providers, the findings service) once and passes them in
// Deps; the service builds its queue and routes from them (New) and serves
// until its context ends, then shuts down softly within the configured
// grace (Run).
package service
