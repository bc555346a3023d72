package matcher

import (
	"cmp"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// Settlement names an unknown intent and the successful provider charge that
// proves it was paid.
type Settlement struct {
	IntentKey string
	TxnID     string
}

// Link records that a provider transaction was linked to an intent.
type Link struct {
	TxnID     string
	IntentKey string
	Method    Method
}

// Summary counts what the window holds. Intents are those created in the
// window; Transactions those that occurred in it; Matched the transactions
// of the window that linked to an intent.
type Summary struct {
	Intents      int
	Transactions int
	Matched      int
	Findings     int
}

// Result is what a matching found.
type Result struct {
	// Findings are sorted by kind (ledger.Kinds order), evidence time and id.
	Findings []ledger.Finding
	// Settlements are the unknown intents that provider evidence settles,
	// sorted by intent key.
	Settlements []Settlement
	Summary     Summary
	// Linked and Unlinked count every transaction given, tolerance band
	// included: Linked + Unlinked is the input.
	Linked, Unlinked int
	// Fuzzy counts the links made by the fuzzy rule.
	Fuzzy int
	// DisputesWon are the ids of the disputed_charge findings that a
	// dispute reversal of the window proves won, when the dispute itself
	// lies in an earlier window (whose findings this run does not
	// resolve by itself). Sorted.
	DisputesWon []string
	// Unpaired are the halves of the window's missing_at_provider and
	// unknown_charge findings, for suggestions across windows (Suggest).
	Unpaired struct{ Intents, Txns []Half }
	// Links and UnlinkedIDs are filled only with Options.KeepLinks, sorted
	// by transaction id.
	Links       []Link
	UnlinkedIDs []string
}

// Result resolves refunds and reversals, applies the fuzzy rule when
// enabled, and judges every intent and every unlinked charge. It may be
// called once.
func (m *Matcher) Result() (*Result, error) {
	if m.err != nil {
		return nil, m.err
	}
	if !m.indexed {
		if err := m.index(); err != nil {
			return nil, err
		}
	}
	if err := m.flush(); err != nil {
		return nil, err
	}
	m.relink()
	refunded := m.sumChildren()
	res := &Result{}
	if m.opt.Fuzzy {
		res.Fuzzy = m.fuzzy(refunded)
	}
	// Children follow their charge, however it linked (fuzzy included).
	m.attachChildren()
	m.linkRefunds()
	m.markJudged()
	ev := evaluator{m: m, refunded: refunded, res: res}
	for i := range m.intents.len() {
		ev.intent(int32(i))
	}
	if !m.opt.OnlyDisputes {
		ev.unknownCharges()
		ev.unrecordedRefunds()
		m.suggest(res.Findings, ev.left)
		res.Unpaired.Intents, res.Unpaired.Txns = m.halves(res.Findings, ev.left)
	}
	m.unreadableFindings(res)

	for i := range m.txns.len() {
		t := m.txns.ptr(int32(i))
		if t.intent == noIdx {
			res.Unlinked++
			if m.opt.KeepLinks {
				res.UnlinkedIDs = append(res.UnlinkedIDs, string(m.id(t)))
			}
			continue
		}
		res.Linked++
		if t.owned {
			m.nLinked++
		}
		if m.opt.KeepLinks {
			res.Links = append(res.Links, Link{TxnID: string(m.id(t)), IntentKey: string(m.key(m.intents.ptr(t.intent))), Method: t.method})
		}
	}
	slices.SortFunc(res.Links, func(a, b Link) int { return cmp.Compare(a.TxnID, b.TxnID) })
	slices.Sort(res.UnlinkedIDs)
	slices.Sort(res.DisputesWon)
	res.DisputesWon = slices.Compact(res.DisputesWon)
	slices.SortFunc(res.Settlements, func(a, b Settlement) int { return cmp.Compare(a.IntentKey, b.IntentKey) })
	SortFindings(res.Findings)
	res.Summary = Summary{Intents: m.nIntents, Transactions: m.nTxns, Matched: m.nLinked, Findings: len(res.Findings)}
	return res, nil
}

// SortFindings orders findings for reports: by kind in ledger.Kinds order,
// then by the time of their evidence, then by id.
func SortFindings(fs []ledger.Finding) {
	slices.SortFunc(fs, func(a, b ledger.Finding) int {
		if c := cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)); c != 0 {
			return c
		}
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

func kindRank(k ledger.Kind) int {
	if i := slices.Index(ledger.Kinds, k); i >= 0 {
		return i
	}
	return len(ledger.Kinds)
}

// sumChildren finds the charge each refund, reversal, fee or dispute
// names and nets refunds and reversals against it.
func (m *Matcher) sumChildren() map[int32]int64 {
	refunded := map[int32]int64{}
	if len(m.kids) == 0 {
		return refunded
	}
	wanted := make(map[string][]int32, len(m.kids))
	for i, k := range m.kids {
		id := m.ar.str(k.linked)
		wanted[id] = append(wanted[id], int32(i))
	}
	for i := range m.txns.len() {
		t := m.txns.at(int32(i))
		if t.typ != tyCharge {
			continue
		}
		kids, ok := wanted[string(m.id(&t))]
		if !ok {
			continue
		}
		for _, k := range kids {
			m.kids[k].charge = int32(i)
			c := m.txns.ptr(m.kids[k].txn)
			refund := m.refundLike(c.typ)
			if refund {
				m.rf.charge[m.kids[k].txn] = int32(i)
			}
			if c.status == tsSucceeded && c.cur == t.cur {
				// Money back (refunds, reversals) and money given back
				// again (refund failures) are summed apart, each up to
				// just beyond the range, so that the sums, and whether
				// they overflowed, do not depend on the input's order.
				var ok bool
				switch {
				case refund:
					refunded[int32(i)], ok = addSaturated(refunded[int32(i)], c.minor)
				case c.typ == tyReversal:
					// A reversal (a partial capture's uncaptured part, a
					// failed charge) takes back part of the charge itself.
					refunded[int32(i)], ok = addSaturated(refunded[int32(i)], c.minor)
					m.reversed[int32(i)], _ = addSaturated(m.reversed[int32(i)], c.minor)
				case c.typ == tyRefundFailure:
					m.rf.failedBack[int32(i)], ok = addSaturated(m.rf.failedBack[int32(i)], c.minor)
				default:
					ok = true
				}
				if !ok {
					m.markOverflow(int32(i))
				}
			}
		}
	}
	// A refund failure gives a refund's money back.
	for i, back := range m.rf.failedBack {
		refunded[i] -= back
	}
	return refunded
}

// attachChildren gives every child the intent of the charge it names, and
// chains every child that has an intent but refunds (linkRefunds chains
// those). A refund linked to its refund intent stays there.
func (m *Matcher) attachChildren() {
	for _, k := range m.kids {
		c := m.txns.ptr(k.txn)
		if k.charge != noIdx {
			if t := m.txns.ptr(k.charge); t.intent != noIdx && !(m.refundLike(c.typ) && c.intent != noIdx && m.isRefund(c.intent)) {
				c.intent, c.method = t.intent, ByCharge
			}
		}
		if c.intent != noIdx && !m.refundLike(c.typ) {
			m.chain(c, k.txn)
		}
	}
}

func (m *Matcher) net(i int32, refunded map[int32]int64) int64 {
	t := m.txns.at(i)
	if len(refunded) == 0 {
		return t.minor
	}
	// A refund failure seen without its refund gives nothing back.
	return t.minor - max(refunded[i], 0)
}

// successful reports whether transaction i is a charge that moved money and
// was not refunded or reversed in full.
func (m *Matcher) successful(i int32, refunded map[int32]int64) bool {
	t := m.txns.at(i)
	return t.typ == tyCharge && t.status == tsSucceeded && m.net(i, refunded) > 0
}

func (m *Matcher) time(ns int64) time.Time { return time.Unix(0, ns).UTC() }

func (m *Matcher) markOverflow(i int32) {
	if m.overflow == nil {
		m.overflow = map[int32]bool{}
	}
	m.overflow[i] = true
}
