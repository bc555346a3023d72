package matcher

import (
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// A record the matcher cannot evaluate (an amount beyond int64 minor units,
// or beyond maxMinor) does not stop the run: it becomes an
// unreadable_record finding of its own, and the rest of the window is
// matched. Every sum over many transactions is checked: one that would
// leave maxSum makes what it is about unreadable instead of wrapping around
// or depending on the order of the input. The charges of an intent, the
// refunds of a refund intent and the refunds (or refund failures) of a
// charge linked to an intent make the intent unreadable; the refunds of a
// charge that links to no intent make the charge unreadable, and the
// refunds are left out with it; the disputes of a charge make its first
// dispute unreadable.
const (
	// maxMinor bounds one amount the matcher takes, in minor units: the
	// ceiling of the limits at the edge.
	maxMinor = ledger.CeilingMaxMinor
	// maxSum bounds a sum of amounts; with |amount| <= maxMinor, every
	// difference the evaluation takes of such sums fits in int64.
	maxSum = 10 * ledger.CeilingMaxMinor
)

// unreadable is a record that was left out of matching.
type unreadable struct {
	intentKey, txnID string
	cur              string
	at               time.Time
	reason           string
}

// outOfRange reports an amount the matcher does not take.
func outOfRange(minor int64) error {
	if minor > maxMinor || minor < -maxMinor {
		return fmt.Errorf("amount of %d minor units is beyond the matcher's range of ±%d", minor, int64(maxMinor))
	}
	return nil
}

// skipIntent records an intent that cannot be evaluated, when it belongs to
// the window (a neighbouring window's run reports its own).
func (m *Matcher) skipIntent(key, cur string, created time.Time, err error) {
	if at := created.UnixNano(); at < m.from || at >= m.to {
		return
	}
	m.skipped = append(m.skipped, unreadable{intentKey: key, cur: cur, at: created, reason: err.Error()})
}

// skipTxn records a provider transaction that cannot be evaluated.
func (m *Matcher) skipTxn(id, cur string, at time.Time, err error) {
	if ns := at.UnixNano(); ns < m.from || ns >= m.to {
		return
	}
	m.skipped = append(m.skipped, unreadable{txnID: id, cur: cur, at: at, reason: err.Error()})
}

// unreadableFindings turns the skipped records into findings.
func (m *Matcher) unreadableFindings(res *Result) {
	for _, u := range m.skipped {
		var ids []string
		what := "intent " + ledger.Clip(u.intentKey)
		if u.txnID != "" {
			ids = []string{u.txnID}
			what = "provider transaction " + ledger.Clip(u.txnID)
		}
		zero := money.Amount{Value: decimal.Zero, Currency: u.cur}
		if _, err := money.Exponent(u.cur); err != nil {
			zero = money.Amount{}
		}
		res.Findings = append(res.Findings, ledger.Finding{
			ID: ledger.FindingID(ledger.KindUnreadableRecord, u.intentKey, ids), Kind: ledger.KindUnreadableRecord,
			Severity: ledger.SeverityHigh, Provider: m.opt.Provider, Account: m.opt.Account, IntentKey: u.intentKey, ProviderTxnIDs: ids,
			Expected: zero, Actual: zero, AtRisk: zero, OccurredAt: u.at.UTC(), Status: ledger.FindingOpen,
			Detail: ledger.SafeText(what+" cannot be evaluated and was left out of matching: "+u.reason+
				"; correct or remove the record", 512),
		})
	}
}

// addChecked adds b to a; ok is false when the sum would leave ±maxSum.
func addChecked(a, b int64) (int64, bool) {
	if b > 0 && a > math.MaxInt64-b || b < 0 && a < math.MinInt64-b {
		return 0, false
	}
	s := a + b
	return s, s <= maxSum && s >= -maxSum
}

// addSaturated adds b, an amount within ±maxMinor, to a, a sum of such
// amounts of one sign; ok is false when the sum leaves ±maxSum, and the
// sum then stays just beyond it, so that a sum of amounts of one sign and
// whether it overflowed do not depend on the order they are added in.
func addSaturated(a, b int64) (int64, bool) {
	s := a + b
	switch {
	case s > maxSum:
		return maxSum + 1, false
	case s < -maxSum:
		return -maxSum - 1, false
	}
	return s, a <= maxSum && a >= -maxSum
}
