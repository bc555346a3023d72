// Package bank reads bank statements: ISO 20022 camt.053 (and camt.054
// notifications), SWIFT MT940 and BAI2. A bank account is a provider like
// any other: Stripe pays its balance out to it and M-Pesa sweeps paybill
// balances into it, and its statement is the evidence that the money
// arrived. This package is the first layer of that: it turns each format
// into one normalised Statement with its Entries, exactly and without
// guessing.
//
// Each parser (ParseCamt, ParseMT940, ParseBAI2, or Parse, which picks one
// by Sniff) streams: it holds one entry at a time, never the file, and
// hands each good Entry to a Handler, then each Statement's balances and
// totals when the statement ends. A bad entry is handed to the Handler's
// Reject with a *ledger.ParseError naming the file, line and field, and the
// raw bytes of the entry, and reading goes on with the next one; a file
// that cannot be read at all (not the format, UTF-16, truncated) is an
// error.
//
// Amounts are money.Amount, never negative, parsed from the file's text
// without floating point; Direction says credit or debit. Booking and
// value dates are calendar days (Date); date-times are UTC, and those
// without an offset are read in the bank's zone (Options.Zone, UTC by
// default). Every statement whose format carries balances is checked:
// opening + booked credits - booked debits must equal closing
// (CheckBalance), and one that does not add up is rejected with a
// *BalanceError. BAI2 control totals and record counts are checked too
// (*ControlError).
//
// The package knows no provider transaction, no account configuration
// and no database: turning entries into the books' evidence, and matching
// payouts to credits, belong to its callers. It imports only ledger (for
// ParseError and the limits of the books) and money.
package bank
