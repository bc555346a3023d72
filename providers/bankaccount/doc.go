// Package bankaccount makes a bank account a provider: bank:<name>. An
// Account says which account and currency its statements must be of, the
// zone its days are cut in, the format its statements come in (camt.053 or
// camt.054, MT940, BAI2 through providers/bank, or a configured CSV layout
// through providers/csvfile), and the providers that pay into it (Stripe's
// payouts, M-Pesa settlements) with the patterns their credits are
// recognised by and the payout references they carry.
//
// As a providers.StatementParser it turns each statement entry into a
// provider transaction (a bank_credit or a bank_debit, its amount a
// magnitude) with the entry's details beside it (ledger.BankEntry: booking
// and value days, bank reference, end-to-end id, counterparty, remittance
// text) and the raw entry as its source, so that providers/statement
// imports a bank statement all or nothing like any other. A statement of
// another account or currency is refused, and so is one that does not add
// up.
//
// It reads and checks; it does not match payouts to credits (package
// matcher does, for the reconciler) and it never touches the books.
package bankaccount
