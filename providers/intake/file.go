package intake

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reconcilehq/reconcile/internal/bom"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// DefaultMaxLineBytes bounds one body in a callbacks file: 1 MiB.
const DefaultMaxLineBytes = 1 << 20

// FileImport is a file of captured callback bodies, one document per line,
// each exactly as the provider posted it.
type FileImport struct {
	Provider string
	Parser   providers.CallbackParser
	// Name is the file's name in errors and in the quarantine.
	Name string
	// Data is read twice: once to check every line, once to deliver them.
	Data io.ReadSeeker
	// MaxLineBytes bounds one body; DefaultMaxLineBytes when zero.
	MaxLineBytes int
	// Progress, when set, is called now and then with the stage ("check",
	// then "import") and the lines read so far in it.
	Progress func(stage string, lines int)
}

// FileCounts says what a file import did.
type FileCounts struct {
	// Lines counts the non-blank lines.
	Lines int
	// Duplicates counts bodies that had been delivered before.
	Duplicates       int
	NewTxns          int
	NewSources       int
	Kinds            map[string]int
	QuarantinedLines int
}

// ImportFile replays a callbacks file with the effect of Deliver, the code
// path of the HTTP endpoints, for each line. It first parses every line; if
// any line is rejected it imports nothing, quarantines every rejected line
// (with file and line) and returns a *ledger.RejectedFileError naming them.
// Otherwise the whole file is delivered in one transaction: each line is
// stored as a callback, the sightings go to the books in batches, outcomes
// are applied in file order. Replaying the same file again changes nothing.
func (p *Processor) ImportFile(ctx context.Context, f FileImport) (FileCounts, error) {
	max := f.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	counts := FileCounts{Kinds: map[string]int{}}
	var problems []*ledger.ParseError
	var raws [][]byte
	// A file in another encoding than UTF-8 is refused as a whole, before
	// any line is read.
	encoding, head, err := checkEncoding(f)
	if err != nil {
		return counts, fmt.Errorf("intake: read %s: %w", f.Name, err)
	}
	if encoding != nil {
		problems, raws = append(problems, encoding), append(raws, head)
	}
	err = eachLine(f.Data, max, func(n int, line []byte, tooLong bool) error {
		if encoding != nil {
			return errStopReading
		}
		counts.Lines++
		if f.Progress != nil && counts.Lines%fileChunkSize == 0 {
			f.Progress("check", counts.Lines)
		}
		var perr *ledger.ParseError
		if tooLong {
			perr = &ledger.ParseError{File: f.Name, Line: n, Field: "body",
				Err: fmt.Errorf("longer than %d bytes", max)}
		} else if ev, err := f.Parser.ParseCallback(line, fmt.Sprintf("%s:%d", f.Name, n), p.now()); err != nil {
			perr = lineError(f.Name, n, err)
		} else {
			// What the books would refuse is refused here, before anything
			// of the file is imported.
			for _, s := range ev.Sightings {
				if err := ledger.ValidateTxn(s.Txn); err != nil {
					perr = lineError(f.Name, n, err)
					break
				}
			}
		}
		if perr != nil {
			problems = append(problems, perr)
			raws = append(raws, bytes.Clone(line))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopReading) {
		return counts, fmt.Errorf("intake: read %s: %w", f.Name, err)
	}
	if len(problems) > 0 {
		if err := p.quarantineLines(ctx, f, problems, raws); err != nil {
			return counts, fmt.Errorf("intake: quarantine lines of %s: %w", f.Name, err)
		}
		counts.QuarantinedLines = len(problems)
		return counts, &ledger.RejectedFileError{File: f.Name, Problems: problems}
	}
	if _, err := f.Data.Seek(0, io.SeekStart); err != nil {
		return counts, fmt.Errorf("intake: rewind %s: %w", f.Name, err)
	}
	err = p.Store.InTx(ctx, func(tx ledger.Tx) error {
		return p.deliverLines(ctx, tx, f, max, &counts, &problems)
	})
	if err != nil {
		counts.Duplicates, counts.NewTxns, counts.NewSources, counts.QuarantinedLines = 0, 0, 0, 0
		return counts, fmt.Errorf("intake: import %s: %w", f.Name, err)
	}
	if len(problems) > 0 {
		return counts, &ledger.RejectedFileError{File: f.Name, Problems: problems}
	}
	return counts, nil
}

// quarantineLines quarantines the rejected lines of f, problems and their
// text raws, in a transaction of their own.
func (p *Processor) quarantineLines(ctx context.Context, f FileImport, problems []*ledger.ParseError, raws [][]byte) error {
	now := p.now()
	return p.Store.InTx(ctx, func(tx ledger.Tx) error {
		for i, pe := range problems {
			if _, err := tx.AddQuarantine(ctx, ledger.QuarantineItem{Source: f.Provider + "_callback", Origin: f.Name,
				Line: pe.Line, Field: pe.Field, Reason: pe.Error(), Raw: raws[i], At: now}); err != nil {
				return err
			}
		}
		return nil
	})
}

// deliverLines delivers every line of f through tx in chunks, counting into
// counts and collecting the lines rejected on delivery into problems (both
// reset first, as the transaction may be retried).
func (p *Processor) deliverLines(ctx context.Context, tx ledger.Tx, f FileImport, max int,
	counts *FileCounts, problems *[]*ledger.ParseError) error {
	counts.Duplicates, counts.NewTxns, counts.NewSources, counts.QuarantinedLines = 0, 0, 0, 0
	counts.Kinds, *problems = map[string]int{}, nil
	c := &fileChunk{p: p, tx: tx, provider: f.Provider, now: p.now(), kinds: map[int64]string{}}
	lines := 0
	err := eachLine(f.Data, max, func(n int, line []byte, _ bool) error {
		if err := c.add(ctx, f, n, bytes.Clone(line), counts, problems); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if lines++; len(c.pending) < fileChunkSize {
			return nil
		}
		if f.Progress != nil {
			f.Progress("import", lines)
		}
		return c.flush(ctx, counts)
	})
	if err != nil {
		return err
	}
	return c.flush(ctx, counts)
}

// errStopReading ends the reading of a file that cannot be read at all.
var errStopReading = errors.New("stop reading")

// maxKeptHead bounds how much of a file refused as a whole is quarantined.
const maxKeptHead = 64 << 10

// checkEncoding refuses a file in UTF-16 or UTF-32 (internal/bom) as a
// whole: its problem, on line 1, and the head of the file to quarantine.
// The file is rewound either way.
func checkEncoding(f FileImport) (*ledger.ParseError, []byte, error) {
	head, err := io.ReadAll(io.LimitReader(f.Data, maxKeptHead))
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.Data.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	if _, err := bom.Detect(head[:min(len(head), bom.Head)]); err != nil {
		return &ledger.ParseError{File: f.Name, Line: 1, Err: err}, head, nil
	}
	return nil, nil, nil
}

// fileChunkSize is how many sightings of a callbacks file are recorded at
// once.
const fileChunkSize = 5000

// fileChunk gathers the callbacks of a file whose sightings are recorded
// together: each line is stored as a callback, then the chunk's sightings
// go to the store in one batch, then each callback's outcomes are applied
// and it is marked processed, in file order.
type fileChunk struct {
	p         *Processor
	tx        ledger.Tx
	provider  string
	now       time.Time
	sightings []ledger.Sighting
	pending   []pendingCallback
	// kinds holds the callbacks stored by this import and not yet marked
	// processed, by id: a line repeated in the file is a delivered
	// duplicate, as over HTTP.
	kinds map[int64]string
}

type pendingCallback struct {
	id       int64
	kind     string
	outcomes []providers.AttemptOutcome
}

func (c *fileChunk) add(ctx context.Context, f FileImport, n int, body []byte, counts *FileCounts, problems *[]*ledger.ParseError) error {
	cb, dup, err := c.tx.StoreCallback(ctx, ledger.Callback{Provider: f.Provider, DedupeKey: DedupeKey(body),
		Body: body, RemoteAddr: "file:" + f.Name, ReceivedAt: c.now})
	if err != nil {
		return err
	}
	if dup {
		counts.Duplicates++
	}
	if kind, ok := c.kinds[cb.ID]; ok {
		cb.ProcessedAt, cb.Kind = c.now, kind
	}
	if dup && !cb.ProcessedAt.IsZero() {
		if cb.Kind != "" {
			counts.Kinds[cb.Kind]++
		}
		return nil
	}
	ev, perr := parse(f.Parser, cb)
	if perr == nil {
		for _, s := range ev.Sightings {
			if perr = ledger.ValidateTxn(s.Txn); perr != nil {
				break
			}
		}
	}
	if perr != nil {
		counts.QuarantinedLines++
		*problems = append(*problems, lineError(f.Name, n, perr))
		return c.p.reject(ctx, c.tx, cb, perr, c.now, origin{f.Name, n})
	}
	if ev.Kind != "" {
		counts.Kinds[ev.Kind]++
	}
	c.sightings = append(c.sightings, sightings(ev.Sightings)...)
	c.pending = append(c.pending, pendingCallback{id: cb.ID, kind: ev.Kind, outcomes: ev.Outcomes})
	c.kinds[cb.ID] = ev.Kind
	return nil
}

func (c *fileChunk) flush(ctx context.Context, counts *FileCounts) error {
	if err := c.p.accountsOfAttempts(ctx, c.tx, c.provider, c.sightings); err != nil {
		return err
	}
	u, err := c.tx.UpsertProviderTxns(ctx, c.sightings)
	if err != nil {
		return err
	}
	counts.NewTxns += u.NewTxns
	counts.NewSources += u.NewSources
	for _, pc := range c.pending {
		for _, o := range pc.outcomes {
			if c.p.Applier == nil {
				break
			}
			if err := c.p.Applier.ApplyOutcome(ctx, c.tx, c.provider, o); err != nil {
				return err
			}
		}
		if err := c.tx.MarkCallbackProcessed(ctx, pc.id, pc.kind, "", c.now); err != nil {
			return err
		}
	}
	clear(c.sightings)
	clear(c.kinds)
	c.sightings, c.pending = c.sightings[:0], c.pending[:0]
	return nil
}

// lineError re-addresses a parser's error to a file line, keeping the field.
func lineError(file string, line int, err error) *ledger.ParseError {
	out := &ledger.ParseError{File: file, Line: line, Err: err}
	var pe *ledger.ParseError
	var fe *ledger.FieldError
	switch {
	case errors.As(err, &pe):
		out.Field, out.Err = pe.Field, pe.Err
	case errors.As(err, &fe):
		out.Field, out.Err = fe.Field, fe.Err
	}
	return out
}

// eachLine calls fn with every non-blank line of r, numbered from 1, without
// its line ending. A line longer than max is passed cut to max bytes with
// tooLong set; reading goes on after it.
func eachLine(r io.Reader, max int, fn func(n int, line []byte, tooLong bool) error) error {
	br := bufio.NewReaderSize(r, 64*1024)
	n := 0
	var buf []byte
	for {
		buf = buf[:0]
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(buf)+len(chunk) > max+2 {
				room := max + 2 - len(buf)
				if room > 0 {
					buf = append(buf, chunk[:room]...)
				}
				tooLong = true
			} else {
				buf = append(buf, chunk...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(buf) == 0 && err == io.EOF {
			return nil
		}
		n++
		line := bytes.TrimRight(buf, "\r\n")
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) > max {
			tooLong = true
			line = line[:max]
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if ferr := fn(n, line, tooLong); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}
