package ingest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// Callbacks replays files of captured callback bodies of one provider
// through the intake, as the HTTP endpoints deliver them.
type Callbacks struct {
	Processor *intake.Processor
	Provider  string
	Parser    providers.CallbackParser
	// Clock paces the progress; time.Now when nil.
	Clock func() time.Time
	// Progress, when it is a terminal, shows the stage, the lines read,
	// lines/s and the share of the file read; nil shows nothing.
	Progress *os.File
}

// CallbacksResult is what a callbacks import did.
type CallbacksResult struct {
	intake.FileCounts
	// File is the file's name.
	File string
}

// Import checks every line of the file at path, then delivers them all in
// one transaction (intake.Processor.ImportFile).
func (c *Callbacks) Import(ctx context.Context, path string) (CallbacksResult, error) {
	res := CallbacksResult{File: path}
	f, err := openCounted(path, c.Progress, c.Clock)
	if err != nil {
		return res, err
	}
	defer f.Close()
	res.FileCounts, err = c.Processor.ImportFile(ctx, intake.FileImport{Provider: c.Provider, Parser: c.Parser, Name: path,
		Data: f.in, Progress: f.update})
	f.done()
	return res, err
}

// WriteText says what the import did: the callbacks by kind, the
// transactions and sources they added and those delivered before.
func (r CallbacksResult) WriteText(w io.Writer) error {
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(r.Kinds)) {
		kinds = append(kinds, fmt.Sprintf("%d %s", r.Kinds[k], k))
	}
	_, err := fmt.Fprintf(w, "%s: %d callback(s) (%s): %d new transaction(s), %d new source(s), %d delivered before\n",
		r.File, r.Lines, strings.Join(kinds, ", "), r.NewTxns, r.NewSources, r.Duplicates)
	return err
}
