// Package statement imports provider statement files into the books. It
// takes any providers.StatementParser (the M-Pesa portal export, a provider
// report CSV) and a ledger.Store, and applies a file all or nothing: every
// sighting of the file is upserted in one transaction, and if any line is
// rejected that transaction is rolled back and every rejected line is put in
// the quarantine (with file, line, field, reason and the raw line) instead.
// Importing the same file again changes nothing, because parsers give each
// row a source ref that is stable across imports.
//
// Sightings go to the store in batches (ledger.TxnStore.UpsertProviderTxns),
// so memory is bounded by one batch whatever the file's size. A row that
// contradicts the stored transaction (another amount, type, final status or
// day), whether stored by an earlier file, another channel or an earlier
// row of the same file, is quarantined and counted as a conflict; the first
// kept.
//
// It knows no provider format and must not: parsing belongs to the provider
// packages. It never logs; it returns counts and errors.
package statement
