package books

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"
)

// ErrMismatch reports a copy whose target differs from its source in a
// count, a sum or a checksum of keys.
var ErrMismatch = errors.New("books: the copy differs from its source")

// tally is what is verified of one table on one side: its rows, the sum of
// each amount column and an order-free checksum of its keys.
type tally struct {
	rows    int64
	sums    []decimal.Decimal
	keys    [2]uint64
	scratch []byte
}

func newTally(p tablePlan) *tally { return &tally{sums: make([]decimal.Decimal, len(p.amounts))} }

// add counts one row of p, values in the order of p's columns.
func (t *tally) add(p tablePlan, row []any) error {
	t.rows++
	for i, j := range p.amounts {
		v := row[j]
		if v == nil {
			continue
		}
		s, _ := v.(string)
		d, err := decimal.NewFromString(s)
		if err != nil {
			return fmt.Errorf("column %s: amount %q: %w", p.src[j].Name, s, err)
		}
		t.sums[i] = t.sums[i].Add(d)
	}
	b := t.scratch[:0]
	for _, j := range p.keys {
		b = appendCanonical(b, row[j])
		b = append(b, 0x1f)
	}
	t.scratch = b
	h := sha256.Sum256(b)
	// Sums of each row's hash (mod 2^64, in two lanes) do not depend on
	// the order rows are read in, which differs between engines.
	t.keys[0] += binary.BigEndian.Uint64(h[0:8])
	t.keys[1] += binary.BigEndian.Uint64(h[8:16])
	return nil
}

// appendCanonical writes v in a form that is the same whichever engine
// read it.
func appendCanonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 0)
	case string:
		return append(b, x...)
	case []byte:
		return hex.AppendEncode(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case bool:
		return strconv.AppendBool(b, x)
	case time.Time:
		return x.UTC().AppendFormat(b, time.RFC3339Nano)
	}
	return fmt.Append(b, v)
}

func (t *tally) checksum() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], t.keys[0])
	binary.BigEndian.PutUint64(b[8:16], t.keys[1])
	return hex.EncodeToString(b[:])
}

// Check is one comparison of a copy's source and target.
type Check struct {
	// What is compared: "rows", "sum(<column>)" or "keys" (a checksum of
	// the primary keys).
	What           string
	Source, Target string
}

// OK reports whether source and target agree.
func (c Check) OK() bool { return c.Source == c.Target }

// TableReport is what a copy did to one table and found of it.
type TableReport struct {
	Table  string
	Rows   int64
	Took   time.Duration
	Checks []Check
}

// OK reports whether every check of the table agrees.
func (t TableReport) OK() bool {
	for _, c := range t.Checks {
		if !c.OK() {
			return false
		}
	}
	return true
}

func checks(p tablePlan, src, dst *tally) []Check {
	out := []Check{{What: "rows", Source: strconv.FormatInt(src.rows, 10), Target: strconv.FormatInt(dst.rows, 10)}}
	for i, j := range p.amounts {
		out = append(out, Check{What: "sum(" + p.src[j].Name + ")", Source: src.sums[i].String(), Target: dst.sums[i].String()})
	}
	return append(out, Check{What: "keys", Source: src.checksum(), Target: dst.checksum()})
}

// CopyReport is what a copy did and what its verification found.
type CopyReport struct {
	// From and To are the engines (postgres, sqlite).
	From, To string
	// Version is the ledger migration both databases are at.
	Version int64
	Tables  []TableReport
	Took    time.Duration
}

// OK reports whether every table verified.
func (r *CopyReport) OK() bool {
	for _, t := range r.Tables {
		if !t.OK() {
			return false
		}
	}
	return true
}

// Rows counts the rows copied.
func (r *CopyReport) Rows() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Rows
	}
	return n
}

// WriteText writes the verification as a table, a line per check, and a
// last line that says whether the copy is whole.
func (r *CopyReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TABLE\tCHECK\tSOURCE (%s)\tTARGET (%s)\tRESULT\n", r.From, r.To)
	bad := 0
	for _, t := range r.Tables {
		for i, c := range t.Checks {
			name := t.Table
			if i > 0 {
				name = ""
			}
			verdict := "ok"
			if !c.OK() {
				verdict = "DIFFERS"
				bad++
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, c.What, c.Source, c.Target, verdict)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var err error
	if bad == 0 {
		_, err = fmt.Fprintf(w, "\nverified: %d tables, %d rows, at ledger migration %d: counts, sums and keys agree\n",
			len(r.Tables), r.Rows(), r.Version)
	} else {
		_, err = fmt.Fprintf(w, "\nNOT VERIFIED: %d check(s) above differ; do not use the target\n", bad)
	}
	return err
}
