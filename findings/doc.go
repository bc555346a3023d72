// Package findings owns what people see of a finding and do with it.
//
// Seeing: the detail of one finding as read from the books (Load: the
// finding, its intent with attempts, its provider transactions with their
// sources, its history and manual link), its JSON views (the shapes `findings
// show`, the findings API and `runs show` print), its text rendering, the
// filters' parsing helpers and the findings' metrics.
//
// Doing: the Service applies every decision a person takes on a finding
// (acknowledge, resolve, reopen, note, match, unmatch), from every surface:
// the command line, the web console, the API and Slack are adapters that
// name the actor and the surface and show the Outcome. The rules live here
// once (Check): every decision but acknowledge carries a note, at most
// MaxNote bytes; a match names its intent; a decision with an identity
// (Once, a Slack action) is applied once. Each decision writes its change
// and its history event in one transaction and announces what it resolved
// (the Slack follow-up) in the same transaction. Which status changes are
// allowed is the ledger's rule (ledger.TransitionTo), the one table both
// engines apply.
//
// It reads and writes the books only through the ledger's interfaces and
// knows no surface: it imports no HTTP, Slack or command-line package.
package findings
