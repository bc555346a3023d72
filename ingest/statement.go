package ingest

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/statement"
	"github.com/reconcilehq/reconcile/report"
)

// Statement imports the statement files of one provider.
type Statement struct {
	// Store receives each file in transactions of its own.
	Store ledger.Transactor
	// Provider names the provider (mpesa, stripe, a configured layout,
	// bank:NAME); its files are quarantined under Provider_statement.
	Provider string
	// Account is the provider account the file is of; empty is the
	// provider's default account.
	Account string
	Parser  providers.StatementParser
	// Clock stamps sightings without a receipt time and quarantine items;
	// time.Now when nil.
	Clock func() time.Time
	// Progress, when it is a terminal, shows the lines read, lines/s and
	// the share of the file read; nil shows nothing.
	Progress *os.File
}

// Import imports the statement file at path (statement.Importer): whole or
// not at all, as a stream in batches.
func (s *Statement) Import(ctx context.Context, path string) (statement.Counts, error) {
	f, err := openCounted(path, s.Progress, s.Clock)
	if err != nil {
		return statement.Counts{}, err
	}
	defer f.Close()
	im := &statement.Importer{Store: s.Store, Clock: s.Clock, Progress: func(lines int) { f.update("import", lines) }}
	c, err := im.Import(ctx, statement.File{Name: path, Reader: f.in, Parser: s.Parser, Source: s.Provider + "_statement",
		Account: s.Account})
	f.done()
	return c, err
}

// DryRun reads the statement file at path as Import would, checks its
// transactions against books and writes what importing it would do to w;
// it writes nothing to the books.
func (s *Statement) DryRun(ctx context.Context, w io.Writer, books ledger.Reader, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := report.CheckStatement(ctx, books, f, path, s.Provider, s.Account, s.Parser)
	if err != nil {
		return err
	}
	return report.WriteFileCheck(w, c)
}

// countedFile is a file being imported, its bytes counted for the
// progress drawn on a terminal.
type countedFile struct {
	*os.File
	in       *report.CountingReader
	size     int64
	progress *report.Progress
}

// openCounted opens path and, when progress is given, the progress drawn
// on it.
func openCounted(path string, progress *os.File, clock func() time.Time) (*countedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	c := &countedFile{File: f, in: &report.CountingReader{R: f, Seeker: f}}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		c.size = st.Size()
	}
	if progress != nil {
		c.progress = report.NewProgress(progress, clock)
	}
	return c, nil
}

// update shows that stage has read lines so far.
func (c *countedFile) update(stage string, lines int) {
	if c.progress != nil {
		c.progress.UpdateFile(stage, lines, c.in.N, c.size)
	}
}

// done clears the progress line.
func (c *countedFile) done() {
	if c.progress != nil {
		c.progress.Done()
	}
}
