// Package providers declares what the rest of reconcile asks of a payment
// provider: a Charger, plus optional abilities as separate small interfaces
// (honouring idempotency keys, querying an attempt's status, finding a charge
// by intent key, pulling evidence for a window, registering for pulls,
// parsing callbacks), the registration for pulling that serve makes at its
// start (RegisterPulls, with its metrics), and the
// provider error that tells the charge worker whether a failure is permanent,
// safe to retry, or ambiguous, and the rule on the currencies a provider
// moves that every path an intent enters by applies (CheckIntentCurrency).
// One package per provider lives below it.
package providers
