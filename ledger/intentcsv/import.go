package intentcsv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// Result counts what an import did.
type Result struct {
	Rows     int
	Created  int
	Existing int
	// Pending counts the file's pending intents that are still pending
	// (created now or by an earlier import).
	Pending int
	// PendingRefunds is Pending for refund intents.
	PendingRefunds int
}

// Options tune an import. The zero value imports and enqueues nothing else.
type Options struct {
	// Pending, when set, is called inside the import's transaction with the
	// keys of the pending intents it created, in batches (the CLI's
	// --charge enqueues their charges there). Without it a pending intent
	// is imported and nothing else happens to it.
	Pending func(ctx context.Context, tx ledger.Tx, keys []string) error
	// PendingRefunds is Pending for the pending refund intents (--charge
	// enqueues their refund jobs there).
	PendingRefunds func(ctx context.Context, tx ledger.Tx, keys []string) error
	// Check, when set, vets each good row before it is written. A
	// *ledger.FieldError rejects the row like a bad value (quarantined with
	// its line and field); any other error stops the import and nothing is
	// imported (a setting the rows need, not a bad row: nothing is
	// quarantined).
	Check func(Row) error
	// Progress, when set, is called every few thousand rows with the number
	// read so far.
	Progress func(rows int)
	// Kinds is, per provider, the kind of a row that names neither a kind
	// nor a provider reference (Kinds); a charge when not listed.
	Kinds Kinds
}

// progressEvery is how many rows pass between two Progress calls.
const progressEvery = 4096

type rejected struct {
	perr *ledger.ParseError
	raw  []byte
}

var (
	errRollback = errors.New("rollback")
	errStopped  = errors.New("import stopped reading")
)

// Import reads the intents CSV r (named file in messages) into store in one
// transaction, streaming the rows to the store's bulk import. If any row is
// bad, nothing is imported, the bad rows are quarantined, and a
// *ledger.RejectedFileError lists them in line order. opt may be nil.
func Import(ctx context.Context, store ledger.Store, file string, r io.Reader, now time.Time, opt *Options) (Result, error) {
	if opt == nil {
		opt = &Options{}
	}
	// Rows the store refuses are known by line only once the file has been
	// read; their text is read again from the file. Input that cannot be
	// read twice is kept in a temporary file meanwhile.
	src, cleanup, err := rereadable(r)
	if err != nil {
		return Result{}, fmt.Errorf("import intents %s: %w", file, err)
	}
	defer cleanup()
	run := &importRun{file: file, opt: opt, src: src}
	var (
		res     Result
		refused []ledger.RefusedIntent
	)
	err = store.InTx(ctx, func(tx ledger.Tx) error {
		out, err := tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: run.rows,
			Pending: run.inTx(tx, opt.Pending), PendingRefunds: run.inTx(tx, opt.PendingRefunds)})
		if err != nil {
			return err
		}
		res = Result{Rows: out.Rows, Created: out.Created, Existing: out.Existing, Pending: out.Pending, PendingRefunds: out.PendingRefunds}
		refused = out.Refused
		if run.fail != nil || len(run.bad) > 0 || len(refused) > 0 {
			return errRollback
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRollback) {
		return Result{}, fmt.Errorf("import intents %s: %w", file, err)
	}
	bad := run.bad
	var perr *ledger.ParseError
	if run.fail != nil && !errors.As(run.fail, &perr) {
		return Result{}, fmt.Errorf("import intents %s: %w", file, run.fail)
	}
	if perr != nil && len(bad) == 0 {
		bad = append(bad, rejected{perr: perr})
	}
	if len(refused) > 0 {
		more, err := src.refused(file, opt.Kinds, refused)
		if err != nil {
			return Result{}, fmt.Errorf("import intents %s: %w", file, err)
		}
		bad = append(bad, more...)
	}
	if len(bad) == 0 {
		return res, nil
	}
	return Result{}, quarantine(ctx, store, file, bad, now)
}

// importRun is the reading of one file by Import: the rows it rejected and
// the error that stopped the reading.
type importRun struct {
	file string
	opt  *Options
	src  *source
	bad  []rejected
	fail error
}

// reject notes a rejected row.
func (run *importRun) reject(perr *ledger.ParseError, raw []byte) error {
	run.bad = append(run.bad, rejected{perr, raw})
	return nil
}

// rows reads the file's rows, vetted by Options.Check, as the store's
// import takes them; the error that ends the reading is kept in run.fail.
func (run *importRun) rows(yield func(ledger.ImportIntent) bool) {
	opt, file := run.opt, run.file
	n := 0
	run.fail = Read(run.src.r, file, opt.Kinds, func(row Row) error {
		if opt.Check != nil {
			if err := opt.Check(row); err != nil {
				var fe *ledger.FieldError
				if errors.As(err, &fe) {
					return run.reject(&ledger.ParseError{File: file, Line: row.Line, Field: fe.Field, Err: fe.Err}, row.Raw)
				}
				return err
			}
		}
		if n++; opt.Progress != nil && n%progressEvery == 0 {
			opt.Progress(n)
		}
		if !yield(ledger.ImportIntent{NewIntent: row.Intent, Line: row.Line, ProviderRefs: row.ProviderRefs}) {
			return errStopped
		}
		return nil
	}, run.reject)
}

// inTx is fn given tx, for the store's import to call with the keys of
// pending intents; it does nothing once the import is bound to be rolled
// back. It is nil when fn is.
func (run *importRun) inTx(tx ledger.Tx, fn func(context.Context, ledger.Tx, []string) error) func(context.Context, []string) error {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, keys []string) error {
		if len(run.bad) > 0 || run.fail != nil {
			return nil // rolled back anyway
		}
		return fn(ctx, tx, keys)
	}
}

// quarantine quarantines the rejected rows bad in line order, in a
// transaction of their own, and returns the *ledger.RejectedFileError that
// lists them.
func quarantine(ctx context.Context, store ledger.Store, file string, bad []rejected, now time.Time) error {
	slices.SortStableFunc(bad, func(a, b rejected) int { return cmp.Compare(a.perr.Line, b.perr.Line) })
	qerr := store.InTx(ctx, func(tx ledger.Tx) error {
		for _, b := range bad {
			if _, err := tx.AddQuarantine(ctx, ledger.QuarantineItem{Source: "intents_csv", Origin: file, Line: b.perr.Line,
				Field: b.perr.Field, Reason: b.perr.Err.Error(), Raw: b.raw, At: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if qerr != nil {
		return fmt.Errorf("import intents %s: quarantine rejected rows: %w", file, qerr)
	}
	rej := &ledger.RejectedFileError{File: file}
	for _, b := range bad {
		rej.Problems = append(rej.Problems, b.perr)
	}
	return rej
}

// source is the input, readable a second time: from its start when it can
// seek, from a copy in a temporary file otherwise.
type source struct {
	r     io.Reader
	seek  io.ReadSeeker
	start int64
}

func rereadable(r io.Reader) (*source, func(), error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			return &source{r: rs, seek: rs, start: start}, func() {}, nil
		}
	}
	f, err := os.CreateTemp("", "reconcile-intents-*.csv")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { f.Close(); os.Remove(f.Name()) }
	return &source{r: io.TeeReader(r, f), seek: f}, cleanup, nil
}

// refused reads the file again for the rows the store refused and returns
// them as rejections with their text.
func (s *source) refused(file string, kinds Kinds, refused []ledger.RefusedIntent) ([]rejected, error) {
	if _, err := s.seek.Seek(s.start, io.SeekStart); err != nil {
		return nil, err
	}
	again := s.seek
	byLine := make(map[int]ledger.RefusedIntent, len(refused))
	for _, r := range refused {
		byLine[r.Line] = r
	}
	var out []rejected
	err := Read(again, file, kinds, func(row Row) error {
		r, ok := byLine[row.Line]
		if !ok {
			return nil
		}
		field := "key"
		var fe *ledger.FieldError
		if errors.As(r.Err, &fe) {
			field = fe.Field
		}
		cause := r.Err
		if fe != nil {
			cause = fe.Err
		} else {
			var kr *ledger.KeyReuseError
			if errors.As(r.Err, &kr) {
				cause = kr
			}
		}
		out = append(out, rejected{&ledger.ParseError{File: file, Line: row.Line, Field: field, Err: cause}, row.Raw})
		delete(byLine, row.Line)
		return nil
	}, func(*ledger.ParseError, []byte) error { return nil })
	if err != nil {
		return nil, err
	}
	for _, r := range byLine { // not found again: keep the problem without its text
		out = append(out, rejected{perr: &ledger.ParseError{File: file, Line: r.Line, Field: "key", Err: r.Err}})
	}
	return out, nil
}
