// Package scenario generates realistic provider days at the ledger level,
// seeded and deterministic: intents with their attempts and provider
// references, and provider evidence as it arrives (the same callback
// delivered three times, one receipt seen through three channels, statement
// rows, fees, refunds and reversals), with planted anomalies and traps and
// the findings a correct reconcile must report. Tests, the demo and the
// benchmarks use it; Bulk streams millions of rows with a fixed share of
// each anomaly without holding them.
//
// It writes only through the ledger.Store interface and knows nothing of the
// matcher.
package scenario
