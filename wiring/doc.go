// Package wiring turns a loaded and checked configuration into the opened,
// ready parts every command of the binary works with: the books (the
// primary database and its read replica), the providers with their clients
// and a quarantine bound to those books, the alerts planning, the
// insert-only queue, the charge service and the findings service, and, on
// demand, the reconciler and the callback intake built from them.
//
// Open builds the parts once, in one order, from one config.Config; the
// command line asks Parts for what a command needs and closes them when it
// ends. It owns how the books are opened for a command (never created,
// created, or opened to migrate: Mode) and which books a report reads (the
// replica while it keeps up).
//
// It parses no flag, prints no report and decides no business rule: those
// belong to cmd/reconcile and to the packages the parts come from. It never
// reads a global; the clock and the logger are handed in.
package wiring
