// Package mpesa is the M-Pesa (Safaricom Daraja) provider: it turns every
// form of M-Pesa evidence into normalised provider transactions, and it
// charges by STK push.
//
// Evidence, all normalised alike (provider "mpesa", id = the receipt number
// upper-cased, amounts in KES parsed from the raw text, times from EAT to
// UTC, counterparties masked):
//   - CallbackParser reads every Daraja callback body: STK push callbacks,
//     C2B validation and confirmation, B2C, reversal, transaction-status and
//     account-balance results. It tolerates what Daraja really sends:
//     numbers or strings anywhere, items looked up by name, missing values,
//     object-or-array nesting, string result codes, masked or hashed MSISDNs.
//     An STK callback also yields the outcome of the attempt it answers.
//   - Handler serves the callback endpoints behind a path token, a source-IP
//     allowlist, a body limit and read timeouts, storing every body through
//     the intake before acknowledging it.
//   - StatementParser reads the organisation portal's CSV export.
//   - Puller reads the Pull Transactions API (the last 48 hours).
//
// Charger pushes STK prompts and queries their outcome; M-Pesa honours no
// idempotency key, so it never claims to.
//
// The package must not change intents itself (the charge package's
// OutcomeApplier does, inside the intake's transaction), must not log
// phone numbers, tokens or secrets, and keeps every amount as decimal text
// or a decimal value from the wire to the ledger. The fake Daraja server for tests and the demo is mpesa/mpesafake.
package mpesa
