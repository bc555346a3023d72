// Package stripe is reconcile's Stripe adapter, built on stripe-go v85.
//
// It owns four things. Client charges (a PaymentIntent created and
// confirmed in one request, with the intent key as the Idempotency-Key and
// in metadata["intent_key"]), queries a PaymentIntent's status, finds the
// PaymentIntents of an intent key with the Search API, and pulls a window's
// charges, refunds, disputes and optionally balance transactions as provider
// transaction sightings. ReportParser reads Stripe's itemized balance
// reports (balance change, payout reconciliation, ending balance) in any
// column set that can be linked. Both read every reporting category through
// one table (category.go), so that a day pulled and the same day imported
// give the same transactions. EventParser interprets webhook event bodies,
// and WebhookHandler verifies their signature and hands them to the
// callback intake.
//
// It converts at the edge: Stripe's integer minor units to money.Amount by
// the currency's exponent in Stripe's API (which differs from ISO 4217 for
// ISK and MGA), Unix seconds to UTC, Stripe errors to *providers.Error
// kinds, Stripe objects to ledger.ProviderTxn. No stripe-go type appears in
// its exported signatures.
//
// It must not store anything (callers upsert the sightings it emits), must
// not log customer data or keys, and must never send different parameters
// under one intent key: every attempt at an intent is the same request.
package stripe
