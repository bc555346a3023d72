package report

import (
	"fmt"

	"github.com/reconcilehq/reconcile/ledger"
)

// SuggestionText says a suggestion in one line, with the command that
// accepts it.
func SuggestionText(s ledger.Suggestion) string {
	return fmt.Sprintf("suggested match: provider txn %s with intent %s (finding %s): %s", s.TxnID, s.IntentKey, s.FindingID, s.Reason)
}
