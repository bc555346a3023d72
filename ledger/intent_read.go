package ledger

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"
	"sync"
)

// ImportReader reads the rows of an import of intents on a goroutine of its
// own, so that reading and parsing the next rows overlaps the store writing
// the last ones. Each row is normalised; an invalid one (a *FieldError) is
// refused and left out; every other row is turned by the store's prep into
// what it writes (also on the reading goroutine) and handed over in
// batches. The rows it holds are at most two batches: the one handed over
// and the one being read.
type ImportReader[T any] struct {
	batches chan []T
	// free holds batches handed back by Release, read into again.
	free chan []T
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	// Set by the reading goroutine; read after Stop.
	rows    int
	refused []RefusedIntent
	err     error
	// panicked is what the rows (or prep) panicked with, raised again by
	// Stop in the caller's goroutine.
	panicked *ReaderPanic
}

// ReaderPanic is the value Stop panics with when the rows (or prep)
// panicked on the reading goroutine: what they panicked with, and that
// goroutine's stack at the panic, which the caller's own stack trace
// does not show.
type ReaderPanic struct {
	Value any
	Stack []byte
}

func (p *ReaderPanic) Error() string {
	return fmt.Sprintf("reading intents: %v\n\nreader goroutine:\n%s", p.Value, p.Stack)
}

// ReadImportIntents starts reading seq in batches of size rows. An error of
// prep, or of normalising other than a *FieldError, stops the reading (see
// Stop). The caller must call Stop.
func ReadImportIntents[T any](seq iter.Seq[ImportIntent], size int, prep func(ImportIntent) (T, error)) *ImportReader[T] {
	rd := &ImportReader[T]{batches: make(chan []T), free: make(chan []T, 1), done: make(chan struct{})}
	rd.wg.Add(1)
	go func() {
		defer rd.wg.Done()
		defer close(rd.batches)
		defer func() {
			if p := recover(); p != nil {
				rd.panicked = &ReaderPanic{Value: p, Stack: debug.Stack()}
			}
		}()
		batch := make([]T, 0, size)
		send := func() bool {
			select {
			case rd.batches <- batch:
				select {
				case batch = <-rd.free:
				default:
					batch = make([]T, 0, size)
				}
				return true
			case <-rd.done:
				return false
			}
		}
		for r := range seq {
			rd.rows++
			n, err := r.NewIntent.Normalize()
			if err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) {
					rd.err = err
					return
				}
				rd.refused = append(rd.refused, RefusedIntent{Line: r.Line, Err: err})
				continue
			}
			r.NewIntent = n
			v, err := prep(r)
			if err != nil {
				rd.err = err
				return
			}
			if batch = append(batch, v); len(batch) == size && !send() {
				return
			}
		}
		if len(batch) > 0 {
			send()
		}
	}()
	return rd
}

// Next returns the next batch, or false when the rows are over, the
// reading stopped, or ctx ended (its error then).
func (rd *ImportReader[T]) Next(ctx context.Context) ([]T, bool, error) {
	select {
	case b, ok := <-rd.batches:
		return b, ok, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// Release hands a batch back once the store is done with it (it keeps
// no reference to its rows): the next rows are read into it rather than
// into a new one.
func (rd *ImportReader[T]) Release(batch []T) {
	select {
	case rd.free <- batch[:0]:
	default:
	}
}

// Stop ends the reading and waits for the goroutine to be done with the
// rows. A panic of the rows is raised again here, in the caller's
// goroutine, as a *ReaderPanic. It may be called more than once.
func (rd *ImportReader[T]) Stop() {
	rd.once.Do(func() { close(rd.done) })
	rd.wg.Wait()
	if p := rd.panicked; p != nil {
		rd.panicked = nil
		panic(p)
	}
}

// Result returns, once Stop has returned, how many rows were read, the
// rows refused as invalid, and the error that stopped the reading.
func (rd *ImportReader[T]) Result() (rows int, refused []RefusedIntent, err error) {
	return rd.rows, rd.refused, rd.err
}
