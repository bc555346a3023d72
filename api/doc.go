// Package api serves reconcile's HTTP JSON API behind one bearer token:
// intents (POST /v1/intents, GET /v1/intents/{key}) and refunds
// (POST /v1/refunds), created under an Idempotency-Key and answered the same
// however often a request is repeated, and findings (GET /v1/findings with
// filters, GET /v1/findings/{id} with evidence and history, and people's
// decisions: ack, resolve, reopen, notes, match, unmatch). Every route is
// described in docs/openapi.yaml; a test holds the live answers to it.
//
// It owns the HTTP edge only: decoding requests, who acts (the
// X-Reconcile-Actor header), and answers and their status codes. Intents
// are created by the charge service, and a decision on a finding is the
// books' to apply; it owns none of their rules.
package api
