package statement

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// chunk is a batch of sightings and what they say beyond their
// transactions (bank entries, payouts, payout items).
type chunk struct {
	s []ledger.Sighting
	x providers.Extras
}

// writer records batches of sightings in a transaction on a goroutine of
// its own, so that the next batch is parsed while the store writes the
// last one: on two cores an import takes about the longer of parsing and
// writing rather than their sum. The transaction is used by that goroutine
// only. Two batches are in memory at most: the one being filled and the
// one being written.
type writer struct {
	work      chan *chunk
	free      chan *chunk
	done      chan struct{}
	failed    atomic.Bool
	counts    ledger.UpsertCounts // Conflicts stays empty: conflicts counts them
	conflicts int
	extras    providers.ExtraCounts
	err       error
}

// errWriterFailed stops the parser once a batch has failed; close returns
// the batch's error.
var errWriterFailed = errors.New("statement: a batch failed")

func newWriter(ctx context.Context, tx ledger.Tx, size int, at time.Time) *writer {
	w := &writer{work: make(chan *chunk), free: make(chan *chunk, 2), done: make(chan struct{})}
	w.free <- &chunk{s: make([]ledger.Sighting, 0, size)}
	w.free <- &chunk{s: make([]ledger.Sighting, 0, size)}
	go func() {
		defer close(w.done)
		for c := range w.work {
			if w.err == nil {
				if err := w.write(ctx, tx, c, at); err != nil {
					w.err = err
					w.failed.Store(true)
				}
			}
			clear(c.s) // let the batch's raw lines go
			c.s = c.s[:0]
			c.x.Reset()
			w.free <- c
		}
	}()
	return w
}

// write records one batch: its sightings, then what they say beyond
// their transactions.
func (w *writer) write(ctx context.Context, tx ledger.Tx, c *chunk, at time.Time) error {
	u, err := tx.UpsertProviderTxns(ctx, c.s)
	if err != nil {
		return err
	}
	w.counts.NewTxns += u.NewTxns
	w.counts.NewSources += u.NewSources
	w.counts.Duplicates += u.Duplicates
	w.conflicts += len(u.Conflicts)
	if c.x.Empty() {
		return nil
	}
	x, err := c.x.Record(ctx, tx, at)
	w.extras.Payouts += x.Payouts
	w.extras.Items += x.Items
	w.extras.BankEntries += x.BankEntries
	return err
}

// batch returns an empty batch to fill.
func (w *writer) batch() *chunk { return <-w.free }

// send hands a filled batch over; the writer owns it until batch returns
// it. It fails once an earlier batch has failed.
func (w *writer) send(b *chunk) error {
	if w.failed.Load() {
		return errWriterFailed
	}
	w.work <- b
	return nil
}

// close waits for the batches handed over and returns the first error.
func (w *writer) close() error {
	close(w.work)
	<-w.done
	return w.err
}
