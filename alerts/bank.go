package alerts

import (
	"slices"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The findings of a bank account's runs are about payouts, the account's
// lines and charges never paid out, not intents: their messages name those
// instead (bankFields, bankSummaryLine), and say what to do (bankHint).

// bankKindTitles are the titles of the bank account's kinds.
var bankKindTitles = map[ledger.Kind]string{
	ledger.KindPayoutMissingAtBank:       "Payout missing at bank",
	ledger.KindPayoutAmountMismatch:      "Payout amount mismatch",
	ledger.KindPayoutDuplicatedAtBank:    "Payout duplicated at bank",
	ledger.KindPayoutCompositionMismatch: "Payout composition mismatch",
	ledger.KindUnexplainedBankCredit:     "Unexplained bank credit",
	ledger.KindNotPaidOut:                "Charge not paid out",
}

// bankKindPlurals are their plurals, for summaries.
var bankKindPlurals = map[ledger.Kind]string{
	ledger.KindPayoutMissingAtBank:       "payouts missing at bank",
	ledger.KindPayoutAmountMismatch:      "payout amount mismatches",
	ledger.KindPayoutDuplicatedAtBank:    "payouts duplicated at bank",
	ledger.KindPayoutCompositionMismatch: "payout composition mismatches",
	ledger.KindUnexplainedBankCredit:     "unexplained bank credits",
	ledger.KindNotPaidOut:                "charges not paid out",
}

func init() {
	for k, t := range bankKindTitles {
		kindTitles[k] = t
	}
}

func isBankKind(k ledger.Kind) bool { return slices.Contains(ledger.BankKinds, k) }

// bankProviderName names a bank account for finance ops: "Bank account
// equity-kes".
func bankProviderName(p string) string {
	return "Bank account " + scrubID(strings.TrimPrefix(p, ledger.BankProviderPrefix))
}

// bankSubject is what a bank finding is about and its name: the payout,
// the credit or the charge.
func bankSubject(f ledger.Finding) (word, name string) {
	var payouts, lines []string
	for _, id := range f.ProviderTxnIDs {
		if _, _, ok := ledger.SplitPayoutRef(id); ok {
			payouts = append(payouts, id)
		} else {
			lines = append(lines, id)
		}
	}
	switch f.Kind {
	case ledger.KindUnexplainedBankCredit:
		return "credit", strings.Join(lines, ", ")
	case ledger.KindNotPaidOut:
		return "charge", strings.Join(payouts, ", ")
	}
	// The payout itself is the one a finding is keyed by: the first
	// reference that is no item of it (a composition names its items too).
	for _, p := range payouts {
		if ledger.FindingID(f.Kind, "", []string{p}) == f.ID {
			return "payout", p
		}
	}
	return "payout", strings.Join(payouts, ", ")
}

// bankLines are the account's lines a finding names.
func bankLines(f ledger.Finding) []string {
	var out []string
	for _, id := range f.ProviderTxnIDs {
		if _, _, ok := ledger.SplitPayoutRef(id); !ok {
			out = append(out, id)
		}
	}
	return out
}

// bankFields are a bank finding's evidence as section fields; the first
// two (what it is about, amount at risk) also serve as the short form.
func bankFields(cfg Config, f ledger.Finding, atRisk money.Amount) []string {
	word, name := bankSubject(f)
	lines := "-"
	if ls := bankLines(f); len(ls) > 0 {
		lines = receiptsText(ls)
	}
	return []string{
		"*" + upperFirst(word) + "*\n" + code(scrub(name)),
		"*Amount at risk*\n" + amountText(atRisk),
		"*Expected*\n" + amountText(f.Expected),
		"*Actual*\n" + amountText(f.Actual),
		"*Bank lines*\n" + lines,
		"*Counterparty*\n" + counterpartyText(f.Counterparty),
		"*Day*\n" + timeText(f.OccurredAt, cfg.zone(f.Provider)),
		"*First seen*\n" + timeText(f.FirstSeenAt, cfg.zone(f.Provider)),
	}
}

// bankSummaryLine's second and third lines of a bank finding in a run
// summary.
func bankSummaryLine(f ledger.Finding) (second, third string) {
	word, name := bankSubject(f)
	second = upperFirst(word) + " " + code(scrub(name)) + " · expected " + amountText(f.Expected) + " · actual " + amountText(f.Actual)
	lines := "none"
	if ls := bankLines(f); len(ls) > 0 {
		lines = receiptsText(ls)
	}
	return second, "Bank lines " + lines + " · " + counterpartyText(f.Counterparty)
}

// bankHint says what to do about a bank finding.
func bankHint(f ledger.Finding) string {
	switch f.Kind {
	case ledger.KindPayoutMissingAtBank:
		return "Ask the bank for the payout by its trace or reference, and the provider whether it was returned; the finding resolves itself when the credit arrives."
	case ledger.KindPayoutAmountMismatch:
		return "Compare the credit with the payout's items: a bank charge, a partial return or a wrong posting."
	case ledger.KindPayoutDuplicatedAtBank:
		return "The bank or the provider may take the extra money back: ask before spending it."
	case ledger.KindPayoutCompositionMismatch:
		return "Import the provider's payout reconciliation report or pull the payout again: the books miss or double some of its items."
	case ledger.KindUnexplainedBankCredit:
		return "Find who paid it: a payout the books do not know, a customer's transfer, or a bank error."
	case ledger.KindNotPaidOut:
		return "Check the charge at the provider: held in reserve, refunded, or paid out in a payout the books do not know."
	}
	return ""
}

// bankSuggestionLine names the likely other half of a missing payout or an
// unexplained credit. Nothing is linked by hand: a person who agrees
// resolves both findings with a note.
func bankSuggestionLine(f ledger.Finding) string {
	sg := f.Suggestion
	return ":bulb: *Likely the same money:* payout " + code(scrubID(sg.IntentKey)) + " and credit " + code(scrubID(sg.TxnID)) +
		" (" + escape(scrub(sg.Reason)) + "), finding " + code(scrubID(sg.FindingID)) +
		". If it is, resolve both findings with a note that says so."
}

// bankCountFields are what a bank run's summary counts: the payouts of the
// window and how many arrived, and the account's lines.
func bankCountFields(run ledger.Run) []string {
	return []string{
		"*Payouts*\n" + countText(run.Counts.Intents) + " (" + countText(run.Counts.Matched) + " arrived)",
		"*Bank lines*\n" + countText(run.Counts.Transactions),
	}
}
