package statement

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/reconcilehq/reconcile/ledger"
)

// writer records batches of sightings in a transaction on a goroutine of
// its own, so that the next batch is parsed while the store writes the
// last one: on two cores an import takes about the longer of parsing and
// writing rather than their sum. The transaction is used by that goroutine
// only. Two batches are in memory at most: the one being filled and the
// one being written.
type writer struct {
	work      chan []ledger.Sighting
	free      chan []ledger.Sighting
	done      chan struct{}
	failed    atomic.Bool
	counts    ledger.UpsertCounts // Conflicts stays empty: conflicts counts them
	conflicts int
	err       error
}

// errWriterFailed stops the parser once a batch has failed; close returns
// the batch's error.
var errWriterFailed = errors.New("statement: a batch failed")

func newWriter(ctx context.Context, tx ledger.Tx, size int) *writer {
	w := &writer{work: make(chan []ledger.Sighting), free: make(chan []ledger.Sighting, 2),
		done: make(chan struct{})}
	w.free <- make([]ledger.Sighting, 0, size)
	w.free <- make([]ledger.Sighting, 0, size)
	go func() {
		defer close(w.done)
		for batch := range w.work {
			if w.err == nil {
				u, err := tx.UpsertProviderTxns(ctx, batch)
				if err != nil {
					w.err = err
					w.failed.Store(true)
				} else {
					w.counts.NewTxns += u.NewTxns
					w.counts.NewSources += u.NewSources
					w.counts.Duplicates += u.Duplicates
					w.conflicts += len(u.Conflicts)
				}
			}
			clear(batch) // let the batch's raw lines go
			w.free <- batch[:0]
		}
	}()
	return w
}

// batch returns an empty batch to fill.
func (w *writer) batch() []ledger.Sighting { return <-w.free }

// send hands a filled batch over; the writer owns it until batch returns
// it. It fails once an earlier batch has failed.
func (w *writer) send(b []ledger.Sighting) error {
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
