// Package matcher is the pure core of reconciliation: given the intents of one
// provider (with the provider references their attempts recorded) and the
// provider transactions of a window, it links each transaction to at most one
// intent and returns the findings of docs/design.md, the unknown intents
// that provider evidence settles, and the run's counts.
//
// Linking order: a recorded provider reference of any attempt (matched
// against the transaction's provider reference, then its id); then the
// reference the provider echoes (intent reference, case-insensitive, then
// intent key); then, only when Options.Fuzzy is set, amount + currency +
// masked customer inside the boundary tolerance with exactly one candidate
// on each side, marked fuzzy. Refunds, reversals and fees that name a charge
// (LinkedID) belong to that charge's intent, however the charge linked
// (fuzzy included); refunds and reversals net
// against it (a refund failure undoes its refund), so a fully reversed
// charge is not a successful one. A charge is compared with its intent net
// of its reversals (the released part of a partial capture), never of its
// refunds. Amounts are the ones presented to the customer; the settlement
// a transaction carries is only shown in the finding's detail. Payouts,
// adjustments and lines of undocumented kinds link to nothing.
//
// Disputes and dispute reversals also name their charge, but never net
// against it: a disputed charge is a disputed_charge finding (medium while
// the funds are still in the balance, high once withdrawn, none once a
// reversal reinstated them), owned by the window of the dispute and keyed
// by intent and charge, so that it keeps its id as evidence joins it.
// Result.DisputesWon names those of earlier windows that a reversal of
// this window proves won.
//
// Findings are owned by the window [From, To): intent-based findings by the
// intent's creation time, unknown_charge by the transaction's occurrence
// time. The tolerance band on either side is for linking only, so adjacent
// windows never both raise the same finding.
//
// Severities:
//
//	duplicate_charge     high    two or more successful charges (net of refunds) for one intent
//	status_mismatch      high    the intent failed or is pending locally, but the provider took money
//	status_mismatch      medium  the intent succeeded locally, but its charges failed or were reversed (after the grace)
//	currency_mismatch    high    the one charge is in another currency
//	amount_mismatch      high    the provider took more than the intent
//	amount_mismatch      medium  the provider took less than the intent
//	unknown_charge       medium  a successful charge of the window links to no intent
//	missing_at_provider  medium  succeeded locally, no successful charge after the grace
//	disputed_charge      high    the customer disputed a linked charge and the funds were withdrawn
//	disputed_charge      medium  the customer disputed a linked charge, the funds not withdrawn yet
//	stuck_intent         low     processing, unknown or still pending (never charged) past its lease or last
//	                             change plus the grace, with no provider evidence
//	unrecorded_refund    medium  a successful provider refund (or, with ReversalsAreRefunds, reversal)
//	                             reaches no refund intent; not a refund of a duplicate charge
//	duplicate_refund     high    two or more successful provider refunds for one refund intent
//
// Refund intents (ledger.IntentRefund) are judged against the refunds
// linked to them as charge intents are against their charges (amount and
// currency mismatches, missing_at_provider, status_mismatch). A refund
// links to a refund intent by the refund id its attempts recorded, then by
// its reference (compared as a charge's is, in normal form) or the refund
// intent's key, then through the charge it names to one of that charge
// intent's refund intents not yet taken. A charge refunded in full is
// compared as paid, never a status mismatch.
//
// An unknown intent with a successful charge is settled (reported in
// Result.Settlements) and judged as succeeded; a processing intent with one
// successful charge is left to its worker. AtRisk is the extra money of a
// duplicate, the money taken for a status mismatch, the difference of an
// amount mismatch, the charge of an unknown charge, and the intent's amount
// otherwise.
//
// Input comes either as ledger values (AddIntent, AddTxn) or, as a
// reconcile feeds it from the store's bulk scans (ledger.ScanStore), as
// compact rows with amounts already in minor units and strings borrowed
// from the store's buffers (AddIntentRow, AddProviderRef, AddTxnRow); the
// row path allocates nothing per row. Both paths decide the same.
//
// The hot path holds intents and transactions in compact, pointer-free
// 40-byte records: a record's strings are copied into one length-prefixed
// block of a chunked byte arena, amounts are integer minor units with an
// interned currency, times are Unix nanoseconds, and the indexes (by key,
// by reference, by provider reference) are open-addressing hash tables.
// The tables are built a chunk of entries at a time, each chunk partitioned
// by the part of the table its entries hash into, so that inserts sweep the
// table instead of missing the cache at every entry; lookups are made in
// small batches whose first probes are issued together. Values become
// ledger.Finding (money.Amount) only at the edge, for the few rows that are
// findings.
//
// The package performs no I/O and never touches a store; it must not learn
// about databases, providers' wire formats or Slack.
package matcher
