// Package demo is `reconcile demo`: a self-contained day of payments on a fresh
// database, with fake M-Pesa (Daraja) and Stripe servers on loopback, that
// shows the whole loop: intents charged through the queue (including a worker
// that dies after calling the provider, and a provider without idempotency
// keys), M-Pesa callbacks (some delivered twice, one late), a portal statement,
// a Stripe pull, the reconcile runs, their findings and the Slack message they
// would send; then the week before's Stripe payouts, pulled with what each
// carries, against a bank account's MT940 statement (bank.go). Seeded and
// repeatable: running it twice gives the same findings.
package demo
