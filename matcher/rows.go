package matcher

import (
	"errors"
	"fmt"
	"hash/maphash"
	"unsafe"

	"github.com/reconcilehq/reconcile/ledger"
)

// AddIntentRow adds an intent read in compact form (ledger.ScanStore),
// copying what it keeps of the row. Its provider references come through
// AddProviderRef. Every intent must be added before the first transaction.
func (m *Matcher) AddIntentRow(r *ledger.IntentRow) error {
	if m.indexed {
		return ErrOrder
	}
	st, ok := stateCode(r.State)
	if !ok {
		return fmt.Errorf("matcher: intent %q: unknown state %q", r.Key, r.State)
	}
	m.flushRefs()
	cur, _, err := m.currency(r.Currency)
	if err != nil {
		return fmt.Errorf("matcher: intent %q: %w", r.Key, err)
	}
	if bad := cmpOr(r.Bad, outOfRange(r.Minor)); bad != nil {
		m.skipIntent(string(r.Key), r.Currency, r.CreatedAt, bad)
		return nil
	}
	if r.Expected && r.Tolerance != 0 {
		if bad := outOfRange(r.Tolerance); bad != nil {
			m.skipIntent(string(r.Key), r.Currency, r.CreatedAt, fmt.Errorf("tolerance: %w", bad))
			return nil
		}
	}
	_, err = m.addIntent(intentIn{key: view(r.Key), ref: view(r.Reference), cust: view(r.Customer), minor: r.Minor, cur: cur,
		state: st, created: r.CreatedAt, updated: r.UpdatedAt, lease: r.LeaseExpiresAt, refundOf: view(r.RefundOf),
		expected: r.Expected, dueAt: r.DueAt, tol: r.Tolerance})
	if err != nil {
		return fmt.Errorf("matcher: intent %q: %w", r.Key, err)
	}
	return nil
}

// AddProviderRef records that an attempt of the intent keyed key recorded
// the provider reference ref. The intent must have been added; references
// of intents never added are ignored, and so are empty ones. References
// must all be added before the first transaction.
func (m *Matcher) AddProviderRef(key, ref []byte) error {
	if m.indexed {
		return ErrOrder
	}
	if len(ref) == 0 {
		return nil
	}
	if len(ref) > maxStrLen {
		return fmt.Errorf("matcher: intent %q: provider reference of %d bytes is longer than %d", key, len(ref), maxStrLen)
	}
	if m.pendRefs == nil {
		m.pendRefs = make([]refIn, 0, linkBatch)
		m.refBuf = make([]byte, 0, linkBatch*64)
	}
	start := len(m.refBuf)
	m.refBuf = append(append(m.refBuf, key...), ref...)
	b := m.refBuf[start:]
	m.pendRefs = append(m.pendRefs, refIn{key: view(b[:len(key)]), ref: view(b[len(key):])})
	if len(m.pendRefs) == linkBatch {
		m.flushRefs()
	}
	return nil
}

// refIn is a provider reference waiting to be attached to its intent.
type refIn struct{ key, ref string }

// flushRefs attaches the pending provider references to their intents,
// the first key-table probes of the batch issued together.
func (m *Matcher) flushRefs() {
	if len(m.pendRefs) == 0 {
		return
	}
	m.indexKeys()
	if len(m.byKey.slots) == 0 {
		m.pendRefs, m.refBuf = m.pendRefs[:0], m.refBuf[:0] // no intents: nothing to attach to
		return
	}
	var hs [linkBatch]uint64
	sink := uint64(0)
	for k := range m.pendRefs {
		hs[k] = maphash.String(m.seed, m.pendRefs[k].key)
		sink += m.byKey.slots[m.byKey.start(hs[k])]
	}
	m.sink += uint32(sink)
	for k, r := range m.pendRefs {
		if idx := m.lookupKey(r.key, hs[k]); idx != noIdx {
			_ = m.addPref(r.ref, idx) // lengths were checked when it was queued
		}
	}
	m.pendRefs, m.refBuf = m.pendRefs[:0], m.refBuf[:0]
}

// AddTxnRow adds a provider transaction read in compact form
// (ledger.ScanStore) and links it, copying what it keeps of the row. Each
// transaction must be added once.
func (m *Matcher) AddTxnRow(r *ledger.TxnRow) error {
	if err := m.ready(); err != nil {
		return err
	}
	typ, ok := typeCode(r.Type)
	if !ok {
		return fmt.Errorf("matcher: provider txn %q: unknown type %q", r.ID, r.Type)
	}
	status, ok := statusCode(r.Status)
	if !ok {
		return fmt.Errorf("matcher: provider txn %q: unknown status %q", r.ID, r.Status)
	}
	if len(r.ID) == 0 {
		return errors.New("matcher: provider txn: empty id")
	}
	cur, _, err := m.currency(r.Currency)
	if err != nil {
		return fmt.Errorf("matcher: provider txn %q: %w", r.ID, err)
	}
	if bad := cmpOr(r.Bad, outOfRange(r.Minor)); bad != nil {
		m.skipTxn(string(r.ID), r.Currency, r.OccurredAt, bad)
		return nil
	}
	var settle string
	if len(r.SettlementCurrency) > 0 {
		settle = settlementText(string(r.Settlement), string(r.SettlementCurrency), string(r.ExchangeRate))
	}
	err = m.queue(txnIn{id: view(r.ID), ref: view(r.Reference), pref: view(r.ProviderRef), cp: view(r.Counterparty),
		linked: view(r.LinkedID), minor: r.Minor, at: r.OccurredAt.UnixNano(), cur: cur, typ: typ, status: status,
		settle: settle})
	if err != nil {
		return fmt.Errorf("matcher: provider txn %q: %w", r.ID, err)
	}
	return nil
}

// view returns b as a string without copying. The string aliases b: it must
// not outlive the call it was made for, and whatever is kept of it is
// copied (into the arena).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// cmpOr returns the first non-nil error.
func cmpOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
