package matcher

import (
	"fmt"
	"slices"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// disputeGroup is the dispute evidence about one charge.
type disputeGroup struct {
	charge    string
	disputes  []int32
	reversals []int32
}

// disputes raises disputed_charge for every charge of intent in that the
// customer disputed in the window (whatever the intent's window): medium while the dispute is open and the funds are
// still in the balance, high once the provider withdrew them, and nothing
// once a dispute reversal gave them back (the dispute was won). A lost
// dispute keeps its finding open. A dispute never makes a charge
// unsuccessful: it is not a status_mismatch.
func (e *evaluator) disputes(in intentRec) {
	m := e.m
	if len(m.disputeOf) == 0 {
		return
	}
	var groups []disputeGroup
	for j := in.head; j != noIdx; j = m.txns.at(j).next {
		t := m.txns.at(j)
		if t.typ != tyDispute && t.typ != tyDisputeReversal {
			continue
		}
		charge := m.ar.str(m.disputeOf[j])
		k := slices.IndexFunc(groups, func(g disputeGroup) bool { return g.charge == charge })
		if k < 0 {
			groups = append(groups, disputeGroup{charge: charge})
			k = len(groups) - 1
		}
		if t.typ == tyDispute {
			groups[k].disputes = append(groups[k].disputes, j)
		} else {
			groups[k].reversals = append(groups[k].reversals, j)
		}
	}
	slices.SortFunc(groups, func(a, b disputeGroup) int {
		switch {
		case a.charge < b.charge:
			return -1
		case a.charge > b.charge:
			return 1
		}
		return 0
	})
	for _, g := range groups {
		e.dispute(in, g)
	}
}

// dispute judges the dispute evidence about one charge of intent in.
func (e *evaluator) dispute(in intentRec, g disputeGroup) {
	m := e.m
	var live []int32
	first := noIdx
	for _, j := range g.disputes {
		t := m.txns.at(j)
		if t.status == tsFailed {
			continue // an inquiry closed without a chargeback
		}
		// The first dispute: the earliest, the smallest id among equals,
		// whatever order they came in.
		if first == noIdx || t.at < m.txns.at(first).at ||
			t.at == m.txns.at(first).at && string(m.id(&t)) < string(m.id(m.txns.ptr(first))) {
			first = j
		}
		live = append(live, j)
	}
	if first == noIdx {
		e.noteWonEarlier(in, g)
		return
	}
	if !m.txns.at(first).owned {
		return // the window of the dispute judges it
	}
	s, ok := m.sumDisputes(live, g.reversals, m.txns.at(first).cur)
	if !ok {
		t := m.txns.at(first)
		m.skipTxn(string(m.id(&t)), m.curs[s.cur], m.time(t.at),
			fmt.Errorf("the disputes of charge %s sum beyond the matcher's range of ±%d minor units", g.charge, int64(maxSum)))
		return
	}
	if s.withdrawn > 0 && s.returned >= s.withdrawn {
		return // won: the funds came back
	}
	e.raiseDispute(in, g, live, first, s)
}

// noteWonEarlier records the dispute of g as won when funds were reinstated
// in this window and the dispute itself lies in an earlier one.
func (e *evaluator) noteWonEarlier(in intentRec, g disputeGroup) {
	m := e.m
	for _, j := range g.reversals {
		if t := m.txns.at(j); t.status == tsSucceeded && t.owned {
			e.res.DisputesWon = append(e.res.DisputesWon, disputeFindingID(string(m.key(&in)), g.charge))
			break
		}
	}
}

// disputeSums are the minor units of one charge's disputes in the first
// dispute's currency.
type disputeSums struct {
	disputed, withdrawn, returned int64
	cur                           uint8
}

// sumDisputes adds up, in currency cur, the amounts disputed and withdrawn
// by the live disputes and returned by the reversals. It reports false when
// a sum leaves the matcher's range.
func (m *Matcher) sumDisputes(live, reversals []int32, cur uint8) (disputeSums, bool) {
	s := disputeSums{cur: cur}
	ok := true
	for _, j := range live {
		t := m.txns.at(j)
		if t.cur != cur {
			continue
		}
		var in bool
		s.disputed, in = addSaturated(s.disputed, t.minor)
		ok = ok && in
		if t.status == tsSucceeded {
			s.withdrawn, _ = addSaturated(s.withdrawn, t.minor) // at most disputed
		}
	}
	for _, j := range reversals {
		if t := m.txns.at(j); t.status == tsSucceeded && t.cur == cur {
			var in bool
			s.returned, in = addSaturated(s.returned, t.minor)
			ok = ok && in
		}
	}
	return s, ok
}

// raiseDispute raises the disputed_charge finding of g: medium while the
// funds are not withdrawn, high once they are. The finding belongs to the
// window of the first dispute and keeps the charge's dispute id.
func (e *evaluator) raiseDispute(in intentRec, g disputeGroup, live []int32, first int32, s disputeSums) {
	m := e.m
	cur := s.cur
	ids := []string{g.charge}
	txns := slices.Clone(live)
	for _, j := range live {
		ids = append(ids, string(m.id(m.txns.ptr(j))))
	}
	for _, j := range g.reversals {
		ids = append(ids, string(m.id(m.txns.ptr(j))))
		txns = append(txns, j)
	}
	amount := m.amountOf(s.disputed, cur)
	atRisk := m.amountOf(max(s.disputed-s.returned, 0), cur)
	since := m.when(m.txns.at(first).at)
	sev := ledger.SeverityHigh
	var detail string
	switch {
	case s.withdrawn == 0:
		sev = ledger.SeverityMedium
		detail = fmt.Sprintf("customer disputed charge %s for %s on %s; the funds are not withdrawn yet", g.charge, show(amount), since)
	case s.returned > 0:
		detail = fmt.Sprintf("customer disputed charge %s for %s on %s: %s withdrawn, %s reinstated", g.charge, show(amount), since,
			show(m.amountOf(s.withdrawn, cur)), show(m.amountOf(s.returned, cur)))
	default:
		detail = fmt.Sprintf("customer disputed charge %s for %s on %s: %s withdrawn from the balance", g.charge, show(amount), since,
			show(m.amountOf(s.withdrawn, cur)))
	}
	detail += m.settledText(first)
	e.addIDs(ledger.KindDisputedCharge, sev, in, ids, txns, m.amountOf(in.minor, in.cur), amount, atRisk, first, detail)
	// The finding belongs to the window of the dispute, which comes weeks
	// after the charge, and keeps its id as the dispute's evidence grows.
	f := &e.res.Findings[len(e.res.Findings)-1]
	f.ID, f.OccurredAt = disputeFindingID(f.IntentKey, g.charge), m.time(m.txns.at(first).at)
}

// disputeFindingID is the id of the disputed_charge finding of a charge: a
// charge is disputed at most once, and its finding is the same from the
// dispute's opening to its end, whatever evidence joins it.
func disputeFindingID(intentKey, charge string) string {
	return ledger.FindingID(ledger.KindDisputedCharge, intentKey, []string{charge})
}

// settledText describes how transaction j settled when it settled in
// another currency than it was presented in, or "".
func (m *Matcher) settledText(j int32) string {
	s, ok := m.settled[j]
	if !ok {
		return ""
	}
	return " (" + m.ar.str(s) + ")"
}

// settlementText renders a settlement for findings: "settled as USD 12.34
// at 1.2345". value is decimal text; "" when currency is empty.
func settlementText(value, currency, rate string) string {
	if currency == "" {
		return ""
	}
	shown := currency + " " + value
	if a, err := money.Parse(value, currency); err == nil {
		shown = show(a)
	}
	s := "settled as " + shown
	if rate != "" {
		s += " at " + rate
	}
	return s
}
