package matcher

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// evaluator judges intents and unlinked charges. Its scratch slices are
// reused from one intent to the next.
type evaluator struct {
	m              *Matcher
	refunded       map[int32]int64
	res            *Result
	succ, pend     []int32
	failed, revers []int32
	// refd are the successful charges refunded in full: paid, then given
	// back, never a status mismatch.
	refd []int32
	// idx is the intent being judged; left collects the findings that may
	// carry a suggestion (suggest.go).
	idx  int32
	left leftovers
}

// intent judges intent i against the charges linked to it.
func (e *evaluator) intent(i int32) {
	m := e.m
	if m.isRefund(i) {
		e.refundIntent(i)
		return
	}
	in := m.intents.at(i)
	e.idx = i
	charges, ok := e.sortCharges(in)
	if !ok {
		e.overflowed(in)
		return
	}
	if in.expected() {
		e.disputes(in)
		e.expectedPayment(i, in)
		return
	}
	e.markDuplicates(in)
	state := in.state
	if state == stUnknown && len(e.succ) > 0 {
		if in.owned() || in.created < m.lo {
			e.res.Settlements = append(e.res.Settlements, Settlement{IntentKey: string(m.key(&in)),
				TxnID: string(m.id(m.txns.ptr(e.primary(in))))})
		}
		state = stSucceeded
	}
	e.disputes(in)
	if !in.judged() || m.opt.OnlyDisputes {
		return
	}
	e.judgeState(in, state, charges)
}

// sortCharges sorts the charges of intent in into the evaluator's scratch
// slices (pending, failed, successful, refunded in full, reversed) and
// counts them. It reports false at the first transaction whose amounts
// overflowed.
func (e *evaluator) sortCharges(in intentRec) (charges int, ok bool) {
	m := e.m
	e.succ, e.pend, e.failed, e.revers, e.refd = e.succ[:0], e.pend[:0], e.failed[:0], e.revers[:0], e.refd[:0]
	for j := in.head; j != noIdx; {
		t := m.txns.at(j)
		if t.typ == tyCharge {
			charges++
			switch {
			case t.status == tsPending:
				e.pend = append(e.pend, j)
			case t.status == tsFailed:
				e.failed = append(e.failed, j)
			case m.successful(j, e.refunded):
				e.succ = append(e.succ, j)
			case m.reversed[j] < t.minor:
				e.refd = append(e.refd, j)
			default:
				e.revers = append(e.revers, j)
			}
		}
		if m.overflow[j] {
			return charges, false
		}
		j = t.next
	}
	return charges, true
}

// judgeState raises what the charges say against the intent's state
// (succeeded, processing or unknown, pending, failed): a duplicate, an
// amount or currency mismatch, a provider refusal, a missing charge, a
// stuck intent or money taken for an intent that is not paid.
func (e *evaluator) judgeState(in intentRec, state uint8, charges int) {
	m := e.m
	late := m.now >= in.due
	switch state {
	case stSucceeded:
		switch {
		case len(e.succ) >= 2:
			e.duplicate(in)
		case len(e.succ) == 1:
			e.compare(in, e.succ[0])
		case len(e.refd) > 0:
			e.compare(in, e.first(e.refd)) // paid, then refunded in full
		case !late:
		case len(e.failed)+len(e.revers) > 0:
			e.providerSaysNo(in)
		case !m.opt.NoMissing:
			e.missing(in)
		}
	case stProcessing, stUnknown:
		switch {
		case len(e.succ) >= 2:
			e.duplicate(in)
		case charges == 0 && late:
			e.stuck(in)
		}
	case stPending:
		switch {
		case len(e.succ) > 0:
			e.moneyTaken(in)
		case charges == 0 && late:
			e.stuck(in) // never charged: its charge job gave up or never ran
		}
	case stFailed:
		if len(e.succ) > 0 {
			e.moneyTaken(in)
		}
	}
}

// primary picks, among the successful charges, the one that pays the
// intent: same amount and currency first, then the earliest, then the
// smallest id.
func (e *evaluator) primary(in intentRec) int32 {
	m := e.m
	best := e.succ[0]
	for _, j := range e.succ[1:] {
		a, b := m.txns.at(best), m.txns.at(j)
		am := a.cur == in.cur && m.net(best, e.refunded) == in.minor
		bm := b.cur == in.cur && m.net(j, e.refunded) == in.minor
		switch {
		case am != bm:
			if bm {
				best = j
			}
		case a.at != b.at:
			if b.at < a.at {
				best = j
			}
		case string(m.id(&b)) < string(m.id(&a)):
			best = j
		}
	}
	return best
}

// first returns the earliest of txns, the smallest id among equals.
func (e *evaluator) first(txns []int32) int32 {
	m := e.m
	best := txns[0]
	for _, j := range txns[1:] {
		a, b := m.txns.at(best), m.txns.at(j)
		if b.at < a.at || b.at == a.at && string(m.id(&b)) < string(m.id(&a)) {
			best = j
		}
	}
	return best
}

// sum adds the net amounts of txns in currency cur; ok is false when the
// sum leaves the matcher's range.
func (e *evaluator) sum(txns []int32, cur uint8) (s int64, ok bool) {
	for _, j := range txns {
		if e.m.txns.at(j).cur == cur {
			if s, ok = addChecked(s, e.m.net(j, e.refunded)); !ok {
				return 0, false
			}
		}
	}
	return s, true
}

// overflowed records an intent whose amounts cannot be summed as an
// unreadable record; the rest of the window is judged as usual.
func (e *evaluator) overflowed(in intentRec) {
	m := e.m
	m.skipIntent(string(m.key(&in)), m.curs[in.cur], m.time(in.created),
		fmt.Errorf("the amounts of its provider transactions sum beyond the matcher's range of ±%d minor units", int64(maxSum)))
}

func (e *evaluator) duplicate(in intentRec) {
	m := e.m
	p := e.primary(in)
	cur := m.txns.at(p).cur
	total, ok := e.sum(e.succ, cur)
	if !ok {
		e.overflowed(in)
		return
	}
	expected := m.amountOf(in.minor, in.cur)
	actual := m.amountOf(total, cur)
	e.add(ledger.KindDuplicateCharge, ledger.SeverityHigh, in, e.succ, expected, actual, m.amountOf(total-m.net(p, e.refunded), cur), p,
		fmt.Sprintf("%d successful charges for one intent: %s expected, %s taken", len(e.succ), show(expected), show(actual)))
}

func (e *evaluator) compare(in intentRec, j int32) {
	m := e.m
	t := m.txns.at(j)
	// Compared net of reversals (the uncaptured part of a partial
	// capture), not of refunds: a refund is another story.
	charged := t.minor - m.reversed[j]
	if t.cur == in.cur && charged == in.minor {
		return
	}
	expected := m.amountOf(in.minor, in.cur)
	actual := m.amountOf(m.net(j, e.refunded), t.cur)
	ids := []int32{j}
	switch {
	case t.cur != in.cur:
		e.add(ledger.KindCurrencyMismatch, ledger.SeverityHigh, in, ids, expected, actual, expected, j,
			fmt.Sprintf("provider charged %s for an intent of %s%s", show(actual), show(expected), m.settledText(j)))
	case charged != in.minor:
		diff := charged - in.minor
		sev, word := ledger.SeverityHigh, "more"
		if diff < 0 {
			sev, word, diff = ledger.SeverityMedium, "less", -diff
		}
		gross := m.amountOf(charged, t.cur)
		e.add(ledger.KindAmountMismatch, sev, in, ids, expected, gross, m.amountOf(diff, in.cur), j,
			fmt.Sprintf("provider charged %s for an intent of %s: %s %s%s", show(gross), show(expected),
				show(m.amountOf(diff, in.cur)), word, m.settledText(j)))
	}
}

func (e *evaluator) providerSaysNo(in intentRec) {
	m := e.m
	ids := append(append([]int32(nil), e.failed...), e.revers...)
	what := "failed"
	if len(e.failed) == 0 {
		what = "was reversed or refunded in full"
	}
	expected := m.amountOf(in.minor, in.cur)
	e.add(ledger.KindStatusMismatch, ledger.SeverityMedium, in, ids, expected, m.amountOf(0, in.cur), expected, e.first(ids),
		fmt.Sprintf("intent succeeded locally but the provider's charge %s", what))
}

func (e *evaluator) missing(in intentRec) {
	m := e.m
	expected := m.amountOf(in.minor, in.cur)
	detail := "intent succeeded locally but the provider shows no successful charge" + graceText(m.opt.Grace)
	if len(e.pend) > 0 {
		detail = "intent succeeded locally but the provider's charge is still pending" + graceText(m.opt.Grace)
	}
	p := noIdx
	if len(e.pend) > 0 {
		p = e.first(e.pend)
	}
	e.add(ledger.KindMissingAtProvider, ledger.SeverityMedium, in, e.pend, expected, m.amountOf(0, in.cur), expected, p, detail)
	if len(e.pend) == 0 {
		e.left.intents = append(e.left.intents, leftover{finding: len(e.res.Findings) - 1, rec: e.idx})
	}
}

func (e *evaluator) stuck(in intentRec) {
	m := e.m
	expected := m.amountOf(in.minor, in.cur)
	since := m.when(in.due - m.grace)
	detail := "intent is unknown since " + since
	switch in.state {
	case stProcessing:
		detail = "intent is still processing: its lease expired at " + since
	case stPending:
		detail = "intent is still pending since " + since + " (its charge job may have given up: see `reconcile jobs list`)"
	}
	e.add(ledger.KindStuckIntent, ledger.SeverityLow, in, nil, expected, m.amountOf(0, in.cur), expected, noIdx,
		detail+", with no provider evidence"+graceText(m.opt.Grace))
}

func (e *evaluator) moneyTaken(in intentRec) {
	m := e.m
	p := e.primary(in)
	cur := m.txns.at(p).cur
	expected := m.amountOf(in.minor, in.cur)
	total, ok := e.sum(e.succ, cur)
	if !ok {
		e.overflowed(in)
		return
	}
	actual := m.amountOf(total, cur)
	e.add(ledger.KindStatusMismatch, ledger.SeverityHigh, in, e.succ, expected, actual, actual, p,
		fmt.Sprintf("intent is %s locally but the provider took %s", stateNames[in.state], show(actual))+e.failedText())
}

// unknownCharges raises unknown_charge for every successful charge of the
// window that linked to no intent.
func (e *evaluator) unknownCharges() {
	m := e.m
	for i := range m.txns.len() {
		t := m.txns.at(int32(i))
		if t.intent != noIdx || !t.owned {
			continue
		}
		// Whether a charge whose refunds overflowed is still successful
		// cannot be told.
		if m.overflow[int32(i)] && t.typ == tyCharge && t.status == tsSucceeded {
			m.skipTxn(string(m.id(&t)), m.curs[t.cur], m.time(t.at),
				fmt.Errorf("its refunds sum beyond the matcher's range of ±%d minor units", int64(maxSum)))
			continue
		}
		if !m.successful(int32(i), e.refunded) {
			continue
		}
		id := string(m.id(&t))
		actual := m.amountOf(m.net(int32(i), e.refunded), t.cur)
		refs := m.unlinkedRefs[int32(i)]
		detail := fmt.Sprintf("successful charge of %s links to no intent%s", show(actual), m.settledText(int32(i)))
		if r, p := m.ar.str(refs[0]), m.ar.str(refs[1]); r != "" || p != "" {
			detail += fmt.Sprintf(" (reference %q, provider ref %q)", r, p)
		}
		e.res.Findings = append(e.res.Findings, ledger.Finding{
			ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{id}), Kind: ledger.KindUnknownCharge,
			Severity: ledger.SeverityMedium, Provider: m.opt.Provider, Account: m.opt.Account, ProviderTxnIDs: []string{id},
			Expected: m.amountOf(0, t.cur), Actual: actual, AtRisk: actual,
			Counterparty: string(m.cp(&t)), Detail: detail, OccurredAt: m.time(t.at),
			Status: ledger.FindingOpen,
		})
		e.left.txns = append(e.left.txns, leftover{finding: len(e.res.Findings) - 1, rec: int32(i),
			minor: m.net(int32(i), e.refunded)})
	}
}

// add converts a finding about intent in to its ledger form. p names the
// transaction whose counterparty is shown, noIdx for the intent's customer.
func (e *evaluator) add(kind ledger.Kind, sev ledger.Severity, in intentRec, txns []int32,
	expected, actual, atRisk money.Amount, p int32, detail string) {
	m := e.m
	ids := make([]string, len(txns))
	for i, j := range txns {
		ids[i] = string(m.id(m.txns.ptr(j)))
	}
	e.addIDs(kind, sev, in, ids, txns, expected, actual, atRisk, p, detail)
}

// addIDs is add for evidence named by id (ids) of which txns are the
// transactions at hand.
func (e *evaluator) addIDs(kind ledger.Kind, sev ledger.Severity, in intentRec, ids []string, txns []int32,
	expected, actual, atRisk money.Amount, p int32, detail string) {
	m := e.m
	key := string(m.key(&in))
	slices.SortFunc(ids, cmp.Compare)
	// Provider transactions are stored with the counterparty masked; the
	// intent's customer is masked here.
	cp := ""
	if p != noIdx {
		cp = string(m.cp(m.txns.ptr(p)))
	}
	if cp == "" {
		cp = ledger.MaskCustomer(string(m.cust(&in)))
	}
	for _, j := range txns {
		switch m.txns.at(j).method {
		case Fuzzy:
			detail += " (linked by amount, currency and customer: fuzzy)"
		case Manual:
			detail += " (linked by hand)"
		default:
			continue
		}
		break
	}
	e.res.Findings = append(e.res.Findings, ledger.Finding{
		ID: ledger.FindingID(kind, key, ids), Kind: kind, Severity: sev, Provider: m.opt.Provider, Account: m.opt.Account, IntentKey: key,
		IntentKind: m.intentKind(&in), ProviderTxnIDs: ids, Expected: expected, Actual: actual, AtRisk: atRisk,
		Counterparty: cp, Detail: detail, OccurredAt: m.time(in.created), Status: ledger.FindingOpen,
	})
}

func show(a money.Amount) string { return a.Currency + " " + a.Format() }

func graceText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return " after " + duration(d) + " of settlement grace"
}

// duration renders d briefly: 2h, 90m, 45s, 1h30m.
func duration(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"m0s", "h0m"} {
		if len(s) > len(z) && s[len(s)-len(z):] == z {
			s = s[:len(s)-len(z)+1]
		}
	}
	return s
}
