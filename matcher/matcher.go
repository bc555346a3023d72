package matcher

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"time"

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
	tyDispute
	tyDisputeReversal
	tyRefundFailure
	tyAdjustment
	tyOther
)

// linkable reports whether transactions of type typ are linked to intents:
// payouts, adjustments and lines of undocumented kinds are not.
func linkable(typ uint8) bool {
	return typ != tyPayout && typ != tyAdjustment && typ != tyOther
}

// childType reports whether a transaction of type typ that names another
// transaction belongs to it.
func childType(typ uint8) bool {
	switch typ {
	case tyRefund, tyReversal, tyFee, tyDispute, tyDisputeReversal, tyRefundFailure:
		return true
	}
	return false
}

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
	case ledger.TxnDispute:
		return tyDispute, true
	case ledger.TxnDisputeReversal:
		return tyDisputeReversal, true
	case ledger.TxnRefundFailure:
		return tyRefundFailure, true
	case ledger.TxnAdjustment:
		return tyAdjustment, true
	case ledger.TxnOther:
		return tyOther, true
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
	// Manual: a person linked the transaction to the intent
	// (AddManualLink). Tried first, before the provider reference.
	Manual
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
	case Manual:
		return "manual"
	}
	return "unlinked"
}

const noIdx int32 = -1

// Intent kinds, compactly.
const (
	kCharge uint8 = iota
	kRefund
	kExpected
)

// Flags of an intent record.
const (
	// fOwned: created in the window, which judges it.
	fOwned uint8 = 1 << iota
	// fLooked: its evidence beyond the span was looked up (it was a
	// leftover, or was added late), so the window may judge it in full.
	fLooked
	// fJudged: not owned, but evidence of the window links to it and its
	// evidence was looked up: the window judges it too.
	fJudged
	// fDueSet: an expected payment with a due date of its own.
	fDueSet
)

// intentRec is an intent in compact form. It holds no pointers.
type intentRec struct {
	// strs is the block of its key, upper-cased reference and customer.
	strs    sref
	minor   int64
	created int64
	// due is when the lack of evidence becomes a finding: the time it
	// succeeded (or its lease ran out) plus the grace; for an expected
	// payment its due date, or never when it has none and the books do not
	// count it paid.
	due   int64
	head  int32 // first linked transaction, noIdx when none
	cur   uint8
	state uint8
	// kind is kCharge, kRefund (its charge's key is in Matcher.rf) or
	// kExpected.
	kind  uint8
	flags uint8
}

func (r *intentRec) owned() bool    { return r.flags&fOwned != 0 }
func (r *intentRec) refund() bool   { return r.kind == kRefund }
func (r *intentRec) expected() bool { return r.kind == kExpected }

// judged reports whether the window judges the intent: it owns it, or its
// evidence links to it and was looked up in full.
func (r *intentRec) judged() bool { return r.flags&(fOwned|fJudged) != 0 }

// txnRec is a provider transaction in compact form. It holds no pointers.
type txnRec struct {
	// strs is the block of its id and counterparty.
	strs   sref
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

// The strings of records.
func (m *Matcher) key(r *intentRec) []byte  { return m.ar.field(r.strs, 0) }
func (m *Matcher) ref(r *intentRec) []byte  { return m.ar.field(r.strs, 1) }
func (m *Matcher) cust(r *intentRec) []byte { return m.ar.field(r.strs, 2) }
func (m *Matcher) id(t *txnRec) []byte      { return m.ar.field(t.strs, 0) }
func (m *Matcher) cp(t *txnRec) []byte      { return m.ar.field(t.strs, 1) }

type prefRec struct {
	ref    sref
	intent int32
}

// child is a refund, reversal or fee that names the transaction it belongs to.
type child struct {
	txn    int32
	linked sref
	// charge is the charge named, noIdx until found (sumChildren).
	charge int32
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
	// settled keeps, for transactions that settled in another currency than
	// they were presented in, the settlement as findings show it.
	settled map[int32]sref
	// disputeOf names, for each dispute and dispute reversal, the charge it
	// disputes.
	disputeOf map[int32]sref
	// reversed sums, per charge, the reversals that took part of the
	// charge back (not refunds): a charge is compared net of them.
	reversed map[int32]int64
	// rf is what is known of refund intents and refund transactions.
	rf refunds

	curs    []string
	curExp  []int32
	lastCur string
	lastIdx uint8

	seed    maphash.Seed
	indexed bool
	byPref  refTable
	byRef   table
	// byKey indexes intents by key, so that provider references can be
	// attached by key. It is built when the first reference comes (or at
	// indexing), sized for the intents known then; nKeyed intents are in
	// it. dupKey is the first key added twice, reported when indexing.
	byKey                    table
	nKeyed                   int
	dupKey                   string
	nIntents, nTxns, nLinked int
	err                      error

	// pending holds transactions accepted but not linked yet: they are
	// linked in batches of linkBatch, their first table probes issued
	// together so that the cache misses overlap. pendBuf holds copies of
	// their strings; sink keeps the probes from being optimised away.
	pending []txnIn
	pendBuf []byte
	sink    uint32
	// pendRefs are provider references waiting to be attached, batched
	// the same way; refBuf holds copies of their bytes.
	pendRefs []refIn
	refBuf   []byte

	// skipped are the records left out of matching (unreadable.go);
	// overflow marks charges whose refunds do not sum within range.
	skipped  []unreadable
	overflow map[int32]bool

	// norm is scratch space for the normal form of a reference (normal.go).
	norm []byte
	// manual maps the id of a transaction a person linked by hand to its
	// intent; nil when there are none.
	manual map[string]int32
	// tol holds the tolerance of each expected payment that has one, in
	// minor units of its currency.
	tol map[int32]int64
	// late indexes the intents added after the window's transactions
	// (late.go); nil until Leftovers is called.
	late *lateIndex
}

// linkBatch is how many transactions are linked together.
const linkBatch = 32

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
		settled:      map[int32]sref{},
		disputeOf:    map[int32]sref{},
		reversed:     map[int32]int64{},
		rf:           newRefunds(),
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
	m.flushRefs() // references given so far are of the intents added so far
	if err := m.addIntentStruct(&in); err != nil {
		return fmt.Errorf("matcher: intent %q: %w", in.Key, err)
	}
	return nil
}

func (m *Matcher) addIntentStruct(in *ledger.Intent) error {
	st, ok := stateCode(in.State)
	if !ok {
		return fmt.Errorf("unknown state %q", in.State)
	}
	cur, exp, err := m.currency(in.Amount.Currency)
	if err != nil {
		return err
	}
	minor, err := minorUnits(&in.Amount, exp)
	if err == nil {
		err = outOfRange(minor)
	}
	if err != nil {
		m.skipIntent(in.Key, in.Amount.Currency, in.CreatedAt, err)
		return nil
	}
	rec := intentIn{key: in.Key, ref: in.Reference, cust: in.Customer, minor: minor, cur: cur, state: st,
		created: in.CreatedAt, updated: in.UpdatedAt, lease: in.LeaseExpiresAt, refundOf: in.RefundOf,
		expected: in.Kind == ledger.IntentExpected, dueAt: in.DueAt}
	if rec.expected && !in.Tolerance.IsZero() {
		if rec.tol, err = minorUnits(&in.Tolerance, exp); err != nil {
			m.skipIntent(in.Key, in.Amount.Currency, in.CreatedAt, fmt.Errorf("tolerance: %w", err))
			return nil
		}
	}
	idx, err := m.addIntent(rec)
	if err != nil {
		return err
	}
	for _, p := range in.ProviderRefs {
		if err := m.addPref(p, idx); err != nil {
			return err
		}
	}
	return nil
}

// intentIn is an intent as addIntent takes it, whatever form it came in.
// Its strings may alias a caller's buffer: what is kept is copied.
type intentIn struct {
	key, ref, cust          string
	refundOf                string // the charge intent's key, for a refund
	minor                   int64
	cur, state              uint8
	created, updated, lease time.Time
	// expected marks an expected payment, with its due date (zero: none)
	// and tolerance (minor units, 0: none).
	expected bool
	dueAt    time.Time
	tol      int64
}

func (m *Matcher) addIntent(in intentIn) (int32, error) {
	if in.key == "" {
		return noIdx, errors.New("empty key")
	}
	if m.intents.len() >= math.MaxInt32-1 {
		return noIdx, errors.New("too many intents")
	}
	r := intentRec{minor: in.minor, created: in.created.UnixNano(), head: noIdx, cur: in.cur, state: in.state}
	switch {
	case in.refundOf != "":
		r.kind = kRefund
	case in.expected:
		r.kind = kExpected
	}
	if r.created >= m.from && r.created < m.to {
		r.flags |= fOwned
	}
	switch in.state {
	case stSucceeded, stUnknown, stPending:
		r.due = in.updated.UnixNano() + m.grace
	case stProcessing:
		base := in.lease
		if base.IsZero() {
			base = in.updated
		}
		r.due = base.UnixNano() + m.grace
	}
	if r.kind == kExpected {
		// An expected payment is due at its due date. Without one, it is
		// due after the grace when the books count it paid, and never
		// otherwise: an open invoice is not a finding.
		switch {
		case !in.dueAt.IsZero():
			r.due = in.dueAt.UnixNano()
			r.flags |= fDueSet
		case in.state != stSucceeded:
			r.due = math.MaxInt64
		}
	}
	var ref string
	if m.opt.ExactReferences {
		ref = strings.ToUpper(in.ref)
	} else {
		m.norm = appendNormal(m.norm[:0], in.ref)
		ref = view(m.norm)
	}
	var err error
	if r.strs, err = m.ar.addBlock(in.key, ref, in.cust); err != nil {
		return noIdx, err
	}
	idx := int32(m.intents.len())
	if in.refundOf != "" {
		if m.rf.of[idx], err = m.ar.add(in.refundOf); err != nil {
			return noIdx, err
		}
	}
	if in.tol != 0 {
		if m.tol == nil {
			m.tol = map[int32]int64{}
		}
		m.tol[idx] = in.tol
	}
	m.intents.push(r)
	if r.owned() {
		m.nIntents++
	}
	return idx, nil
}

func (m *Matcher) addPref(p string, idx int32) error {
	if p == "" {
		return nil
	}
	s, err := m.ar.add(p)
	if err != nil {
		return err
	}
	m.prefs.push(prefRec{ref: s, intent: idx})
	return nil
}

// AddManualLink records that a person linked the transaction txnID to the
// intent keyed intentKey: the transaction links to it first, before any
// other rule. It reports whether that intent has been added; a link to an
// intent not added is left out (add the intent, then the link again). Links
// must all be added before the first transaction.
func (m *Matcher) AddManualLink(txnID, intentKey string) (bool, error) {
	if m.indexed {
		return false, ErrOrder
	}
	m.flushRefs()
	m.indexKeys()
	j := m.lookupKey(intentKey, maphash.String(m.seed, intentKey))
	if j == noIdx {
		return false, nil
	}
	if m.manual == nil {
		m.manual = map[string]int32{}
	}
	m.manual[strings.Clone(txnID)] = j
	return true, nil
}

// AddTxn adds a provider transaction and links it. Each transaction must be
// added once.
func (m *Matcher) AddTxn(t ledger.ProviderTxn) error {
	if err := m.ready(); err != nil {
		return err
	}
	if t.Provider != m.opt.Provider {
		return fmt.Errorf("matcher: provider txn %q is of provider %q, not %q", t.ID, t.Provider, m.opt.Provider)
	}
	if err := m.addTxnStruct(&t); err != nil {
		return fmt.Errorf("matcher: provider txn %q: %w", t.ID, err)
	}
	return nil
}

func (m *Matcher) addTxnStruct(t *ledger.ProviderTxn) error {
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
	if err == nil {
		err = outOfRange(minor)
	}
	if err != nil {
		m.skipTxn(t.ID, t.Amount.Currency, t.OccurredAt, err)
		return nil
	}
	return m.queue(txnIn{id: t.ID, ref: t.Reference, pref: t.ProviderRef, cp: t.Counterparty, linked: t.LinkedID,
		minor: minor, at: t.OccurredAt.UnixNano(), cur: cur, typ: typ, status: status,
		settle: settlementText(t.Settlement.Text(), t.Settlement.Currency, t.ExchangeRate)})
}

// ready indexes the intents before the first transaction.
func (m *Matcher) ready() error {
	if m.err != nil {
		return m.err
	}
	if !m.indexed {
		if err := m.index(); err != nil {
			m.err = err
			return err
		}
	}
	return nil
}

// txnIn is a provider transaction as addTxn takes it. Its strings may alias
// a caller's buffer: what is kept is copied.
type txnIn struct {
	id, ref, pref, cp, linked string
	// settle is the settlement as findings show it, "" when none.
	settle           string
	minor, at        int64
	cur, typ, status uint8
}

// queue accepts a transaction for linking, copying its strings, and links
// the batch once it is full. Everything that could make linking fail is
// checked here, so that an error names the transaction it is about.
func (m *Matcher) queue(t txnIn) error {
	if m.txns.len()+len(m.pending) >= math.MaxInt32-1 {
		return errors.New("too many provider transactions")
	}
	for _, v := range [...]string{t.id, t.ref, t.pref, t.cp, t.linked, t.settle} {
		if len(v) > maxStrLen {
			return fmt.Errorf("value of %d bytes is longer than %d", len(v), maxStrLen)
		}
	}
	if m.pending == nil {
		m.pending = make([]txnIn, 0, linkBatch)
		m.pendBuf = make([]byte, 0, linkBatch*128)
	}
	t.id, t.ref, t.pref, t.cp, t.linked = m.keep(t.id), m.keep(t.ref), m.keep(t.pref), m.keep(t.cp), m.keep(t.linked)
	t.settle = m.keep(t.settle)
	m.pending = append(m.pending, t)
	if len(m.pending) == linkBatch {
		return m.flush()
	}
	return nil
}

// keep copies s into pendBuf. When pendBuf must grow, the strings already
// kept still point into (and keep alive) the old array.
func (m *Matcher) keep(s string) string {
	if s == "" {
		return ""
	}
	start := len(m.pendBuf)
	m.pendBuf = append(m.pendBuf, s...)
	return view(m.pendBuf[start:])
}

// flush links the pending transactions in order. It first hashes each
// one's first provider-reference probe and touches the slot it starts at,
// so that those misses are in flight together, then links them one by one.
func (m *Matcher) flush() error {
	var hs [linkBatch]uint64
	slots, sink := m.byPref.slots, uint32(0)
	for k := range m.pending {
		t := &m.pending[k]
		p := t.pref
		if p == "" {
			p = t.id
		}
		if !linkable(t.typ) || p == "" {
			continue
		}
		hs[k] = maphash.String(m.seed, p)
		sink += slots[m.byPref.start(hs[k])].idx
	}
	m.sink += sink
	for k := range m.pending {
		if err := m.addTxn(m.pending[k], hs[k]); err != nil {
			m.err = fmt.Errorf("matcher: provider txn %q: %w", m.pending[k].id, err)
			return m.err
		}
	}
	m.pending, m.pendBuf = m.pending[:0], m.pendBuf[:0]
	return nil
}

// addTxn records and links one transaction; h is the hash of its first
// provider-reference probe (its provider reference, or else its id).
func (m *Matcher) addTxn(t txnIn, h uint64) error {
	minor := t.minor
	if minor < 0 {
		minor = -minor
	}
	r := txnRec{minor: minor, at: t.at, intent: noIdx, next: noIdx, cur: t.cur, typ: t.typ, status: t.status}
	r.owned = r.at >= m.from && r.at < m.to
	var err error
	if r.strs, err = m.ar.addBlock(t.id, t.cp); err != nil {
		return err
	}
	idx := int32(m.txns.len())
	refund := m.refundLike(t.typ)
	if refund && len(m.rf.of) > 0 {
		r.intent, r.method = m.linkRefund(t.id, t.ref, minor, t.cur, r.at)
	}
	if linkable(t.typ) && r.intent == noIdx {
		r.intent, r.method = m.link(t.pref, t.id, t.ref, h, minor, t.cur, r.at)
	}
	if refund {
		m.rf.txns = append(m.rf.txns, idx)
	}
	if t.settle != "" {
		if m.settled[idx], err = m.ar.add(t.settle); err != nil {
			return err
		}
	}
	isChild := t.linked != "" && childType(t.typ)
	if isChild {
		s, err := m.ar.add(t.linked)
		if err != nil {
			return err
		}
		m.kids = append(m.kids, child{txn: idx, linked: s, charge: noIdx})
		if t.typ == tyDispute || t.typ == tyDisputeReversal {
			m.disputeOf[idx] = s
		}
	} else if r.intent != noIdx && !refund {
		m.chain(&r, idx) // refunds are chained once every transaction is known (linkRefunds)
	}
	if r.intent == noIdx && linkable(t.typ) {
		var refs [2]sref
		if refs[0], err = m.ar.add(t.ref); err != nil {
			return err
		}
		if refs[1], err = m.ar.add(t.pref); err != nil {
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

// link finds the intent of a transaction by the linking order, among
// charge intents: a refund intent is paid by no charge or fee, and refunds
// find theirs first (linkRefund).
// h is the hash of the first provider-reference probe.
func (m *Matcher) link(pref, id, reference string, h uint64, minor int64, cur uint8, at int64) (int32, Method) {
	if m.manual != nil {
		if j, ok := m.manual[id]; ok {
			return j, Manual
		}
	}
	for k, p := range [2]string{pref, id} {
		if p == "" {
			continue
		}
		best := noIdx
		if k == 1 && pref != "" {
			h = maphash.String(m.seed, p)
		}
		tag, slots := uint32(h>>32), m.byPref.slots
		for i := m.byPref.start(h); slots[i].idx != 0; {
			if s := &slots[i]; s.tag == tag && m.ar.eq(s.ref, p) && !m.isRefund(int32(s.idx-1)) {
				best = m.better(best, int32(s.idx-1), minor, cur, at)
			}
			if i++; i == len(slots) {
				i = 0
			}
		}
		if m.late != nil {
			for _, j := range m.late.byPref[p] {
				if !m.isRefund(j) {
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
	ref := m.echoed(reference)
	best := noIdx
	if ref != "" {
		m.byRef.each(maphash.String(m.seed, ref), func(j int32) bool {
			if string(m.ref(m.intents.ptr(j))) == ref && !m.isRefund(j) {
				best = m.better(best, j, minor, cur, at)
			}
			return true
		})
		if m.late != nil {
			for _, j := range m.late.byRef[ref] {
				if !m.isRefund(j) {
					best = m.better(best, j, minor, cur, at)
				}
			}
		}
	}
	if best != noIdx {
		return best, ByReference
	}
	key := strings.TrimSpace(reference)
	if j := m.lookupKey(key, maphash.String(m.seed, key)); j != noIdx && !m.isRefund(j) {
		best = j
	}
	if best != noIdx {
		return best, ByReference
	}
	return noIdx, Unlinked
}

// echoed returns an echoed reference in the form intents' references are
// indexed in: its normal form, or trimmed and upper-cased with
// ExactReferences. The result aliases m.norm: it is valid until the next
// call.
func (m *Matcher) echoed(reference string) string {
	if m.opt.ExactReferences {
		return strings.ToUpper(strings.TrimSpace(reference))
	}
	m.norm = appendNormal(m.norm[:0], reference)
	return view(m.norm)
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
	if string(m.key(&b)) < string(m.key(&a)) {
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
