package statement

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// maxKeptFile bounds how much of a file that cannot be read at all (no
// header, not CSV) is kept in the quarantine.
const maxKeptFile = 1 << 20

// Importer applies statement files to a store.
type Importer struct {
	// Store receives each file in transactions of its own; a ledger.Store
	// is one.
	Store ledger.Transactor
	// Clock stamps sightings that carry no receipt time and quarantine
	// items; time.Now when nil.
	Clock func() time.Time
	// BatchSize is how many sightings go to the store at once;
	// DefaultBatchSize when zero. Memory is bounded by one batch, whatever
	// the file's size.
	BatchSize int
	// Progress, when set, is called after every batch with the lines read
	// so far.
	Progress func(lines int)
}

// DefaultBatchSize is the default Importer.BatchSize.
const DefaultBatchSize = 10000

// File is one statement file to import.
type File struct {
	// Name is the file's name in errors and in the quarantine (Origin).
	Name   string
	Reader io.Reader
	Parser providers.StatementParser
	// Source names the input path in the quarantine, e.g. "mpesa_statement".
	Source string
	// Account is the provider account the statement is of (an M-Pesa
	// paybill's short code); every transaction it holds is that
	// account's. Empty is the provider's default account.
	Account string
}

// Counts says what an import did.
type Counts struct {
	// Lines counts data lines, good and rejected.
	Lines int
	// NewTxns counts provider transactions the file added; NewSources counts
	// sightings it added (a row for a transaction already known through a
	// callback adds a source, not a transaction).
	NewTxns    int
	NewSources int
	// Duplicates counts rows whose sighting was already stored (a re-import,
	// an overlapping export, a repeated row).
	Duplicates int
	// Conflicts counts rows that contradict the stored transaction (or an
	// earlier row of the file): each is quarantined, the first kept.
	Conflicts int
	// Rejected counts the lines put in the quarantine.
	Rejected int
	// Payouts counts the payouts the file added or told more of (an
	// arrival date, a trace); PayoutItems the transactions it added to
	// payouts.
	Payouts, PayoutItems int
	// Notes is what the parser said beyond the counts, nil when it said
	// nothing (a pointer, so that Counts stays comparable).
	Notes *Notes
}

// Notes are the lines by category and the warnings of an import.
type Notes struct {
	// Categories counts lines by what the parser says they are (Stripe's
	// reporting categories).
	Categories map[string]int
	// Warnings are the distinct warnings of the file's lines, in the order
	// they first came: lines that were read but deserve a look.
	Warnings []string
}

func (c *Counts) notes() *Notes {
	if c.Notes == nil {
		c.Notes = &Notes{Categories: map[string]int{}}
	}
	return c.Notes
}

// Summary is what an import tells the person who ran it: the counts, the
// lines by category, and every warning.
func (c Counts) Summary(file string) string {
	var b strings.Builder
	conflicts := ""
	if c.Conflicts > 0 {
		conflicts = fmt.Sprintf(", %d contradicting the books (quarantined, first kept)", c.Conflicts)
	}
	fmt.Fprintf(&b, "%s: %d line(s): %d new transaction(s), %d new source(s), %d already known%s\n",
		file, c.Lines, c.NewTxns, c.NewSources, c.Duplicates, conflicts)
	if c.Payouts+c.PayoutItems > 0 {
		fmt.Fprintf(&b, "  payouts: %d new or completed, %d transaction(s) added to payouts\n", c.Payouts, c.PayoutItems)
	}
	if c.Notes == nil {
		return b.String()
	}
	if len(c.Notes.Categories) > 0 {
		cats := make([]string, 0, len(c.Notes.Categories))
		for k := range c.Notes.Categories {
			cats = append(cats, k)
		}
		sort.Strings(cats)
		parts := make([]string, len(cats))
		for i, k := range cats {
			parts[i] = fmt.Sprintf("%s %d", k, c.Notes.Categories[k])
		}
		fmt.Fprintf(&b, "  by category: %s\n", strings.Join(parts, ", "))
	}
	for _, w := range c.Notes.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	return b.String()
}

type rejected struct {
	perr *ledger.ParseError
	raw  []byte
}

var errRollback = errors.New("statement: rejected lines")

// Import reads f in one transaction. When every line is good it commits and
// returns the counts. When any line is rejected (or the file cannot be read
// as a statement) nothing is imported: the rejected lines are quarantined in
// a transaction of their own and a *ledger.RejectedFileError lists them. Other errors
// (the database) are returned as they are, with nothing imported.
func (im *Importer) Import(ctx context.Context, f File) (Counts, error) {
	now := time.Now
	if im.Clock != nil {
		now = im.Clock
	}
	at := now().UTC()
	head := &headKeeper{max: maxKeptFile}
	run := &importRun{im: im, f: f, r: io.TeeReader(f.Reader, head), at: at, size: im.BatchSize}
	if run.size <= 0 {
		run.size = DefaultBatchSize
	}
	err := im.Store.InTx(ctx, func(tx ledger.Tx) error { return run.apply(ctx, tx) })
	if err == nil {
		return run.counts, nil
	}
	if !errors.Is(err, errRollback) {
		return Counts{}, fmt.Errorf("statement: import %s: %w", f.Name, err)
	}
	return run.reject(ctx, head.buf)
}

// importRun is the state of one Import: the file, the counts so far and the
// lines rejected so far.
type importRun struct {
	im       *Importer
	f        File
	r        io.Reader
	at       time.Time
	size     int
	counts   Counts
	problems []rejected
	fileErr  *ledger.ParseError
}

// apply parses the file and writes its sightings in batches through tx. It
// returns errRollback when any line (or the file) is rejected, so that the
// transaction rolls back and the caller can quarantine the problems.
func (run *importRun) apply(ctx context.Context, tx ledger.Tx) (err error) {
	im, f, at, size := run.im, run.f, run.at, run.size
	run.counts, run.problems = Counts{}, nil
	counts := &run.counts
	w := newWriter(ctx, tx, size, at)
	defer func() {
		werr := w.close()
		if werr != nil && (err == nil || errors.Is(err, errWriterFailed)) {
			err = werr
		}
		if err == nil {
			counts.NewTxns, counts.NewSources = w.counts.NewTxns, w.counts.NewSources
			counts.Duplicates, counts.Conflicts = w.counts.Duplicates, w.conflicts
			counts.Payouts, counts.PayoutItems = w.extras.Payouts, w.extras.Items
		}
	}()
	batch := w.batch()
	flush := func() error {
		if len(batch.s) == 0 {
			return nil
		}
		if err := w.send(batch); err != nil {
			return err
		}
		if im.Progress != nil {
			im.Progress(counts.Lines)
		}
		batch = w.batch()
		return nil
	}
	perr := f.Parser.ParseStatement(run.r, f.Name, func(s providers.Sighting) error {
		counts.Lines++
		s.Txn.Account = f.Account
		if len(run.problems) > 0 {
			// The transaction will be rolled back; read on only to
			// find every problem.
			return nil
		}
		if err := ledger.ValidateTxn(s.Txn); err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				return err
			}
			run.problems = append(run.problems, rejected{&ledger.ParseError{File: f.Name, Field: fe.Field,
				Err: fmt.Errorf("transaction %s: %w", s.Txn.ID, fe.Err)}, s.Source.Raw})
			return nil
		}
		if s.Source.ReceivedAt.IsZero() {
			s.Source.ReceivedAt = at
		}
		if s.Category != "" {
			counts.notes().Categories[s.Category]++
		}
		for _, w := range s.Warnings {
			if n := counts.notes(); !slices.Contains(n.Warnings, w) {
				n.Warnings = append(n.Warnings, w)
			}
		}
		batch.s = append(batch.s, ledger.Sighting{Txn: s.Txn, Source: s.Source})
		batch.x.Add(s)
		if len(batch.s) == size {
			return flush()
		}
		return nil
	}, func(perr *ledger.ParseError, raw []byte) error {
		counts.Lines++
		run.problems = append(run.problems, rejected{perr, raw})
		return nil
	})
	if perr != nil {
		if errors.As(perr, &run.fileErr) {
			return errRollback
		}
		return perr
	}
	if len(run.problems) > 0 {
		return errRollback
	}
	return flush()
}

// reject quarantines the rejected lines (and the head of the file when the
// file itself could not be read) in a transaction of their own and returns
// the *ledger.RejectedFileError that lists them.
func (run *importRun) reject(ctx context.Context, head []byte) (Counts, error) {
	f, problems := run.f, run.problems
	if run.fileErr != nil {
		if run.fileErr.File == "" {
			run.fileErr.File = f.Name
		}
		problems = append(problems, rejected{run.fileErr, head})
	}
	err := run.im.Store.InTx(ctx, func(tx ledger.Tx) error {
		for _, p := range problems {
			if _, err := tx.AddQuarantine(ctx, ledger.QuarantineItem{Source: f.Source, Origin: f.Name, Line: p.perr.Line,
				Field: p.perr.Field, Reason: p.perr.Error(), Raw: p.raw, At: run.at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Counts{}, fmt.Errorf("statement: quarantine rejected lines of %s: %w", f.Name, err)
	}
	ie := &ledger.RejectedFileError{File: f.Name}
	for _, p := range problems {
		ie.Problems = append(ie.Problems, p.perr)
	}
	return Counts{Lines: run.counts.Lines, Rejected: len(problems)}, ie
}

// headKeeper keeps the first max bytes written to it.
type headKeeper struct {
	buf []byte
	max int
}

func (h *headKeeper) Write(p []byte) (int, error) {
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
