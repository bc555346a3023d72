package csvfile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reconcilehq/reconcile/internal/rawcsv"
	"github.com/reconcilehq/reconcile/ledger"
)

// Reader reads a CSV file with a header row, record by record, and keeps
// each record's line number and raw bytes so that a bad line can be reported
// and quarantined exactly as it was.
type Reader struct {
	file   string
	rd     *rawcsv.Reader
	header *rawcsv.Header
	// headerLine is the line of the header row.
	headerLine int
}

// Record is one data row.
type Record struct {
	// Line is the 1-based line on which the record starts.
	Line int
	// Fields holds the values in header order.
	Fields []string
	// Raw is the record as it appeared in the file, without the line ending.
	Raw []byte
}

// NewReader reads the header row of r. file names the input in errors. The
// header is the first non-blank line (after a UTF-8 byte-order mark; a
// UTF-16 or UTF-32 file is refused); column names are trimmed. A name may
// be empty (a trailing separator) or repeat; only looking such a column up
// is an error (rawcsv.Header's rule).
func NewReader(r io.Reader, file string, comma rune) (*Reader, error) {
	if comma == 0 {
		comma = ','
	}
	cr, err := rawcsv.NewReader(r)
	if err != nil {
		return nil, &ledger.ParseError{File: file, Line: 1, Err: err}
	}
	cr.CSV.Comma = comma
	cr.CSV.FieldsPerRecord = -1
	cr.CSV.ReuseRecord = false
	rd := &Reader{file: file, rd: cr}
	header, _, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &ledger.ParseError{File: file, Line: 1, Err: errors.New("empty file: no header row")}
	}
	if err != nil {
		return nil, &ledger.ParseError{File: file, Line: csvLine(err, 1), Err: fmt.Errorf("header row: %w", csvCause(err))}
	}
	line, _ := cr.CSV.FieldPos(0)
	rd.header = rawcsv.NewHeader(header, nil)
	rd.headerLine = line
	return rd, nil
}

// ReuseRecords lets Next reuse the slice of fields of the record it
// returned last: a caller that keeps no Record.Fields past the next call
// saves a slice per record. The fields' strings are never reused.
func (r *Reader) ReuseRecords() { r.rd.CSV.ReuseRecord = true }

// HeaderLine returns the line the header row is on.
func (r *Reader) HeaderLine() int { return r.headerLine }

// Header returns the column names.
func (r *Reader) Header() []string { return r.header.Cells() }

// ErrNoColumn and ErrDuplicateColumn are the reasons Column fails
// (rawcsv's, shared by every CSV reader).
var (
	ErrNoColumn        = rawcsv.ErrNoColumn
	ErrDuplicateColumn = rawcsv.ErrDuplicateColumn
)

// Column returns the index of the named column: ErrNoColumn when the header
// lacks it, a *rawcsv.DuplicateColumnError (ErrDuplicateColumn) when it is
// there twice (which one is meant cannot be known).
func (r *Reader) Column(name string) (int, error) { return r.header.Column(name) }

// Next returns the next record, or io.EOF after the last one. A record with
// the wrong number of fields or broken quoting is returned together with a
// *ledger.ParseError naming its line; reading can go on after it. Any other
// error means the input failed and reading must stop.
func (r *Reader) Next() (Record, error) {
	for {
		fields, raw, err := r.rd.Read()
		if errors.Is(err, io.EOF) {
			return Record{}, io.EOF
		}
		raw = bytes.Trim(raw, "\r\n")
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				// The input itself failed (not its CSV): nothing more can be read.
				return Record{}, fmt.Errorf("%s: read: %w", r.file, err)
			}
			line := csvLine(err, 0)
			return Record{Line: line, Raw: raw}, &ledger.ParseError{File: r.file, Line: line, Err: csvCause(err)}
		}
		line, _ := r.rd.CSV.FieldPos(0)
		if len(fields) == 1 && strings.TrimSpace(fields[0]) == "" {
			continue
		}
		rec := Record{Line: line, Fields: fields, Raw: raw}
		if width := len(r.header.Cells()); len(fields) != width {
			return rec, &ledger.ParseError{File: r.file, Line: line,
				Err: fmt.Errorf("%d fields, the header has %d", len(fields), width)}
		}
		return rec, nil
	}
}

// Get returns the value of column i, trimmed.
func (rec Record) Get(i int) string {
	if i < 0 || i >= len(rec.Fields) {
		return ""
	}
	return strings.TrimSpace(rec.Fields[i])
}

func csvLine(err error, def int) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if pe.StartLine > 0 {
			return pe.StartLine
		}
		return pe.Line
	}
	return def
}

func csvCause(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("not valid CSV: %w", pe.Err)
	}
	return err
}
