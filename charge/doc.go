// Package charge owns the life of an intent from creation to a final state:
// creating it and enqueuing its charge job in one transaction (the outbox), the
// charge worker that claims the intent, records each attempt before calling
// the provider with the intent key, and records the outcome in the transaction
// that completes the job; resuming after a crash without charging twice;
// applying provider verdicts that arrive by callback; settling unknown intents
// from evidence; and the outgoing events (charge.succeeded, charge.failed,
// charge.unknown) written with each state change and delivered, signed, to
// webhook endpoints.
//
// It must not match or report (the reconciler does) and must not know any
// provider's wire format (the providers do).
package charge
