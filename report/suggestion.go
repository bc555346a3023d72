package report

import (
	"fmt"
	"slices"

	"github.com/reconcilehq/reconcile/ledger"
)

// SuggestionText says a suggestion in one line, with the command that
// accepts it.
func SuggestionText(s ledger.Suggestion) string {
	return fmt.Sprintf("suggested match: provider txn %s with intent %s (finding %s): %s", s.TxnID, s.IntentKey, s.FindingID, s.Reason)
}

// KindSuggestionText is SuggestionText for a finding of kind k: a bank
// account's finding suggests the other half of a payout that did not
// arrive, which no command links.
func KindSuggestionText(k ledger.Kind, s ledger.Suggestion) string {
	if slices.Contains(ledger.BankKinds, k) {
		return fmt.Sprintf("likely the same money: payout %s and credit %s (finding %s): %s", s.IntentKey, s.TxnID, s.FindingID, s.Reason)
	}
	return SuggestionText(s)
}
