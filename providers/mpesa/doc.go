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
//     the intake before acknowledging it (a C2B validation whose body is
//     quarantined is answered AckRejected instead).
//   - StatementParser reads the organisation portal's CSV export.
//   - Puller reads the Pull Transactions API (the last 48 hours). Daraja
//     serves a pull only for a short code registered for pulling:
//     EnsureRegistered registers it once and records the registration in
//     the books (the nominated number masked, the callback path token
//     hidden), and a pull refused for want of it fails with
//     ErrNotRegistered, naming the command that registers.
//
// Charger pushes STK prompts and queries their outcome, and refunds by
// reversal: Refund sends a Reversal API request (the attempt is known by the
// request's OriginatorConversationID, which the result echoes) and
// QueryRefundStatus asks the Transaction Status API, whose answer comes by
// callback and names the attempt through the query's Occasion. A reversal
// result, a queue timeout notice and a status result each yield the verdict
// on the refund attempt they answer. M-Pesa honours no idempotency key, for
// charges or refunds, so the charger never claims to: an attempt whose
// outcome is unknown is asked about, never sent again.
//
// The package must not change intents itself (the charge package's
// OutcomeApplier does, inside the intake's transaction), must not log
// phone numbers, tokens or secrets, and keeps every amount as decimal text
// or a decimal value from the wire to the ledger. The fake Daraja server for tests and the demo is mpesa/mpesafake.
package mpesa
