package matcher

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// An expected payment is paid by the customer (by account number, bank
// transfer or payment link), in as many parts as they choose: the
// successful payments linked to it are summed, net of what was refunded or
// reversed of each. Paid in full (within its tolerance), in any number of
// parts, it raises nothing. Before it is due, a part is partially_paid,
// information that puts nothing at risk; after, the shortfall is underpaid,
// or missing_at_provider when nothing came. Paying more is overpaid, and a
// second full payment after it was paid in full is a duplicate_charge. Its
// local state does not contradict the evidence: an invoice whose prompt was
// cancelled and that was then paid by paybill is paid (its finding, if any,
// names the failed attempt). It is due at its due date; without one, after
// the grace when the books count it paid, and never otherwise.

// expectedPayment judges expected payment i. e.succ and e.failed hold its
// successful and failed charges.
func (e *evaluator) expectedPayment(i int32, in intentRec) {
	m := e.m
	tol := m.tol[i]
	var p payments
	for _, j := range e.succ {
		if m.txns.at(j).cur == in.cur {
			p.pays = append(p.pays, j)
		} else {
			p.others = append(p.others, j)
		}
	}
	slices.SortFunc(p.pays, func(a, b int32) int {
		ta, tb := m.txns.ptr(a), m.txns.ptr(b)
		if c := cmp.Compare(ta.at, tb.at); c != 0 {
			return c
		}
		return strings.Compare(string(m.id(ta)), string(m.id(tb)))
	})
	p.full = -1 // the payment with which the sum reached the amount
	for k, j := range p.pays {
		var ok bool
		if p.sum, ok = addChecked(p.sum, m.net(j, e.refunded)); !ok {
			e.overflowed(in)
			return
		}
		if p.full < 0 && p.sum >= in.minor-tol {
			p.full = k
		}
	}
	// A duplicate is a second full payment after it was paid in full: a
	// refund of one cancels it (no unrecorded refund).
	if p.full >= 0 {
		for _, j := range p.pays[p.full+1:] {
			if d := m.net(j, e.refunded) - in.minor; d <= tol && d >= -tol {
				p.dups = append(p.dups, j)
				e.m.rf.dupCharge[j] = true
			}
		}
	}
	if !in.judged() || m.opt.OnlyDisputes {
		return
	}
	e.judgePayments(in, tol, p)
}

// payments are the successful payments of an expected payment, summed.
type payments struct {
	// pays are those in the intent's currency, oldest first; others are
	// those in another currency.
	pays, others []int32
	// dups are the full payments after it was paid in full.
	dups []int32
	// sum is the net paid in the intent's currency; full indexes the
	// payment of pays with which it reached the amount, -1 if none did.
	sum  int64
	full int
}

// judgePayments raises the finding the sum paid calls for: currency
// mismatch, duplicate charge, overpaid, partially paid, underpaid or
// missing at the provider; nothing when paid in full.
func (e *evaluator) judgePayments(in intentRec, tol int64, p payments) {
	m := e.m
	pays, sum := p.pays, p.sum
	late := m.now >= in.due
	expected := m.amountOf(in.minor, in.cur)
	switch {
	case len(p.others) > 0:
		j := e.first(p.others)
		actual := m.amountOf(m.net(j, e.refunded), m.txns.at(j).cur)
		e.add(ledger.KindCurrencyMismatch, ledger.SeverityHigh, in, p.others, expected, actual, expected, j,
			fmt.Sprintf("customer paid %s for an expected payment of %s%s", show(actual), show(expected), m.settledText(j)))
	case sum > in.minor+tol && len(p.dups) > 0:
		first := pays[p.full]
		e.add(ledger.KindDuplicateCharge, ledger.SeverityHigh, in, pays, expected, m.amountOf(sum, in.cur), m.amountOf(sum-in.minor, in.cur), p.dups[0],
			fmt.Sprintf("expected payment of %s paid in full on %s, then paid again: %s taken in all (%s)", show(expected),
				m.when(m.txns.at(first).at), show(m.amountOf(sum, in.cur)), e.parts(pays)))
	case sum > in.minor+tol:
		e.addSum(ledger.KindOverpaid, ledger.SeverityMedium, in, pays, sum, sum-in.minor,
			fmt.Sprintf("customer paid %s for an expected payment of %s: %s more (%s)", show(m.amountOf(sum, in.cur)), show(expected),
				show(m.amountOf(sum-in.minor, in.cur)), e.parts(pays)))
	case sum >= in.minor-tol:
		// Paid in full, in one part or several.
	case sum > 0 && !late:
		e.addSum(ledger.KindPartiallyPaid, ledger.SeverityLow, in, pays, sum, 0,
			fmt.Sprintf("%s of %s paid so far, %s to come%s (%s)", show(m.amountOf(sum, in.cur)), show(expected),
				show(m.amountOf(in.minor-sum, in.cur)), e.dueText(in), e.parts(pays))+e.failedText())
	case sum > 0:
		e.addSum(ledger.KindUnderpaid, ledger.SeverityMedium, in, pays, sum, in.minor-sum,
			fmt.Sprintf("customer paid %s of an expected payment of %s: %s short%s (%s)", show(m.amountOf(sum, in.cur)), show(expected),
				show(m.amountOf(in.minor-sum, in.cur)), e.pastDueText(in), e.parts(pays))+e.failedText())
	case late && !m.opt.NoMissing:
		e.expectedMissing(in, expected)
	}
}

// expectedMissing raises missing_at_provider for an expected payment past
// due with nothing paid: medium when the books count it paid, noting a
// payment still pending.
func (e *evaluator) expectedMissing(in intentRec, expected money.Amount) {
	m := e.m
	sev, detail := ledger.SeverityLow, "expected payment of "+show(expected)+" not paid"+e.pastDueText(in)
	if in.state == stSucceeded {
		sev = ledger.SeverityMedium
		detail = "expected payment succeeded locally but the provider shows no payment" + graceText(m.opt.Grace)
		if in.flags&fDueSet != 0 {
			detail = "expected payment succeeded locally but the provider shows no payment" + e.pastDueText(in)
		}
	}
	p := noIdx
	if len(e.pend) > 0 {
		p = e.first(e.pend)
		detail += "; a payment is still pending"
	}
	e.add(ledger.KindMissingAtProvider, sev, in, e.pend, expected, m.amountOf(0, in.cur), expected, p, detail+e.failedText())
	if len(e.pend) == 0 {
		e.left.intents = append(e.left.intents, leftover{finding: len(e.res.Findings) - 1, rec: e.idx})
	}
}

// addSum adds a finding about the sum paid for expected payment in: its id
// is the intent's and kind's alone, so that it stays one finding as
// payments join the sum.
func (e *evaluator) addSum(kind ledger.Kind, sev ledger.Severity, in intentRec, pays []int32, sum, atRisk int64, detail string) {
	m := e.m
	exp := m.amountOf(in.minor, in.cur)
	e.add(kind, sev, in, pays, exp, m.amountOf(sum, in.cur), m.amountOf(atRisk, in.cur), e.lastOf(pays), detail)
	f := &e.res.Findings[len(e.res.Findings)-1]
	f.ID = ledger.FindingID(kind, f.IntentKey, nil)
}

// lastOf returns the latest of txns (noIdx when none).
func (e *evaluator) lastOf(txns []int32) int32 {
	if len(txns) == 0 {
		return noIdx
	}
	return txns[len(txns)-1]
}

// parts lists payments, in time order, as findings show them: "KES 1,000.00
// on 2026-03-12 10:00 EAT (+03:00), receipt SCG1AA0001; ...".
func (e *evaluator) parts(pays []int32) string {
	m := e.m
	var b strings.Builder
	if len(pays) > 1 {
		fmt.Fprintf(&b, "%d payments: ", len(pays))
	}
	for k, j := range pays {
		if k > 0 {
			b.WriteString("; ")
		}
		t := m.txns.ptr(j)
		fmt.Fprintf(&b, "%s on %s, %s", show(m.amountOf(m.net(j, e.refunded), t.cur)), m.when(t.at), m.id(t))
	}
	return b.String()
}

// failedText names the failed attempts at an expected payment (a cancelled
// prompt), "" when there are none.
func (e *evaluator) failedText() string {
	if len(e.failed) == 0 {
		return ""
	}
	ids := make([]string, len(e.failed))
	for k, j := range e.failed {
		ids[k] = string(e.m.id(e.m.txns.ptr(j)))
	}
	slices.Sort(ids)
	return "; failed attempt(s) before: " + strings.Join(ids, ", ")
}

func (e *evaluator) dueText(in intentRec) string {
	if in.flags&fDueSet == 0 {
		return ""
	}
	return " by " + e.m.when(in.due)
}

func (e *evaluator) pastDueText(in intentRec) string {
	if in.flags&fDueSet == 0 {
		return ""
	}
	return ", due " + e.m.when(in.due)
}

// when renders a time for people, in the options' zone with its offset:
// "2026-03-14 10:00 EAT (+03:00)".
func (m *Matcher) when(ns int64) string {
	zone := m.opt.Zone
	if zone == nil {
		zone = time.UTC
	}
	return time.Unix(0, ns).In(zone).Format("2006-01-02 15:04 MST (-07:00)")
}
