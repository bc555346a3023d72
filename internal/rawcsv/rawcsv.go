package rawcsv

import (
	"bytes"
	"encoding/csv"
	"io"

	"github.com/reconcilehq/reconcile/internal/bom"
)

// Reader is an encoding/csv reader that also returns the bytes of each
// record. Its options (Comma, FieldsPerRecord, ReuseRecord, ...) are set on
// CSV before the first Read; CSV's FieldPos and InputOffset describe the
// last record. Records must be read through Reader.Read, never CSV.Read.
type Reader struct {
	CSV *csv.Reader
	rec *recorder
}

// NewReader reads CSV from r after a UTF-8 byte-order mark, if any. Input
// offsets and line numbers count from after the mark. A file in UTF-16 or
// UTF-32 is refused with a *bom.EncodingError.
func NewReader(r io.Reader) (*Reader, error) {
	in, err := bom.Strip(r)
	if err != nil {
		return nil, err
	}
	rec := &recorder{r: in}
	return &Reader{CSV: csv.NewReader(rec), rec: rec}, nil
}

// Read returns the next record, as csv.Reader.Read does, and raw, a copy of
// the input it consumed: the record's text with its line ending, after any
// blank lines the CSV reader skipped before it. With a *csv.ParseError raw
// is what the reader consumed before giving up (empty when it made no
// progress). At the end of the input err is io.EOF and raw is nil.
func (r *Reader) Read() (fields []string, raw []byte, err error) {
	start := r.CSV.InputOffset()
	fields, err = r.CSV.Read()
	if err == io.EOF {
		return nil, nil, err
	}
	end := r.CSV.InputOffset()
	raw = r.rec.take(start, end)
	r.rec.discard(end)
	return fields, raw, err
}

// recorder keeps the bytes read through it that the CSV reader has
// consumed but whose record has not been handed out yet, so that a
// record's bytes can be cut out by input offset.
type recorder struct {
	r    io.Reader
	buf  []byte
	base int64 // input offset of buf[0]
}

func (c *recorder) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.buf = append(c.buf, p[:n]...)
	return n, err
}

// take returns a copy of the input between offsets from and to, or nil when
// that range is no longer (or not yet) held.
func (c *recorder) take(from, to int64) []byte {
	lo, hi := from-c.base, to-c.base
	if lo < 0 || hi > int64(len(c.buf)) || lo > hi {
		return nil
	}
	return bytes.Clone(c.buf[lo:hi])
}

// discard drops the input before offset upTo, or some of it: it moves
// what is left to the front only once that is at most what it drops, so
// that each byte is moved about once rather than once per record.
func (c *recorder) discard(upTo int64) {
	n := min(upTo-c.base, int64(len(c.buf)))
	if n <= 0 || n < int64(len(c.buf))-n {
		return
	}
	c.buf = append(c.buf[:0], c.buf[n:]...)
	c.base += n
}
