package matcher

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
)

// Linking is not bounded by the window; judging is. A window links its own
// evidence and intents first (the span: the window and its tolerance). What
// is left (Leftovers) is looked up by the caller among all the books, by
// index, across a horizon of days: the intents that the window's leftover
// evidence may name, and the evidence of the intents the window judges but
// could not settle. The caller adds what it found (AddLateIntent,
// AddLateManualLink, AddLateTxn) and asks for the Result: the leftover
// transactions are linked again, now against the intents of other windows
// too, and the transactions of other windows are linked as any other.
//
// An intent of another window (or of the tolerance band) that evidence of
// this window links to, and whose evidence was looked up, is judged by this
// window too, with all its evidence: its findings keep their own window
// (they are placed at the intent's creation), and a finding raised earlier
// for want of that evidence is resolved by this run. Findings about intents
// whose evidence was not looked up are left to their own windows.

// Leftovers is what a window could not settle by itself.
type Leftovers struct {
	// Txns are the window's successful transactions that linked to no
	// intent, and its refunds, reversals, fees and disputes whose charge is
	// not in the span (LinkedID names it).
	Txns []LeftTxn
	// IntentKeys are the intents whose evidence outside the span is wanted:
	// the window's intents without the evidence they need (a charge with no
	// successful charge, an expected payment not paid in full, a refund
	// with no refund), and intents of other windows in the span that the
	// window's evidence links to. Sorted.
	IntentKeys []string
}

// LeftTxn is a leftover transaction, with what it may be looked up by.
type LeftTxn struct {
	ID, Reference, ProviderRef string
	Type                       ledger.TxnType
	// LinkedID is set when the transaction names a charge that is not in
	// the span: that charge is to be looked up by id.
	LinkedID string
}

// lateIndex indexes the intents added late; its maps are consulted after
// the main tables by every linking rule.
type lateIndex struct {
	byKey  map[string]int32
	byRef  map[string][]int32
	byPref map[string][]int32
	// left are the span's transactions that linked to nothing when the
	// leftovers were taken: they are linked again once late intents are in.
	left []int32
	// relinked are those that found an intent then.
	relinked map[int32]bool
	relinkOK bool
	// txns are the transactions added late.
	txns []int32
}

var errLeftovers = errors.New("matcher: Leftovers already taken")

// Leftovers ends the window's own linking and returns what it could not
// settle. After it, only AddLateIntent, AddLateManualLink, AddLateTxn and
// Result may be called. The intents it names, and those added late, are
// taken to have their evidence across the horizon added by the caller.
func (m *Matcher) Leftovers() (*Leftovers, error) {
	if err := m.ready(); err != nil {
		return nil, err
	}
	if m.late != nil {
		return nil, errLeftovers
	}
	if err := m.flush(); err != nil {
		return nil, err
	}
	m.late = &lateIndex{byKey: map[string]int32{}, byRef: map[string][]int32{}, byPref: map[string][]int32{}, relinked: map[int32]bool{}}
	left := &Leftovers{}
	look := func(i int32) {
		if in := m.intents.ptr(i); in.flags&fLooked == 0 {
			in.flags |= fLooked
			left.IntentKeys = append(left.IntentKeys, string(m.key(in)))
		}
	}
	// The charge each child names, when it is in the span.
	charges := m.childCharges()
	isKid := make(map[int32]string, len(m.kids))
	for _, k := range m.kids {
		isKid[k.txn] = m.ar.str(k.linked)
	}
	leftTxn := func(i int32, linked string) {
		t := m.txns.ptr(i)
		refs := m.unlinkedRefs[i]
		left.Txns = append(left.Txns, LeftTxn{ID: string(m.id(t)), Reference: m.ar.str(refs[0]), ProviderRef: m.ar.str(refs[1]),
			Type: typeNames[t.typ], LinkedID: linked})
	}
	asLeft := map[int32]bool{}
	for i := range int32(m.txns.len()) {
		t := m.txns.ptr(i)
		if t.intent == noIdx && linkable(t.typ) {
			m.late.left = append(m.late.left, i)
		}
		if !t.owned {
			continue
		}
		if t.intent != noIdx {
			if in := m.intents.ptr(t.intent); !in.owned() {
				look(t.intent) // an intent of the band, judged with this window's evidence
			}
			continue
		}
		if linked, ok := isKid[i]; ok {
			c, found := charges[linked]
			switch {
			case !found:
				leftTxn(i, linked)
			case m.txns.ptr(c).intent != noIdx:
				if in := m.intents.ptr(m.txns.ptr(c).intent); !in.owned() {
					look(m.txns.ptr(c).intent)
				}
			case !asLeft[c]:
				asLeft[c] = true
				leftTxn(c, "")
			}
			continue
		}
		if t.status == tsSucceeded && (t.typ == tyCharge || m.refundLike(t.typ)) && !asLeft[i] {
			asLeft[i] = true
			leftTxn(i, "")
		}
	}
	for i := range int32(m.intents.len()) {
		if in := m.intents.ptr(i); in.owned() && m.wantsEvidence(i) {
			look(i)
		}
	}
	slices.Sort(left.IntentKeys)
	slices.SortFunc(left.Txns, func(a, b LeftTxn) int { return strings.Compare(a.ID, b.ID) })
	return left, nil
}

// wantsEvidence reports whether the owned intent i is not settled by the
// span alone, so that evidence of other windows may change its judgment:
// anything but one successful charge (or refund, for a refund) of its
// amount and currency while the books count it paid (or it is still in
// the worker's hands), or an expected payment paid in full in its currency.
// A charge that failed with nothing successful agrees with the books. Only
// those are looked up: evidence of other windows that links to a settled
// intent is judged by its own window, which judges the intent in full.
func (m *Matcher) wantsEvidence(i int32) bool {
	in := m.intents.ptr(i)
	var paid int64
	n, other := 0, false
	for j := in.head; j != noIdx; j = m.txns.at(j).next {
		t := m.txns.ptr(j)
		switch {
		case t.status != tsSucceeded:
		case t.typ == tyCharge || in.refund() && m.refundLike(t.typ):
			if t.cur != in.cur || in.kind != kExpected && t.minor != in.minor {
				other = true
			}
			paid, _ = addSaturated(paid, t.minor)
			n++
		}
	}
	switch in.kind {
	case kExpected:
		tol := m.tol[i]
		return other || paid < in.minor-tol || paid > in.minor+tol
	case kRefund:
		return n != 1 || other || in.state == stFailed || in.state == stPending
	}
	if n == 0 {
		return in.state != stFailed
	}
	return n != 1 || other || in.state == stFailed || in.state == stPending
}

// childCharges maps the id of every charge a child names to the charge,
// among the transactions added so far.
func (m *Matcher) childCharges() map[string]int32 {
	out := map[string]int32{}
	if len(m.kids) == 0 {
		return out
	}
	wanted := make(map[string]bool, len(m.kids))
	for _, k := range m.kids {
		wanted[m.ar.str(k.linked)] = true
	}
	for i := range int32(m.txns.len()) {
		t := m.txns.ptr(i)
		if t.typ == tyCharge && wanted[string(m.id(t))] {
			out[string(m.id(t))] = i
		}
	}
	return out
}

// HasIntent reports whether the intent keyed key was added.
func (m *Matcher) HasIntent(key string) bool {
	return m.lookupKey(key, maphash.String(m.seed, key)) != noIdx
}

// AddLateIntent adds an intent of another window, found for the window's
// leftovers, with its provider references; its evidence across the horizon
// is to be added with AddLateTxn. An intent already added is left as it is.
func (m *Matcher) AddLateIntent(in ledger.Intent) error {
	if m.late == nil {
		return errors.New("matcher: AddLateIntent before Leftovers")
	}
	if in.Provider != m.opt.Provider {
		return fmt.Errorf("matcher: intent %q is of provider %q, not %q", in.Key, in.Provider, m.opt.Provider)
	}
	if m.HasIntent(in.Key) {
		return nil
	}
	n := m.intents.len()
	refs := in.ProviderRefs
	in.ProviderRefs = nil
	if err := m.addIntentStruct(&in); err != nil {
		return fmt.Errorf("matcher: intent %q: %w", in.Key, err)
	}
	if m.intents.len() == n {
		return nil // unreadable: reported, left out
	}
	i := int32(n)
	r := m.intents.ptr(i)
	r.flags |= fLooked
	m.late.byKey[string(m.key(r))] = i
	if ref := string(m.ref(r)); ref != "" {
		m.late.byRef[ref] = append(m.late.byRef[ref], i)
	}
	for _, p := range refs {
		if p != "" && len(p) <= maxStrLen {
			m.late.byPref[p] = append(m.late.byPref[p], i)
		}
	}
	return nil
}

// AddLateManualLink records a manual link found for the leftovers: as
// AddManualLink, after Leftovers.
func (m *Matcher) AddLateManualLink(txnID, intentKey string) (bool, error) {
	if m.late == nil {
		return false, errors.New("matcher: AddLateManualLink before Leftovers")
	}
	j := m.lookupKey(intentKey, maphash.String(m.seed, intentKey))
	if j == noIdx {
		return false, nil
	}
	if m.manual == nil {
		m.manual = map[string]int32{}
	}
	if _, ok := m.manual[txnID]; !ok {
		m.manual[strings.Clone(txnID)] = j
	}
	return true, nil
}

// AddLateTxn adds a transaction of another window, outside the span,
// found for the leftovers, and links it as any other. Transactions of the
// span are already in and must not be added again.
func (m *Matcher) AddLateTxn(t ledger.ProviderTxn) error {
	if m.late == nil {
		return errors.New("matcher: AddLateTxn before Leftovers")
	}
	if at := t.OccurredAt.UnixNano(); at >= m.lo && at < m.hi {
		return fmt.Errorf("matcher: provider txn %q occurred in the span: it was added with the window", t.ID)
	}
	m.relink()
	i := int32(m.txns.len())
	if err := m.AddTxn(t); err != nil {
		return err
	}
	if err := m.flush(); err != nil {
		return err
	}
	if int(i) < m.txns.len() {
		m.late.txns = append(m.late.txns, i)
	}
	return nil
}

// Judged returns, after Result, the keys of the intents of other windows
// (or of the band) that this window judged in full, sorted.
func (m *Matcher) Judged() []string {
	var out []string
	for i := range int32(m.intents.len()) {
		if in := m.intents.ptr(i); in.flags&fJudged != 0 {
			out = append(out, string(m.key(in)))
		}
	}
	slices.Sort(out)
	return out
}

// LateLinks returns, after Result, the transactions added late that linked
// to an intent, by id, with the intent's key.
func (m *Matcher) LateLinks() map[string]string {
	out := map[string]string{}
	if m.late == nil {
		return out
	}
	for _, i := range m.late.txns {
		if t := m.txns.ptr(i); t.intent != noIdx {
			out[string(m.id(t))] = string(m.key(m.intents.ptr(t.intent)))
		}
	}
	return out
}

// relink links again, once, the span's transactions that linked to
// nothing, now that intents of other windows are in.
func (m *Matcher) relink() {
	if m.late == nil || m.late.relinkOK {
		return
	}
	m.late.relinkOK = true
	if len(m.late.byKey) == 0 && m.manual == nil {
		return
	}
	isKid := make(map[int32]bool, len(m.kids))
	for _, k := range m.kids {
		isKid[k.txn] = true
	}
	for _, j := range m.late.left {
		t := m.txns.ptr(j)
		if t.intent != noIdx {
			continue
		}
		refs := m.unlinkedRefs[j]
		ref, pref, id := m.ar.str(refs[0]), m.ar.str(refs[1]), string(m.id(t))
		refund := m.refundLike(t.typ)
		intent, method := noIdx, Unlinked
		if refund && len(m.rf.of) > 0 {
			intent, method = m.linkRefund(id, ref, t.minor, t.cur, t.at)
		}
		if intent == noIdx {
			p := pref
			if p == "" {
				p = id
			}
			intent, method = m.link(pref, id, ref, maphash.String(m.seed, p), t.minor, t.cur, t.at)
		}
		if intent == noIdx {
			continue
		}
		t.intent, t.method = intent, method
		m.late.relinked[j] = true
		delete(m.unlinkedRefs, j)
		if !isKid[j] && !refund {
			m.chain(t, j)
		}
	}
}

// markJudged marks, once every link is made, the intents of other windows
// (or of the band) whose evidence was looked up and that evidence of the
// window links to: the window judges them too.
func (m *Matcher) markJudged() {
	if m.late == nil {
		return
	}
	for i := range int32(m.txns.len()) {
		t := m.txns.ptr(i)
		if !t.owned || t.intent == noIdx {
			continue
		}
		if in := m.intents.ptr(t.intent); !in.owned() && in.flags&fLooked != 0 {
			in.flags |= fJudged
		}
	}
}

var typeNames = [...]ledger.TxnType{ledger.TxnCharge, ledger.TxnRefund, ledger.TxnReversal, ledger.TxnFee, ledger.TxnPayout,
	ledger.TxnDispute, ledger.TxnDisputeReversal, ledger.TxnRefundFailure, ledger.TxnAdjustment, ledger.TxnOther}
