package books

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
)

// ErrSourceNotMigrated reports a source whose schema has migrations this
// binary knows and has not applied.
var ErrSourceNotMigrated = errors.New("books: the source is not fully migrated")

// ErrTargetNotEmpty reports a target that holds rows of the books already.
var ErrTargetNotEmpty = errors.New("books: the target is not empty")

// CopyOptions tune Copy.
type CopyOptions struct {
	// Progress receives a line per table copied, and one every
	// ProgressEvery rows of a large table; nil says nothing.
	Progress io.Writer
	// ProgressEvery is how many rows of a table pass between progress
	// lines; default 100,000.
	ProgressEvery int64
	// Clock times the copy; default time.Now.
	Clock func() time.Time
}

// batchRows is how many rows travel from the reader to the writer at once.
const batchRows = 1024

// Copy copies the books from one database to another: every table of the
// ledger and River's job tables, in bulk, converting each value between
// the engines' forms, in one transaction on the target, from one snapshot
// of the source, which it only reads. The source must be fully migrated by
// this binary; the target is migrated to the same version first and must
// hold no row of the books. Identity sequences of the target continue
// after the source's. At the end every table is read back from the target
// and compared with what was read from the source: row counts, the sum of
// each amount column (as exact decimals) and a checksum of the primary
// keys. A difference returns the report with ErrMismatch.
func Copy(ctx context.Context, from, to ledger.Store, opt CopyOptions) (*CopyReport, error) {
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = 100_000
	}
	start := opt.Clock()
	srcB, err := engine.BooksOf(from)
	if err != nil {
		return nil, fmt.Errorf("books: copy: %w", err)
	}
	dstB, err := engine.BooksOf(to)
	if err != nil {
		return nil, fmt.Errorf("books: copy: %w", err)
	}
	plans, version, err := prepareCopy(ctx, from, to, srcB, dstB)
	if err != nil {
		return nil, err
	}
	report := &CopyReport{From: string(from.Engine()), To: string(to.Engine()), Version: version}
	opt.progress("copying %d tables from %s to %s (ledger migration %d)\n", len(plans), report.From, report.To, version)
	source, err := copyTables(ctx, srcB, dstB, plans, report, opt)
	if err != nil {
		return nil, fmt.Errorf("books: copy: %w", err)
	}
	opt.progress("verifying\n")
	err = dstB.Read(ctx, func(r engine.Reader) error {
		for i, p := range plans {
			t, err := tallyTable(ctx, r, p, p.dst)
			if err != nil {
				return err
			}
			report.Tables[i].Checks = checks(p, source[p.name], t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("books: copy: verify: %w", err)
	}
	report.Took = opt.Clock().Sub(start)
	if !report.OK() {
		return report, ErrMismatch
	}
	return report, nil
}

// progress prints a line of progress when asked to.
func (opt CopyOptions) progress(format string, args ...any) {
	if opt.Progress != nil {
		fmt.Fprintf(opt.Progress, format, args...)
	}
}

// prepareCopy checks that the source holds fully migrated books and that
// the target is empty, migrates the target to the same version, and plans
// the copy of each table; it returns the plans and the ledger's migration
// version.
func prepareCopy(ctx context.Context, from, to ledger.Store, srcB, dstB engine.Books) ([]tablePlan, int64, error) {
	// Asking goose about a database it never migrated would create its
	// table there: a source without one is refused first.
	srcTables, err := srcB.Tables(ctx)
	if err != nil {
		return nil, 0, err
	}
	if _, ok := find(srcTables, "goose_db_version"); !ok {
		return nil, 0, fmt.Errorf("%w: it holds no books (no migration was ever applied to it)", ErrSourceNotMigrated)
	}
	pending, err := database.Pending(ctx, from)
	if err != nil {
		return nil, 0, fmt.Errorf("books: copy: the source: %w", err)
	}
	if len(pending) > 0 {
		return nil, 0, fmt.Errorf("%w: %d migration(s) pending (first: %s); run `reconcile migrate` on it first",
			ErrSourceNotMigrated, len(pending), pending[0])
	}
	if err := ensureEmpty(ctx, dstB); err != nil {
		return nil, 0, err
	}
	if _, err := database.Migrate(ctx, to); err != nil {
		return nil, 0, fmt.Errorf("books: copy: migrate the target: %w", err)
	}
	if pending, err := database.Pending(ctx, to); err != nil || len(pending) > 0 {
		return nil, 0, fmt.Errorf("books: copy: the target is not fully migrated after migrating it: %v %v", pending, err)
	}
	if err := ensureEmpty(ctx, dstB); err != nil {
		return nil, 0, err
	}
	dstTables, err := dstB.Tables(ctx)
	if err != nil {
		return nil, 0, err
	}
	srcVersion, err := ledgerVersion(ctx, srcB, srcTables)
	if err != nil {
		return nil, 0, err
	}
	dstVersion, err := ledgerVersion(ctx, dstB, dstTables)
	if err != nil {
		return nil, 0, err
	}
	if srcVersion != dstVersion {
		return nil, 0, fmt.Errorf("books: copy: the source is at ledger migration %d, the target at %d", srcVersion, dstVersion)
	}
	plans, err := plan(srcTables, dstTables)
	return plans, srcVersion, err
}

// copyTables copies every planned table from one snapshot of the source in
// one transaction of the target, then carries the identity sequences on; it
// returns what it read of each table, for the verification.
func copyTables(ctx context.Context, srcB, dstB engine.Books, plans []tablePlan, report *CopyReport, opt CopyOptions) (map[string]*tally, error) {
	source := map[string]*tally{}
	err := srcB.Read(ctx, func(r engine.Reader) error {
		ids, err := r.Identities(ctx)
		if err != nil {
			return err
		}
		return dstB.Write(ctx, func(w engine.Writer) error {
			for _, p := range plans {
				began := opt.Clock()
				t := newTally(p)
				n, err := copyTable(ctx, r, w, p, t, func(n int64) {
					if n%opt.ProgressEvery == 0 {
						opt.progress("  %s: %d rows...\n", p.name, n)
					}
				})
				if err != nil {
					return err
				}
				took := opt.Clock().Sub(began)
				source[p.name] = t
				report.Tables = append(report.Tables, TableReport{Table: p.name, Rows: n, Took: took})
				opt.progress("%-24s %10d rows %8.1fs\n", p.name, n, took.Seconds())
			}
			return w.SetIdentities(ctx, ids)
		})
	})
	return source, err
}

// Verify compares two databases of the books table by table as Copy does
// after copying: row counts, the sum of each amount column and a checksum
// of the primary keys, each side read from a snapshot of its own. A
// difference returns the report with ErrMismatch.
func Verify(ctx context.Context, from, to ledger.Store) (*CopyReport, error) {
	srcB, err := engine.BooksOf(from)
	if err != nil {
		return nil, fmt.Errorf("books: verify: %w", err)
	}
	dstB, err := engine.BooksOf(to)
	if err != nil {
		return nil, fmt.Errorf("books: verify: %w", err)
	}
	srcTables, err := srcB.Tables(ctx)
	if err != nil {
		return nil, err
	}
	dstTables, err := dstB.Tables(ctx)
	if err != nil {
		return nil, err
	}
	plans, err := plan(srcTables, dstTables)
	if err != nil {
		return nil, err
	}
	version, err := ledgerVersion(ctx, srcB, srcTables)
	if err != nil {
		return nil, err
	}
	report := &CopyReport{From: string(from.Engine()), To: string(to.Engine()), Version: version}
	tallies := func(b engine.Books, dst bool) ([]*tally, error) {
		out := make([]*tally, len(plans))
		err := b.Read(ctx, func(r engine.Reader) error {
			for i, p := range plans {
				side := p.src
				if dst {
					side = p.dst
				}
				t, err := tallyTable(ctx, r, p, side)
				if err != nil {
					return err
				}
				out[i] = t
			}
			return nil
		})
		return out, err
	}
	src, err := tallies(srcB, false)
	if err != nil {
		return nil, fmt.Errorf("books: verify: the source: %w", err)
	}
	dst, err := tallies(dstB, true)
	if err != nil {
		return nil, fmt.Errorf("books: verify: the target: %w", err)
	}
	for i, p := range plans {
		report.Tables = append(report.Tables, TableReport{Table: p.name, Rows: dst[i].rows, Checks: checks(p, src[i], dst[i])})
	}
	if !report.OK() {
		return report, ErrMismatch
	}
	return report, nil
}

// copyTable streams one table from r into w, counting what it reads into t.
func copyTable(ctx context.Context, r engine.Reader, w engine.Writer, p tablePlan, t *tally, step func(n int64)) (int64, error) {
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan [][]any, 4)
	g.Go(func() error {
		defer close(batches)
		batch := make([][]any, 0, batchRows)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([][]any, 0, batchRows)
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		err := r.Scan(gctx, engine.Scan{Table: p.name, Cols: p.src}, func(row []any) error {
			row = slices.Clone(row)
			if err := t.add(p, row); err != nil {
				return fmt.Errorf("table %s: %w", p.name, err)
			}
			batch = append(batch, row)
			if len(batch) == batchRows {
				return send()
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(batch) > 0 {
			return send()
		}
		return nil
	})
	var n int64
	g.Go(func() error {
		var cur [][]any
		_, err := w.Load(gctx, p.name, p.dst, func() ([]any, error) {
			for len(cur) == 0 {
				select {
				case b, ok := <-batches:
					if !ok {
						return nil, nil
					}
					cur = b
				case <-gctx.Done():
					return nil, gctx.Err()
				}
			}
			row := cur[0]
			cur = cur[1:]
			n++
			step(n)
			return row, nil
		})
		return err
	})
	if err := g.Wait(); err != nil {
		return n, err
	}
	return n, nil
}

// tallyTable reads what is verified of one table, its columns cols (p.src
// or p.dst).
func tallyTable(ctx context.Context, r engine.Reader, p tablePlan, side []engine.Column) (*tally, error) {
	t := newTally(p)
	var idx []int
	for _, j := range append(slices.Clone(p.keys), p.amounts...) {
		if !slices.Contains(idx, j) {
			idx = append(idx, j)
		}
	}
	cols := make([]engine.Column, len(idx))
	for i, j := range idx {
		cols[i] = side[j]
	}
	row := make([]any, len(side))
	err := r.Scan(ctx, engine.Scan{Table: p.name, Cols: cols}, func(vals []any) error {
		for i, j := range idx {
			row[j] = vals[i]
		}
		return t.add(p, row)
	})
	return t, err
}

// ensureEmpty fails with ErrTargetNotEmpty when a table of the books in b
// holds a row.
func ensureEmpty(ctx context.Context, b engine.Books) error {
	ts, err := b.Tables(ctx)
	if err != nil {
		return err
	}
	var full []string
	err = b.Read(ctx, func(r engine.Reader) error {
		for _, t := range ts {
			if _, skip := notCopied[t.Name]; skip {
				continue
			}
			n, err := r.Count(ctx, t.Name)
			if err != nil {
				return err
			}
			if n > 0 {
				full = append(full, fmt.Sprintf("%s (%d rows)", t.Name, n))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(full) > 0 {
		return fmt.Errorf("%w: %s; copy into a new database, schema or file", ErrTargetNotEmpty, strings.Join(full, ", "))
	}
	return nil
}

// ledgerVersion is the last ledger migration applied to a database of
// tables ts.
func ledgerVersion(ctx context.Context, b engine.Books, ts []engine.Table) (int64, error) {
	i := slices.IndexFunc(ts, func(t engine.Table) bool { return t.Name == "goose_db_version" })
	if i < 0 {
		return 0, nil
	}
	version, ok1 := ts[i].Column("version_id")
	applied, ok2 := ts[i].Column("is_applied")
	if !ok1 || !ok2 {
		return 0, errors.New("books: goose_db_version has no version_id or is_applied")
	}
	var v int64
	err := b.Read(ctx, func(r engine.Reader) error {
		return r.Scan(ctx, engine.Scan{Table: "goose_db_version",
			Cols: []engine.Column{version.As(engine.TypeInt), applied.As(engine.TypeBool)}}, func(row []any) error {
			if n, _ := row[0].(int64); row[1] == true && n > v {
				v = n
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("books: read the ledger's migration: %w", err)
	}
	return v, nil
}
