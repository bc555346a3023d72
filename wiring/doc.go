// Package wiring turns a loaded and checked configuration into the opened,
// ready parts every command of the binary works with: the books (the
// primary database and its read replica), the providers with their clients
// and a quarantine bound to those books, the alerts planning, the
// insert-only queue, the charge service and the findings service, and, on
// demand, the reconciler, the callback intake, the importers of files, a
// month's close and serve's dependencies built from them.
//
// Open builds the parts once, in one order, from one config.Config; the
// command line asks Parts for what a command needs and closes them when it
// ends. It owns how the books are opened for a command (never created,
// created, or opened to migrate: Mode, ModeOf) and which books a report
// reads (the replica while it keeps up). It also holds what a command line
// asks of the parts once its flags are read: a provider's description
// (Setup), a findings list's filter (FindingsFilter), a run's accounts and
// its loop over them with progress, reports and a dry run's preview
// (RunAccounts, RunWindow), copying or verifying the books (CompareBooks).
// A bad value handed in is a *schedule.FlagError naming its flag.
//
// It sees no cobra and decides no business rule: the flags belong to
// cmd/reconcile, the rules and the reports to the packages the parts come
// from. It never reads a global; the clock, the logger and the output
// streams are handed in.
package wiring
