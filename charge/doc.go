// Package charge owns the life of an intent from creation to a final state:
// creating it and enqueuing its job in one transaction (the outbox), the
// worker that claims the intent, records each attempt before calling the
// provider with the intent key, and records the outcome in the transaction
// that completes the job; resuming after a crash without moving the money
// twice; applying provider verdicts that arrive by callback; settling unknown
// intents from evidence; and the outgoing events (charge.succeeded,
// charge.failed, charge.unknown, refund.succeeded, refund.failed,
// refund.unknown) written with each state change and delivered, signed, to
// webhook endpoints. Charges and refunds go through the same worker: a
// charge job charges its intent, a refund job sends its refund intent to the
// provider (providers.Refunder) for the charge it names; only the provider
// calls differ (action.go).
//
// It must not match or report (the reconciler does) and must not know any
// provider's wire format (the providers do).
package charge
