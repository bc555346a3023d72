// Package rawcsv reads CSV records together with the exact bytes each was
// read from, so that a rejected line can be quarantined as it stood in the
// file; it drops a leading UTF-8 byte-order mark and refuses UTF-16 and
// UTF-32 files (internal/bom). Every CSV reader of outside input
// (statements, intent files) goes through it.
//
// Header is the one header rule those readers share: a column a reader
// reads must be named once, and one named twice is an error naming it.
// What a column means, which are required and how a header row is found
// belong to the parsers built on it (providers/csvfile, providers/mpesa,
// ledger/intentcsv).
package rawcsv
