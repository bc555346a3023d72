// Package findings owns what people see of a finding and do with it: the
// detail of one finding as read from the books (Load: the finding, its
// intent with attempts, its provider transactions with their sources, its
// history and manual link), its JSON views (the shapes `findings show`, the
// findings API and `runs show` print) and its text rendering. The command
// line, the web console and the API all show a finding through it.
//
// It reads and writes the books only through the ledger's interfaces and
// does not own their storage: the allowed status changes are the ledger's,
// which both engines apply.
package findings
