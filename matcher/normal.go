package matcher

import "github.com/reconcilehq/reconcile/ledger"

// NormalReference returns the normal form of a reference
// (ledger.NormalReference): its letters and digits, upper-cased, everything
// else removed. "" when none is left.
func NormalReference(s string) string { return ledger.NormalReference(s) }

// appendNormal appends the normal form of s to dst.
func appendNormal(dst []byte, s string) []byte { return ledger.AppendNormalReference(dst, s) }
