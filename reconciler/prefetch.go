package reconciler

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// Prefetching: a run reads each scan in a goroutine of its own, which
// copies the rows into batches, while the run's goroutine hands the rows of
// earlier batches to the matcher; reading (the driver's decoding) and
// matching then overlap, and PostgreSQL sends the next rows meanwhile. When
// the store takes concurrent scans, the provider transactions are read on a
// second connection from the start, while the matcher takes the intents.
// The matcher needs every intent before the first transaction, so at most
// prefetchBatches x prefetchRows rows of each scan wait in memory; past that
// the scan waits for the matcher.
const (
	prefetchRows    = 4096
	prefetchBatches = 8
	// prefetchBytes is a batch's first room for the rows' bytes, per row.
	prefetchBytes = 64
)

// concurrentScanner is implemented by stores whose scans may run two at a
// time, each on its own connection, alongside other statements (a pool
// with room for them). A store without it is read one scan at a time.
type concurrentScanner interface{ ConcurrentScans() bool }

// batch holds copied rows; their byte slices point into buf.
type batch[R any] struct {
	rows []R
	buf  []byte
}

// keep copies b into the batch's buffer. Should the buffer grow, slices
// taken before keep the old array: still valid, only not reused.
func (bt *batch[R]) keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(bt.buf)
	bt.buf = append(bt.buf, b...)
	return bt.buf[start:len(bt.buf):len(bt.buf)]
}

type prefetch[R any] struct {
	full, free chan *batch[R]
	err        error // the scan's, set before full is closed
	cancel     context.CancelFunc
}

// startPrefetch runs scan in the background; it calls its fn argument with
// each row, of which add keeps a copy in the batch. Batches hold rows rows,
// at most batches of them in flight.
func startPrefetch[R any](ctx context.Context, rows, batches int, add func(*batch[R], *R),
	scan func(ctx context.Context, fn func(*R) error) error) *prefetch[R] {
	ctx, cancel := context.WithCancel(ctx)
	p := &prefetch[R]{full: make(chan *batch[R], batches), free: make(chan *batch[R], batches), cancel: cancel}
	for range batches {
		p.free <- &batch[R]{rows: make([]R, 0, rows), buf: make([]byte, 0, rows*prefetchBytes)}
	}
	go func() {
		defer close(p.full)
		var b *batch[R]
		p.err = scan(ctx, func(r *R) error {
			if b == nil {
				select {
				case b = <-p.free:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
				b.rows, b.buf = b.rows[:0], b.buf[:0]
			}
			add(b, r)
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
func (p *prefetch[R]) each(fn func(*R) error) error {
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
func (p *prefetch[R]) stop() {
	p.cancel()
	for range p.full {
	}
}

func prefetchIntents(ctx context.Context, s ledger.ScanStore, f ledger.IntentFilter, rows, batches int) *prefetch[ledger.IntentRow] {
	return startPrefetch(ctx, rows, batches, func(b *batch[ledger.IntentRow], r *ledger.IntentRow) {
		c := *r
		c.Key, c.Reference, c.Customer, c.RefundOf = b.keep(r.Key), b.keep(r.Reference), b.keep(r.Customer), b.keep(r.RefundOf)
		b.rows = append(b.rows, c)
	}, func(ctx context.Context, fn func(*ledger.IntentRow) error) error { return s.ScanIntents(ctx, f, fn) })
}

// refRow is a provider reference of an intent (ScanProviderRefs).
type refRow struct{ key, ref []byte }

func prefetchRefs(ctx context.Context, s ledger.ScanStore, f ledger.IntentFilter, rows, batches int) *prefetch[refRow] {
	return startPrefetch(ctx, rows, batches, func(b *batch[refRow], r *refRow) {
		b.rows = append(b.rows, refRow{key: b.keep(r.key), ref: b.keep(r.ref)})
	}, func(ctx context.Context, fn func(*refRow) error) error {
		var r refRow
		return s.ScanProviderRefs(ctx, f, func(key, ref []byte) error {
			r.key, r.ref = key, ref
			return fn(&r)
		})
	})
}

func prefetchTxns(ctx context.Context, s ledger.ScanStore, f ledger.TxnFilter, rows, batches int) *prefetch[ledger.TxnRow] {
	return startPrefetch(ctx, rows, batches, func(b *batch[ledger.TxnRow], r *ledger.TxnRow) {
		c := *r
		c.ID, c.Reference, c.ProviderRef, c.Counterparty, c.LinkedID = b.keep(r.ID), b.keep(r.Reference), b.keep(r.ProviderRef),
			b.keep(r.Counterparty), b.keep(r.LinkedID)
		c.Settlement, c.SettlementCurrency, c.ExchangeRate = b.keep(r.Settlement), b.keep(r.SettlementCurrency), b.keep(r.ExchangeRate)
		b.rows = append(b.rows, c)
	}, func(ctx context.Context, fn func(*ledger.TxnRow) error) error { return s.ScanProviderTxns(ctx, f, fn) })
}
