package scenario

import (
	"strconv"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// RowBuf is the reusable buffer the row generators write into; a row's byte
// slices stay valid until the buffer is used again.
type RowBuf struct {
	b    []byte
	txns [3]ledger.TxnRow
}

func (r *RowBuf) reset() {
	if r.b == nil {
		r.b = make([]byte, 0, 512)
	}
	r.b = r.b[:0]
}

// padded appends prefix and n zero-padded to width.
func (r *RowBuf) padded(prefix string, n uint64, width int, suffix string) []byte {
	start := len(r.b)
	r.b = append(r.b, prefix...)
	var d [20]byte
	s := strconv.AppendUint(d[:0], n, 10)
	for range width - len(s) {
		r.b = append(r.b, '0')
	}
	r.b = append(r.b, s...)
	r.b = append(r.b, suffix...)
	return r.b[start:len(r.b):len(r.b)]
}

func (r *RowBuf) number(prefix string, n int) []byte {
	start := len(r.b)
	r.b = append(r.b, prefix...)
	r.b = strconv.AppendInt(r.b, int64(n), 10)
	return r.b[start:len(r.b):len(r.b)]
}

func (b Bulk) checkoutRow(r *RowBuf, i int, second bool) []byte {
	if second {
		return r.padded("ws_CO_060220241200002", uint64(i), 9, "b")
	}
	return r.padded("ws_CO_060220241200001", uint64(i), 9, "")
}

// IntentRow fills row with intent i as ledger.ScanStore would stream it,
// and returns its provider references; nothing is allocated once buf has
// its first buffer. It describes the same intent as Intent(i).
func (b Bulk) IntentRow(i int, buf *RowBuf, row *ledger.IntentRow) (refs [2][]byte) {
	buf.reset()
	slot := b.slot(i)
	created := b.created(i)
	*row = ledger.IntentRow{Key: buf.padded("charge:order-", uint64(i), 9, ""), Reference: buf.padded("R", uint64(i), 11, ""),
		Customer: buf.padded("2547", mix(b.Seed^0x5a, uint64(i))%100000000, 8, ""), Currency: "KES", Minor: b.minor(i),
		State: ledger.StateSucceeded, CreatedAt: created, UpdatedAt: created.Add(30 * time.Second)}
	if slot < 900 || slot > 990 {
		refs[0] = b.checkoutRow(buf, i, false)
	}
	switch slot {
	case slotDuplicate, slotReversed:
		refs[1] = b.checkoutRow(buf, i, true)
	case slotStatus:
		row.State = ledger.StateFailed
	case slotStuck:
		row.State, row.LeaseExpiresAt = ledger.StateProcessing, created.Add(15*time.Minute)
	case slotSettled:
		row.State = ledger.StateUnknown
	}
	return refs
}

// TxnRowsOf streams the provider transactions of intent i as
// ledger.ScanStore would, the same as TxnsOf(i); each row is valid until
// fn returns.
func (b Bulk) TxnRowsOf(i int, buf *RowBuf, fn func(*ledger.TxnRow) error) error {
	slot := b.slot(i)
	if slot == slotMissing || slot == slotStuck {
		return nil
	}
	buf.reset()
	at := b.created(i).Add(time.Duration(20+i%60) * time.Second)
	t := &buf.txns[0]
	*t = ledger.TxnRow{ID: buf.padded("S", uint64(i), 9, ""), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Currency: "KES", Minor: b.minor(i), OccurredAt: at, Counterparty: buf.number("2547****", 1000+i%9000)}
	if slot < 900 || slot > 990 {
		t.ProviderRef = b.checkoutRow(buf, i, false)
	} else {
		t.Reference = buf.padded("R", uint64(i), 11, "")
	}
	switch slot {
	case slotAmount:
		t.Minor = b.minor(i) - 5000
	case slotCurrency:
		t.Currency = "USD"
	}
	if err := fn(t); err != nil {
		return err
	}
	switch slot {
	case slotDuplicate, slotReversed:
		second := &buf.txns[1]
		*second = *t
		second.ID, second.ProviderRef, second.OccurredAt = buf.padded("T", uint64(i), 9, ""), b.checkoutRow(buf, i, true), at.Add(time.Minute)
		if err := fn(second); err != nil {
			return err
		}
		if slot == slotReversed {
			rev := &buf.txns[2]
			*rev = ledger.TxnRow{ID: buf.padded("V", uint64(i), 9, ""), Type: ledger.TxnReversal, Status: ledger.TxnSucceeded,
				Currency: second.Currency, Minor: second.Minor, OccurredAt: at.Add(time.Hour), LinkedID: second.ID}
			return fn(rev)
		}
	case slotUnknown:
		orphan := &buf.txns[1]
		*orphan = *t
		orphan.ID, orphan.ProviderRef, orphan.Reference, orphan.OccurredAt = buf.padded("U", uint64(i), 9, ""), nil,
			buf.number("INV-", i), at.Add(time.Second)
		return fn(orphan)
	}
	return nil
}
