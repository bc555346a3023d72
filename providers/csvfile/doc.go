// Package csvfile reads statements in any CSV layout, for banks and
// providers without an adapter of their own: a Mapping names the columns
// that hold the id, time (with its layout and zone), amount (signed, or
// debit and credit), currency, status, type, reference and counterparty,
// and a Parser turns each row into a provider transaction sighting.
//
// It also owns Reader, the CSV reading every statement parser shares:
// header by name, line numbers, the raw bytes of each record (read through
// internal/rawcsv, as every CSV reader of outside input is), a UTF-8
// byte-order mark and CRLF endings.
//
// It must not guess: a column the mapping names but the header lacks, a
// value the status or type map does not know, an amount with more decimals
// than its currency allows or a time that does not match the layout is an
// error naming the file, line and column, and the row is rejected whole. It
// does not store anything; the caller decides what to do with the sightings
// and rejects.
package csvfile
