package matcher

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// ErrOrder reports an intent added after the first transaction: every intent
// must be known before transactions are linked.
var ErrOrder = errors.New("matcher: intent added after transactions")

// Intent states, compactly.
const (
	stPending uint8 = iota
	stProcessing
	stSucceeded
	stFailed
	stUnknown
)

func stateCode(s ledger.State) (uint8, bool) {
	switch s {
	case ledger.StateSucceeded:
		return stSucceeded, true
	case ledger.StatePending:
		return stPending, true
	case ledger.StateProcessing:
		return stProcessing, true
	case ledger.StateFailed:
		return stFailed, true
	case ledger.StateUnknown:
		return stUnknown, true
	}
	return 0, false
}

var stateNames = [...]ledger.State{ledger.StatePending, ledger.StateProcessing, ledger.StateSucceeded,
	ledger.StateFailed, ledger.StateUnknown}

// Transaction types and statuses, compactly.
const (
	tyCharge uint8 = iota
	tyRefund
	tyReversal
	tyFee
	tyPayout
)

const (
	tsSucceeded uint8 = iota
	tsFailed
	tsPending
)

func typeCode(t ledger.TxnType) (uint8, bool) {
	switch t {
	case ledger.TxnCharge:
		return tyCharge, true
	case ledger.TxnRefund:
		return tyRefund, true
	case ledger.TxnReversal:
		return tyReversal, true
	case ledger.TxnFee:
		return tyFee, true
	case ledger.TxnPayout:
		return tyPayout, true
	}
	return 0, false
}

func statusCode(s ledger.TxnStatus) (uint8, bool) {
	switch s {
	case ledger.TxnSucceeded:
		return tsSucceeded, true
	case ledger.TxnFailed:
		return tsFailed, true
	case ledger.TxnPending:
		return tsPending, true
	}
	return 0, false
}

// Method says how a provider transaction was linked to its intent.
type Method uint8

// Link methods, in the order they are tried.
const (
	Unlinked Method = iota
	// ByProviderRef: a provider reference recorded by one of the intent's
	// attempts equals the transaction's provider reference or id.
	ByProviderRef
	// ByReference: the reference the provider echoes equals the intent's
	// reference (or its key).
	ByReference
	// ByCharge: a refund, reversal or fee that names a linked charge.
	ByCharge
	// Fuzzy: amount, currency and customer agree, with one candidate.
	Fuzzy
)

func (m Method) String() string {
	switch m {
	case ByProviderRef:
		return "provider_ref"
	case ByReference:
		return "reference"
	case ByCharge:
		return "charge"
	case Fuzzy:
		return "fuzzy"
	}
	return "unlinked"
}

const noIdx int32 = -1

// intentRec is an intent in compact form. It holds no pointers.
type intentRec struct {
	key, ref, cust sref
	minor          int64
	created        int64
	// due is when the lack of evidence becomes a finding: the time it
	// succeeded (or its lease ran out) plus the grace.
	due   int64
	head  int32 // first linked transaction, noIdx when none
	cur   uint8
	state uint8
	owned bool
}

// txnRec is a provider transaction in compact form. It holds no pointers.
type txnRec struct {
	id, cp sref
	minor  int64
	at     int64
	intent int32
	next   int32 // next transaction linked to the same intent
	cur    uint8
	typ    uint8
	status uint8
	method Method
	owned  bool
}

type prefRec struct {
	ref    sref
	intent int32
}

// child is a refund, reversal or fee that names the transaction it belongs to.
type child struct {
	txn    int32
	linked sref
}

// Matcher links intents and provider transactions of one window. Add every
// intent first, then every transaction, then call Result. A Matcher is not
// safe for concurrent use.
type Matcher struct {
	opt       Options
	from, to  int64
	lo, hi    int64
	now       int64
	grace     int64
	tolerance int64

	ar      arena
	intents chunked[intentRec]
	txns    chunked[txnRec]
	prefs   chunked[prefRec]
	kids    []child
	// unlinkedRefs keeps the references of transactions that linked to
	// nothing, for fuzzy linking and the finding's detail.
	unlinkedRefs map[int32][2]sref

	curs    []string
	curExp  []int32
	lastCur string
	lastIdx uint8

	seed                     maphash.Seed
	indexed                  bool
	byPref                   refTable
	byRef, byKey             table
	nIntents, nTxns, nLinked int
	err                      error
}

// New returns a Matcher for opt.
func New(opt Options) (*Matcher, error) {
	opt, err := opt.validate()
	if err != nil {
		return nil, err
	}
	m := &Matcher{
		opt:          opt,
		from:         opt.From.UnixNano(),
		to:           opt.To.UnixNano(),
		now:          opt.Now.UnixNano(),
		grace:        int64(opt.Grace),
		tolerance:    int64(opt.Tolerance),
		seed:         maphash.MakeSeed(),
		unlinkedRefs: map[int32][2]sref{},
	}
	m.lo, m.hi = m.from-m.tolerance, m.to+m.tolerance
	return m, nil
}

// Options returns the options in force, defaults filled.
func (m *Matcher) Options() Options { return m.opt }

func (m *Matcher) currency(code string) (uint8, int32, error) {
	if code == m.lastCur && code != "" {
		return m.lastIdx, m.curExp[m.lastIdx], nil
	}
	for i, c := range m.curs {
		if c == code {
			m.lastCur, m.lastIdx = c, uint8(i)
			return uint8(i), m.curExp[i], nil
		}
	}
	exp, err := money.Exponent(code)
	if err != nil {
		return 0, 0, err
	}
	if len(m.curs) == math.MaxUint8 {
		return 0, 0, fmt.Errorf("more than %d currencies", math.MaxUint8)
	}
	m.curs = append(m.curs, code)
	m.curExp = append(m.curExp, exp)
	idx := uint8(len(m.curs) - 1)
	m.lastCur, m.lastIdx = code, idx
	return idx, exp, nil
}

// minorUnits converts a decimal to integer minor units at exponent exp
// without allocating for values that fit in 18 digits.
func minorUnits(a *money.Amount, exp int32) (int64, error) {
	d := a.Value
	if d.NumDigits() > 18 {
		return a.Minor()
	}
	c, shift := d.CoefficientInt64(), d.Exponent()+exp
	switch {
	case shift == 0:
		return c, nil
	case shift > 0:
		for ; shift > 0; shift-- {
			if c > math.MaxInt64/10 || c < math.MinInt64/10 {
				return a.Minor()
			}
			c *= 10
		}
		return c, nil
	default:
		for ; shift < 0; shift++ {
			if c%10 != 0 {
				return 0, fmt.Errorf("%s %s: %w", d.String(), a.Currency, money.ErrTooPrecise)
			}
			c /= 10
		}
		return c, nil
	}
}

func (m *Matcher) amountOf(minor int64, cur uint8) money.Amount {
	return money.Amount{Value: decimal.New(minor, -m.curExp[cur]), Currency: m.curs[cur]}
}

// AddIntent adds an intent with its provider references. Intents of other
// providers are refused. Every intent must be added before the first
// transaction.
func (m *Matcher) AddIntent(in ledger.Intent) error {
	if m.indexed {
		return ErrOrder
	}
	if in.Provider != m.opt.Provider {
		return fmt.Errorf("matcher: intent %q is of provider %q, not %q", in.Key, in.Provider, m.opt.Provider)
	}
	if err := m.addIntent(&in); err != nil {
		return fmt.Errorf("matcher: intent %q: %w", in.Key, err)
	}
	return nil
}

func (m *Matcher) addIntent(in *ledger.Intent) error {
	st, ok := stateCode(in.State)
	if !ok {
		return fmt.Errorf("unknown state %q", in.State)
	}
	cur, exp, err := m.currency(in.Amount.Currency)
	if err != nil {
		return err
	}
	minor, err := minorUnits(&in.Amount, exp)
	if err != nil {
		return err
	}
	if m.intents.len() >= math.MaxInt32-1 {
		return errors.New("too many intents")
	}
	r := intentRec{minor: minor, created: in.CreatedAt.UnixNano(), head: noIdx, cur: cur, state: st}
	r.owned = r.created >= m.from && r.created < m.to
	switch st {
	case stSucceeded, stUnknown:
		r.due = in.UpdatedAt.UnixNano() + m.grace
	case stProcessing:
		base := in.LeaseExpiresAt
		if base.IsZero() {
			base = in.UpdatedAt
		}
		r.due = base.UnixNano() + m.grace
	}
	if r.key, err = m.ar.add(in.Key); err != nil {
		return err
	}
	if in.Key == "" {
		return errors.New("empty key")
	}
	if r.ref, err = m.ar.add(strings.ToUpper(in.Reference)); err != nil {
		return err
	}
	if r.cust, err = m.ar.add(in.Customer); err != nil {
		return err
	}
	idx := int32(m.intents.len())
	for _, p := range in.ProviderRefs {
		if p == "" {
			continue
		}
		s, err := m.ar.add(p)
		if err != nil {
			return err
		}
		m.prefs.push(prefRec{ref: s, intent: idx})
	}
	m.intents.push(r)
	if r.owned {
		m.nIntents++
	}
	return nil
}

// index builds the reference tables once every intent is known.
func (m *Matcher) index() error {
	m.indexed = true
	n := m.intents.len()
	m.byPref = newRefTable(m.prefs.len())
	for i := range m.prefs.len() {
		p := m.prefs.at(int32(i))
		m.byPref.insert(maphash.Bytes(m.seed, m.ar.bytes(p.ref)), p.ref, p.intent)
	}
	m.prefs = chunked[prefRec]{}
	m.byRef, m.byKey = newTable(n), newTable(n)
	for i := range n {
		r := m.intents.at(int32(i))
		kb := m.ar.bytes(r.key)
		h := maphash.Bytes(m.seed, kb)
		if !m.byKey.insertUnique(h, int32(i), func(j int32) bool { return m.ar.eq(m.intents.at(j).key, string(kb)) }) {
			return fmt.Errorf("matcher: intent %q given twice", string(kb))
		}
		if r.ref != 0 {
			m.byRef.insert(maphash.Bytes(m.seed, m.ar.bytes(r.ref)), int32(i))
		}
	}
	return nil
}

// AddTxn adds a provider transaction and links it. Each transaction must be
// added once.
func (m *Matcher) AddTxn(t ledger.ProviderTxn) error {
	if m.err != nil {
		return m.err
	}
	if !m.indexed {
		if err := m.index(); err != nil {
			m.err = err
			return err
		}
	}
	if t.Provider != m.opt.Provider {
		return fmt.Errorf("matcher: provider txn %q is of provider %q, not %q", t.ID, t.Provider, m.opt.Provider)
	}
	if err := m.addTxn(&t); err != nil {
		return fmt.Errorf("matcher: provider txn %q: %w", t.ID, err)
	}
	return nil
}

func (m *Matcher) addTxn(t *ledger.ProviderTxn) error {
	typ, ok := typeCode(t.Type)
	if !ok {
		return fmt.Errorf("unknown type %q", t.Type)
	}
	status, ok := statusCode(t.Status)
	if !ok {
		return fmt.Errorf("unknown status %q", t.Status)
	}
	if t.ID == "" {
		return errors.New("empty id")
	}
	cur, exp, err := m.currency(t.Amount.Currency)
	if err != nil {
		return err
	}
	minor, err := minorUnits(&t.Amount, exp)
	if err != nil {
		return err
	}
	if minor < 0 {
		minor = -minor
	}
	if m.txns.len() >= math.MaxInt32-1 {
		return errors.New("too many provider transactions")
	}
	r := txnRec{minor: minor, at: t.OccurredAt.UnixNano(), intent: noIdx, next: noIdx, cur: cur, typ: typ, status: status}
	r.owned = r.at >= m.from && r.at < m.to
	if r.id, err = m.ar.add(t.ID); err != nil {
		return err
	}
	if r.cp, err = m.ar.add(t.Counterparty); err != nil {
		return err
	}
	idx := int32(m.txns.len())
	if typ != tyPayout {
		r.intent, r.method = m.link(t, minor, cur, r.at)
	}
	isChild := t.LinkedID != "" && (typ == tyRefund || typ == tyReversal || typ == tyFee)
	if isChild {
		s, err := m.ar.add(t.LinkedID)
		if err != nil {
			return err
		}
		m.kids = append(m.kids, child{txn: idx, linked: s})
	} else if r.intent != noIdx {
		m.chain(&r, idx)
	}
	if r.intent == noIdx && typ == tyCharge {
		var refs [2]sref
		if refs[0], err = m.ar.add(t.Reference); err != nil {
			return err
		}
		if refs[1], err = m.ar.add(t.ProviderRef); err != nil {
			return err
		}
		m.unlinkedRefs[idx] = refs
	}
	m.txns.push(r)
	if r.owned {
		m.nTxns++
	}
	return nil
}

func (m *Matcher) chain(r *txnRec, idx int32) {
	in := m.intents.ptr(r.intent)
	r.next = in.head
	in.head = idx
}

// link finds the intent of a transaction by the linking order.
func (m *Matcher) link(t *ledger.ProviderTxn, minor int64, cur uint8, at int64) (int32, Method) {
	for _, p := range [2]string{t.ProviderRef, t.ID} {
		if p == "" {
			continue
		}
		best := noIdx
		h := maphash.String(m.seed, p)
		tag, slots := uint32(h>>32), m.byPref.slots
		for i := m.byPref.start(h); slots[i].idx != 0; {
			if s := &slots[i]; s.tag == tag && m.ar.eq(s.ref, p) {
				best = m.better(best, int32(s.idx-1), minor, cur, at)
			}
			if i++; i == len(slots) {
				i = 0
			}
		}
		if best != noIdx {
			return best, ByProviderRef
		}
	}
	if t.Reference == "" {
		return noIdx, Unlinked
	}
	ref := strings.ToUpper(strings.TrimSpace(t.Reference))
	best := noIdx
	m.byRef.each(maphash.String(m.seed, ref), func(j int32) bool {
		if m.ar.eq(m.intents.at(j).ref, ref) {
			best = m.better(best, j, minor, cur, at)
		}
		return true
	})
	if best != noIdx {
		return best, ByReference
	}
	key := strings.TrimSpace(t.Reference)
	m.byKey.each(maphash.String(m.seed, key), func(j int32) bool {
		if m.ar.eq(m.intents.at(j).key, key) {
			best = j
			return false
		}
		return true
	})
	if best != noIdx {
		return best, ByReference
	}
	return noIdx, Unlinked
}

// better chooses between two candidate intents for one transaction,
// independently of the order they are found in: the one whose amount and
// currency agree, then the one created nearest to the transaction, then the
// smaller key.
func (m *Matcher) better(cur int32, cand int32, minor int64, currency uint8, at int64) int32 {
	if cur == noIdx || cur == cand {
		return cand
	}
	a, b := m.intents.at(cur), m.intents.at(cand)
	am, bm := a.minor == minor && a.cur == currency, b.minor == minor && b.cur == currency
	if am != bm {
		if bm {
			return cand
		}
		return cur
	}
	ad, bd := absDiff(a.created, at), absDiff(b.created, at)
	if ad != bd {
		if bd < ad {
			return cand
		}
		return cur
	}
	if string(m.ar.bytes(b.key)) < string(m.ar.bytes(a.key)) {
		return cand
	}
	return cur
}

func absDiff(a, b int64) uint64 {
	if a > b {
		return uint64(a - b)
	}
	return uint64(b - a)
}
