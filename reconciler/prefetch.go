package reconciler

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// Prefetching: while the matcher takes the window's intents, a second scan
// reads the provider transactions on another connection into batches of
// copied rows, so that reading them overlaps the intents (and PostgreSQL
// works on both at once). The matcher needs every intent before the first
// transaction, so at most prefetchBatches x prefetchRows rows wait in
// memory; past that the scan waits for the matcher.
const (
	prefetchRows    = 4096
	prefetchBatches = 32
)

// concurrentScanner is implemented by stores whose scans may run two at a
// time, each on its own connection, alongside other statements (a pool
// with room for them). A store without it is read one scan at a time.
type concurrentScanner interface{ ConcurrentScans() bool }

// txnBatch holds copied rows; their byte slices point into buf.
type txnBatch struct {
	rows []ledger.TxnRow
	buf  []byte
}

func (b *txnBatch) add(r *ledger.TxnRow) {
	b.rows = append(b.rows, *r)
	c := &b.rows[len(b.rows)-1]
	for _, f := range []*[]byte{&c.ID, &c.Reference, &c.ProviderRef, &c.Counterparty, &c.LinkedID, &c.Settlement,
		&c.SettlementCurrency, &c.ExchangeRate} {
		// Should buf grow, slices taken before keep the old array: still
		// valid, only not reused.
		start := len(b.buf)
		b.buf = append(b.buf, *f...)
		*f = b.buf[start:len(b.buf):len(b.buf)]
	}
}

type txnPrefetch struct {
	full, free chan *txnBatch
	err        error // the scan's, set before full is closed
	cancel     context.CancelFunc
}

// prefetchTxns starts scanning f on s in the background, into batches of
// rows rows, at most batches of them waiting.
func prefetchTxns(ctx context.Context, s ledger.ScanStore, f ledger.TxnFilter, rows, batches int) *txnPrefetch {
	ctx, cancel := context.WithCancel(ctx)
	p := &txnPrefetch{full: make(chan *txnBatch, batches), free: make(chan *txnBatch, batches), cancel: cancel}
	for range batches {
		p.free <- &txnBatch{rows: make([]ledger.TxnRow, 0, rows)}
	}
	go func() {
		defer close(p.full)
		var b *txnBatch
		p.err = s.ScanProviderTxns(ctx, f, func(r *ledger.TxnRow) error {
			if b == nil {
				select {
				case b = <-p.free:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
				b.rows, b.buf = b.rows[:0], b.buf[:0]
			}
			b.add(r)
			if len(b.rows) == rows {
				p.full <- b // never waits: there are only as many batches as room
				b = nil
			}
			return nil
		})
		if b != nil && len(b.rows) > 0 && p.err == nil {
			p.full <- b
		}
	}()
	return p
}

// each hands the scanned rows to fn in the scan's order and returns the
// scan's error, or fn's (which ends the scan).
func (p *txnPrefetch) each(fn func(*ledger.TxnRow) error) error {
	for b := range p.full {
		for i := range b.rows {
			if err := fn(&b.rows[i]); err != nil {
				p.stop()
				return err
			}
		}
		clear(b.rows) // drop the references to errors and buffers
		p.free <- b
	}
	p.cancel()
	return p.err
}

// stop ends the scan, if it still runs, and waits for it.
func (p *txnPrefetch) stop() {
	p.cancel()
	for range p.full {
	}
}
