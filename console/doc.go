// Package console serves the finance operations web console under /console:
// findings with filters and totals at risk, a finding's evidence and history
// with acknowledge, resolve, reopen and notes, runs, the quarantine with
// dismiss and replay, and discarded jobs with retry. Pages are rendered on
// the server with html/template and work without JavaScript; every form is
// protected from cross-site requests.
//
// It signs people in from the loopback interface (one local operator) or
// from an authenticating proxy's header, and gives them the viewer or
// operator role from its configuration. It records every action in the
// books' history with the person as the actor and "web" as the surface. It
// does not own the books' rules: those are the ledger's.
package console
