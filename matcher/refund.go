package matcher

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
)

// refunds is what a Matcher knows of refund intents and of the provider's
// refunds. Everything is empty when a window holds none.
type refunds struct {
	// of names, for each refund intent, the key of its charge intent.
	of map[int32]sref
	// forCharge lists, for each charge intent, its refund intents (of the
	// input), by index.
	forCharge map[int32][]int32
	// txns are the refund transactions (refunds, and reversals when they
	// return money), in input order.
	txns []int32
	// charge names, for each refund transaction whose charge is in the
	// input, that charge.
	charge map[int32]int32
	// dupCharge holds the charges that duplicate the charge paying their
	// intent: a refund of one cancels the duplicate.
	dupCharge map[int32]bool
	// failedBack sums, per charge, the refund failures that gave the money
	// of a refund of it back.
	failedBack map[int32]int64
}

func newRefunds() refunds {
	return refunds{of: map[int32]sref{}, forCharge: map[int32][]int32{}, charge: map[int32]int32{}, dupCharge: map[int32]bool{},
		failedBack: map[int32]int64{}}
}

// refundLike reports whether transactions of type typ return a customer's
// money.
func (m *Matcher) refundLike(typ uint8) bool {
	return typ == tyRefund || typ == tyReversal && m.opt.ReversalsAreRefunds
}

// intentKind says what the intent r is.
func (m *Matcher) intentKind(r *intentRec) ledger.IntentKind {
	switch r.kind {
	case kRefund:
		return ledger.IntentRefund
	case kExpected:
		return ledger.IntentExpected
	}
	return ledger.IntentCharge
}

// isRefund reports whether intent i is a refund intent.
func (m *Matcher) isRefund(i int32) bool {
	if len(m.rf.of) == 0 {
		return false
	}
	_, ok := m.rf.of[i]
	return ok
}

// linkRefund links a refund to a refund intent, before the linking order
// of charges: the refund's id recorded by an attempt of the refund intent,
// then the reference it echoes (the refund intent's reference or key, as
// Stripe's metadata carries it). A refund found by neither is linked as
// other transactions are, and then through the charge it names.
func (m *Matcher) linkRefund(id, reference string, minor int64, cur uint8, at int64) (int32, Method) {
	best := noIdx
	if id != "" && len(m.byPref.slots) > 0 {
		h := maphash.String(m.seed, id)
		tag, slots := uint32(h>>32), m.byPref.slots
		for i := m.byPref.start(h); slots[i].idx != 0; {
			if s := &slots[i]; s.tag == tag && m.ar.eq(s.ref, id) && m.isRefund(int32(s.idx-1)) {
				best = m.better(best, int32(s.idx-1), minor, cur, at)
			}
			if i++; i == len(slots) {
				i = 0
			}
		}
		if m.late != nil {
			for _, j := range m.late.byPref[id] {
				if m.isRefund(j) {
					best = m.better(best, j, minor, cur, at)
				}
			}
		}
		if best != noIdx {
			return best, ByProviderRef
		}
	}
	if reference == "" {
		return noIdx, Unlinked
	}
	// The echoed reference is compared as a charge's is: in normal form
	// unless references are exact.
	ref := m.echoed(reference)
	if ref != "" {
		m.byRef.each(maphash.String(m.seed, ref), func(j int32) bool {
			if m.isRefund(j) && string(m.ref(m.intents.ptr(j))) == ref {
				best = m.better(best, j, minor, cur, at)
			}
			return true
		})
		if m.late != nil {
			for _, j := range m.late.byRef[ref] {
				if m.isRefund(j) {
					best = m.better(best, j, minor, cur, at)
				}
			}
		}
	}
	if best == noIdx {
		key := strings.TrimSpace(reference)
		if j := m.lookupKey(key, maphash.String(m.seed, key)); j != noIdx && m.isRefund(j) {
			best = j
		}
	}
	if best != noIdx {
		return best, ByReference
	}
	return noIdx, Unlinked
}

// linkRefunds chains every refund transaction to its intent once all are
// known. A refund linked to a refund intent stays with it. A refund that
// reached a charge intent (through the charge it names, or a reference) is
// given to one of that charge's refund intents that no refund has yet, the
// one whose amount agrees first, then the one created nearest to it; with
// none left it stays with the charge intent, unrecorded. Refunds are taken
// in time order (then by id), so the outcome does not depend on the order
// of the input.
func (m *Matcher) linkRefunds() {
	if len(m.rf.txns) == 0 {
		return
	}
	for i, ks := range m.rf.of {
		if c := m.lookupKey(m.ar.str(ks), maphash.String(m.seed, m.ar.str(ks))); c != noIdx {
			m.rf.forCharge[c] = append(m.rf.forCharge[c], i)
		}
	}
	slices.SortFunc(m.rf.txns, func(a, b int32) int {
		ta, tb := m.txns.ptr(a), m.txns.ptr(b)
		if c := cmp.Compare(ta.at, tb.at); c != 0 {
			return c
		}
		return strings.Compare(string(m.id(ta)), string(m.id(tb)))
	})
	claimed := map[int32]bool{}
	for _, j := range m.rf.txns {
		if t := m.txns.ptr(j); t.intent != noIdx && m.isRefund(t.intent) {
			claimed[t.intent] = true
		}
	}
	for _, j := range m.rf.txns {
		t := m.txns.ptr(j)
		if t.intent != noIdx && !m.isRefund(t.intent) {
			best := noIdx
			for _, r := range m.rf.forCharge[t.intent] {
				if !claimed[r] {
					best = m.better(best, r, t.minor, t.cur, t.at)
				}
			}
			if best != noIdx {
				t.intent, t.method = best, ByCharge
				claimed[best] = true
			}
		}
		if t.intent != noIdx {
			m.chain(t, j)
		}
	}
}

// markDuplicates records, for a charge intent paid by two or more charges,
// every charge but the one that pays it: a refund of one of those cancels a
// duplicate and is no unrecorded refund. refd are the charges refunded in
// full.
func (e *evaluator) markDuplicates(in intentRec) {
	if len(e.succ)+len(e.refd) < 2 || len(e.m.rf.txns) == 0 {
		return
	}
	var p int32
	if len(e.succ) > 0 {
		p = e.primary(in)
	} else {
		p = e.first(e.refd)
	}
	for _, list := range [2][]int32{e.succ, e.refd} {
		for _, j := range list {
			if j != p {
				e.m.rf.dupCharge[j] = true
			}
		}
	}
}

// refundIntent judges refund intent i against the provider's refunds linked
// to it, as intent judges a charge intent against its charges.
func (e *evaluator) refundIntent(i int32) {
	m := e.m
	in := m.intents.at(i)
	e.succ, e.pend, e.failed = e.succ[:0], e.pend[:0], e.failed[:0]
	seen := 0
	for j := in.head; j != noIdx; {
		t := m.txns.at(j)
		if m.refundLike(t.typ) {
			seen++
			switch t.status {
			case tsSucceeded:
				e.succ = append(e.succ, j)
			case tsPending:
				e.pend = append(e.pend, j)
			default:
				e.failed = append(e.failed, j)
			}
		}
		j = t.next
	}
	state := in.state
	if state == stUnknown && len(e.succ) > 0 {
		if in.owned() || in.created < m.lo {
			e.res.Settlements = append(e.res.Settlements, Settlement{IntentKey: string(m.key(&in)),
				TxnID: string(m.id(m.txns.ptr(e.first(e.succ))))})
		}
		state = stSucceeded
	}
	if !in.judged() || m.opt.OnlyDisputes {
		return
	}
	late := m.now >= in.due
	switch state {
	case stSucceeded:
		switch {
		case len(e.succ) >= 2:
			e.duplicateRefund(in)
		case len(e.succ) == 1:
			e.compareRefund(in, e.succ[0])
		case !late || m.opt.NoMissing:
		default:
			expected := m.amountOf(in.minor, in.cur)
			what := "no refund"
			if len(e.pend) > 0 {
				what = "its refund still pending"
			}
			p := noIdx
			if len(e.pend) > 0 {
				p = e.first(e.pend)
			}
			e.add(ledger.KindMissingAtProvider, ledger.SeverityMedium, in, e.pend, expected, m.amountOf(0, in.cur), expected, p,
				"refund succeeded locally but the provider shows "+what+graceText(m.opt.Grace))
		}
	case stProcessing, stUnknown, stPending:
		switch {
		case len(e.succ) >= 2:
			e.duplicateRefund(in)
		case state == stPending && len(e.succ) > 0:
			e.refundedAnyway(in)
		case seen == 0 && late:
			e.stuck(in)
		}
	case stFailed:
		if len(e.succ) > 0 {
			e.refundedAnyway(in)
		}
	}
}

// refundSum adds the successful refunds in currency cur; ok is false when
// the sum leaves the matcher's range.
func (e *evaluator) refundSum(cur uint8) (s int64, ok bool) {
	for _, j := range e.succ {
		if t := e.m.txns.at(j); t.cur == cur {
			if s, ok = addChecked(s, t.minor); !ok {
				return 0, false
			}
		}
	}
	return s, true
}

func (e *evaluator) duplicateRefund(in intentRec) {
	m := e.m
	p := e.first(e.succ)
	cur := m.txns.at(p).cur
	total, ok := e.refundSum(cur)
	if !ok {
		e.overflowed(in)
		return
	}
	expected, actual := m.amountOf(in.minor, in.cur), m.amountOf(total, cur)
	e.add(ledger.KindDuplicateRefund, ledger.SeverityHigh, in, e.succ, expected, actual, m.amountOf(total-m.txns.at(p).minor, cur), p,
		fmt.Sprintf("%d provider refunds for one refund intent: %s to refund, %s refunded", len(e.succ), show(expected), show(actual)))
}

func (e *evaluator) compareRefund(in intentRec, j int32) {
	m := e.m
	t := m.txns.at(j)
	if t.cur == in.cur && t.minor == in.minor {
		return
	}
	expected, actual := m.amountOf(in.minor, in.cur), m.amountOf(t.minor, t.cur)
	ids := []int32{j}
	if t.cur != in.cur {
		e.add(ledger.KindCurrencyMismatch, ledger.SeverityHigh, in, ids, expected, actual, expected, j,
			fmt.Sprintf("provider refunded %s for a refund intent of %s%s", show(actual), show(expected), m.settledText(j)))
		return
	}
	diff := t.minor - in.minor
	sev, word := ledger.SeverityHigh, "more"
	if diff < 0 {
		sev, word, diff = ledger.SeverityMedium, "less", -diff
	}
	e.add(ledger.KindAmountMismatch, sev, in, ids, expected, actual, m.amountOf(diff, in.cur), j,
		fmt.Sprintf("provider refunded %s for a refund intent of %s: %s %s%s", show(actual), show(expected),
			show(m.amountOf(diff, in.cur)), word, m.settledText(j)))
}

func (e *evaluator) refundedAnyway(in intentRec) {
	m := e.m
	p := e.first(e.succ)
	cur := m.txns.at(p).cur
	total, ok := e.refundSum(cur)
	if !ok {
		e.overflowed(in)
		return
	}
	expected, actual := m.amountOf(in.minor, in.cur), m.amountOf(total, cur)
	e.add(ledger.KindStatusMismatch, ledger.SeverityHigh, in, e.succ, expected, actual, actual, p,
		fmt.Sprintf("refund is %s locally but the provider refunded %s", stateNames[in.state], show(actual)))
}

// unrecordedRefunds raises unrecorded_refund for every successful refund of
// the window that reached no refund intent, except a refund of a charge
// that duplicates the one paying its intent, and a refund of a charge that
// links to no intent (it nets that charge, which is judged as an
// unknown charge net of it).
func (e *evaluator) unrecordedRefunds() {
	m := e.m
	for _, j := range m.rf.txns {
		t := m.txns.at(j)
		if !t.owned || t.status != tsSucceeded || t.intent != noIdx && m.isRefund(t.intent) {
			continue
		}
		ch, hasCharge := m.rf.charge[j]
		// A refund of a charge whose refunds sum beyond the range is left
		// out with that charge (an unreadable record).
		if hasCharge && (m.rf.dupCharge[ch] || t.intent == noIdx || m.overflow[ch]) {
			continue
		}
		if hasCharge && m.rf.failedBack[ch] >= t.minor {
			m.rf.failedBack[ch] -= t.minor // the refund failed: its money came back
			continue
		}
		id := string(m.id(&t))
		amount := m.amountOf(t.minor, t.cur)
		key, of, kind := "", "", ledger.IntentKind("")
		if t.intent != noIdx {
			key, kind = string(m.key(m.intents.ptr(t.intent))), ledger.IntentCharge
			of = fmt.Sprintf(" of charge intent %q", key)
		}
		if hasCharge {
			of = fmt.Sprintf(" of %s%s", m.id(m.txns.ptr(ch)), of)
		}
		word := "refunded"
		if t.typ == tyReversal {
			word = "reversed"
		}
		e.res.Findings = append(e.res.Findings, ledger.Finding{
			ID: ledger.FindingID(ledger.KindUnrecordedRefund, key, []string{id}), Kind: ledger.KindUnrecordedRefund,
			Severity: ledger.SeverityMedium, Provider: m.opt.Provider, Account: m.opt.Account, IntentKey: key, IntentKind: kind, ProviderTxnIDs: []string{id},
			Expected: m.amountOf(0, t.cur), Actual: amount, AtRisk: amount, Counterparty: string(m.cp(&t)),
			Detail:     fmt.Sprintf("provider %s %s%s with no refund intent recorded%s", word, show(amount), of, m.settledText(j)),
			OccurredAt: m.time(t.at), Status: ledger.FindingOpen,
		})
	}
}
