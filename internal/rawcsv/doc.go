// Package rawcsv reads CSV records together with the exact bytes each was
// read from, so that a rejected line can be quarantined as it stood in the
// file, and strips a leading UTF-8 byte-order mark. Every CSV reader of
// outside input (statements, intent files) goes through it.
//
// It knows nothing of headers, columns or what a field means: that belongs
// to the parsers built on it (providers/csvfile, providers/mpesa,
// ledger/intentcsv).
package rawcsv
