package matcher

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/reconcilehq/reconcile/ledger"
)

// fuzzy links unlinked successful charges to intents that have no charge,
// when amount, currency and masked customer agree within the tolerance and
// the pairing is one to one: the charge has exactly one candidate intent and
// that intent is the candidate of no other charge. It returns the number of
// links made.
func (m *Matcher) fuzzy(refunded map[int32]int64) int {
	var orphans []int32
	for i := range m.txns.len() {
		t := m.txns.at(int32(i))
		if t.intent == noIdx && len(m.cp(&t)) > 0 && !m.overflow[int32(i)] && m.successful(int32(i), refunded) {
			orphans = append(orphans, int32(i))
		}
	}
	if len(orphans) == 0 {
		return 0
	}
	fkey := func(cur uint8, minor int64, cust string) string {
		return m.curs[cur] + "|" + strconv.FormatInt(minor, 10) + "|" + cust
	}
	cands := map[string][]int32{}
	for i := range m.intents.len() {
		in := m.intents.at(int32(i))
		if len(m.cust(&in)) == 0 || in.refund() || m.hasCharge(in) {
			continue
		}
		k := fkey(in.cur, in.minor, ledger.MaskCustomer(string(m.cust(&in))))
		cands[k] = append(cands[k], int32(i))
	}
	type pair struct{ txn, intent int32 }
	var pairs []pair
	claims := map[int32]int{}
	for _, ti := range orphans {
		t := m.txns.at(ti)
		one := noIdx
		n := 0
		for _, ii := range cands[fkey(t.cur, t.minor, string(m.cp(&t)))] {
			if absDiff(m.intents.at(ii).created, t.at) <= uint64(m.tolerance) {
				one, n = ii, n+1
				claims[ii]++ // a candidate of this charge, whether or not it has others
			}
		}
		if n == 1 {
			pairs = append(pairs, pair{ti, one})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Compare(a.txn, b.txn) })
	linked := 0
	for _, p := range pairs {
		if claims[p.intent] != 1 {
			continue
		}
		t := m.txns.ptr(p.txn)
		t.intent, t.method = p.intent, Fuzzy
		m.chain(t, p.txn)
		linked++
	}
	return linked
}

func (m *Matcher) hasCharge(in intentRec) bool {
	for j := in.head; j != noIdx; {
		t := m.txns.at(j)
		if t.typ == tyCharge {
			return true
		}
		j = t.next
	}
	return false
}
