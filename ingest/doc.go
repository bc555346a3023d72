// Package ingest brings a file into the books: an intents CSV, a provider or
// bank statement, a file of captured callback bodies. It chooses the
// importer for the kind of file (ledger/intentcsv, providers/statement,
// providers/intake), opens and streams the file with progress on a
// terminal, refuses intents of a provider the configuration does not know,
// queues the charges and refunds of pending intents when asked to, and says
// what an import did in the summary a person reads. A dry run reads the
// file as its import would, checks it against the books through package
// report and writes nothing.
//
// It parses no format itself (the importers do) and decides nothing about
// charging (the charge service it is handed does); it reads no
// configuration: the command line hands it the configured providers, their
// parsers and the services it needs. It does not log.
package ingest
