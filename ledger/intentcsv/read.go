package intentcsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reconcilehq/reconcile/internal/bom"
	"github.com/reconcilehq/reconcile/internal/rawcsv"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// Columns of the intents CSV.
var (
	Required = []string{"key", "provider", "amount", "currency", "status", "created_at"}
	Optional = []string{"reference", "provider_refs", "customer", "updated_at", "kind", "refund_of", "due_at", "tolerance", "account"}
)

// Kinds says, per provider, what a row that names no kind is: a row with
// provider references is a charge (it names the request that charged it);
// one without takes its provider's kind here (an M-Pesa paybill invoice is
// an expected payment), and a charge when its provider is not listed.
type Kinds map[string]ledger.IntentKind

func (k Kinds) of(provider string, refs bool) ledger.IntentKind {
	if d, ok := k[provider]; ok && !refs {
		return d
	}
	return ledger.IntentCharge
}

// Row is one accepted line.
type Row struct {
	Line         int
	Intent       ledger.NewIntent
	ProviderRefs []string
	Raw          []byte
}

// Read parses r, calling emit for each good row and reject for each bad one
// (with the row re-encoded as CSV); it keeps going after a bad row. It
// returns an error when the file as a whole is unusable: empty, not CSV, or
// a header with unknown, duplicate or missing columns.
func Read(r io.Reader, file string, kinds Kinds, emit func(Row) error, reject func(*ledger.ParseError, []byte) error) error {
	in, err := bom.Strip(r)
	if err != nil {
		return &ledger.ParseError{File: file, Line: 1, Err: err}
	}
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return &ledger.ParseError{File: file, Line: 1, Err: errors.New("empty file: want a header row")}
	}
	if err != nil {
		return &ledger.ParseError{File: file, Line: 1, Err: err}
	}
	enc := newEncoder()
	cols, field, err := columns(header)
	if err != nil {
		perr := &ledger.ParseError{File: file, Line: 1, Field: field, Err: err}
		if rerr := reject(perr, enc.encode(header)); rerr != nil {
			return rerr
		}
		return perr
	}
	at := positions(cols)
	var pe *csv.ParseError // one for the file: As needs its address
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && errors.As(err, &pe) {
			if rerr := reject(&ledger.ParseError{File: file, Line: pe.StartLine, Err: pe.Err}, nil); rerr != nil {
				return rerr
			}
			if errors.Is(pe.Err, csv.ErrQuote) || errors.Is(pe.Err, csv.ErrBareQuote) {
				return nil // the rest of the file cannot be split into rows reliably
			}
			continue
		}
		if err != nil {
			return &ledger.ParseError{File: file, Err: err}
		}
		line, _ := cr.FieldPos(0)
		raw := enc.encode(rec)
		if isBlank(rec) {
			continue
		}
		row, field, err := parseRow(at, len(cols), rec, kinds)
		if err != nil {
			if rerr := reject(&ledger.ParseError{File: file, Line: line, Field: field, Err: err}, raw); rerr != nil {
				return rerr
			}
			continue
		}
		row.Line, row.Raw = line, raw
		if err := emit(row); err != nil {
			return err
		}
	}
}

// columns maps column names to positions; on error it names the column.
// Names are case-insensitive; every column must be known, and named once
// (rawcsv.Header's rule).
func columns(header []string) (map[string]int, string, error) {
	h := rawcsv.NewHeader(header, strings.ToLower)
	for _, c := range h.Cells() {
		if name := strings.ToLower(c); !slices.Contains(Required, name) && !slices.Contains(Optional, name) {
			return nil, c, fmt.Errorf("unknown column (known: %s)", strings.Join(append(slices.Clone(Required), Optional...), ", "))
		}
	}
	cols := make(map[string]int, len(header))
	for _, name := range columnNames {
		i, err := h.Column(name)
		switch {
		case errors.Is(err, rawcsv.ErrDuplicateColumn):
			return nil, name, err
		case err == nil:
			cols[name] = i
		}
	}
	for _, r := range Required {
		if _, ok := cols[r]; !ok {
			return nil, r, errors.New("required column missing")
		}
	}
	return cols, "", nil
}

// column is a column a row is read from, by its position in cols.
type column int

const (
	colKey column = iota
	colProvider
	colAmount
	colCurrency
	colStatus
	colCreatedAt
	colReference
	colProviderRefs
	colCustomer
	colUpdatedAt
	colKind
	colRefundOf
	colDueAt
	colTolerance
	colAccount
	numColumns
)

// columnNames are the names of the columns, in column order.
var columnNames = [numColumns]string{"key", "provider", "amount", "currency", "status", "created_at", "reference",
	"provider_refs", "customer", "updated_at", "kind", "refund_of", "due_at", "tolerance", "account"}

// positions is where each column is in a row, -1 when the header lacks it:
// looked up once rather than by name on every row.
func positions(cols map[string]int) [numColumns]int {
	var at [numColumns]int
	for c, name := range columnNames {
		if i, ok := cols[name]; ok {
			at[c] = i
		} else {
			at[c] = -1
		}
	}
	return at
}

// parseRow reads rec, a row of a file with width columns at positions at.
func parseRow(at [numColumns]int, width int, rec []string, kinds Kinds) (Row, string, error) {
	get := func(c column) string {
		i := at[c]
		if i < 0 || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	if len(rec) != width {
		return Row{}, "", fmt.Errorf("%d fields, header has %d", len(rec), width)
	}
	var n ledger.NewIntent
	n.Key, n.Provider, n.Reference, n.Customer = get(colKey), get(colProvider), get(colReference), get(colCustomer)
	kind, err := ledger.ParseIntentKind(get(colKind))
	if err != nil {
		return Row{}, "kind", err
	}
	refs := splitRefs(get(colProviderRefs))
	if get(colKind) == "" {
		kind = kinds.of(strings.ToLower(n.Provider), len(refs) > 0)
	}
	n.Kind, n.RefundOf = kind, get(colRefundOf)
	if a := get(colAccount); !strings.EqualFold(a, ledger.DefaultAccount) {
		n.Account = a
	}
	cur, err := money.NormalizeCurrency(get(colCurrency))
	if err != nil {
		return Row{}, "currency", err
	}
	if get(colAmount) == "" {
		return Row{}, "amount", errors.New("is empty")
	}
	if n.Amount, err = money.Parse(get(colAmount), cur); err != nil {
		return Row{}, "amount", err
	}
	if n.State, err = ledger.ParseState(get(colStatus)); err != nil {
		return Row{}, "status", err
	}
	if n.CreatedAt, err = parseTime(get(colCreatedAt)); err != nil {
		return Row{}, "created_at", err
	}
	if s := get(colUpdatedAt); s != "" {
		if n.UpdatedAt, err = parseTime(s); err != nil {
			return Row{}, "updated_at", err
		}
	}
	if s := get(colDueAt); s != "" {
		if n.DueAt, err = parseTime(s); err != nil {
			return Row{}, "due_at", err
		}
	}
	if s := get(colTolerance); s != "" {
		if n.Tolerance, err = money.Parse(s, cur); err != nil {
			return Row{}, "tolerance", err
		}
	}
	if n, err = n.Normalize(); err == nil {
		// What the intents API and the charge service refuse.
		err = providers.CheckIntentCurrency(n.IntentParams)
	}
	if err != nil {
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			return Row{}, fe.Field, fe.Err
		}
		return Row{}, "", err
	}
	return Row{Intent: n, ProviderRefs: refs}, "", nil
}

// splitRefs splits provider_refs at semicolons, trimmed, without empty
// or repeated refs.
func splitRefs(s string) []string {
	var refs []string
	for rest, more := s, true; more; {
		var r string
		r, rest, more = strings.Cut(rest, ";")
		if r = strings.TrimSpace(r); r != "" && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	return refs
}

// parseTime accepts RFC 3339 with a zone; a time without a zone is refused
// rather than guessed.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("is empty")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want RFC 3339 with a zone, e.g. 2026-11-02T09:30:00Z or 2026-11-02T12:30:00+03:00", s)
	}
	if y := t.UTC().Year(); y < 1970 || y > 9999 {
		return time.Time{}, fmt.Errorf("%q: year %d is out of range", s, y)
	}
	return t.UTC(), nil
}

// encoder re-encodes records as CSV lines, reusing one writer and buffer.
type encoder struct {
	b bytes.Buffer
	w *csv.Writer
}

func newEncoder() *encoder {
	e := &encoder{}
	e.w = csv.NewWriter(&e.b)
	return e
}

// encode returns rec as one CSV line, in a slice of its own.
func (e *encoder) encode(rec []string) []byte {
	if plainFields(rec) {
		// What the writer writes, without it: the fields and commas.
		n := len(rec)
		for _, f := range rec {
			n += len(f)
		}
		b := make([]byte, 0, n)
		for i, f := range rec {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, f...)
		}
		return b
	}
	e.b.Reset()
	_ = e.w.Write(rec) // writing to a bytes.Buffer cannot fail
	e.w.Flush()
	return bytes.Clone(bytes.TrimRight(e.b.Bytes(), "\n"))
}

// quoted marks the bytes that make the CSV writer quote a field.
var quoted = [256]bool{',': true, '"': true, '\r': true, '\n': true}

// plainFields says whether the CSV writer writes every field of rec as it
// is, unquoted: no field holds a comma, a quote or a line break, begins
// with a space, or is \. (encoding/csv's Writer.fieldNeedsQuotes).
func plainFields(rec []string) bool {
	for _, f := range rec {
		if f == "" {
			continue
		}
		if f == `\.` {
			return false
		}
		for i := 0; i < len(f); i++ {
			if quoted[f[i]] {
				return false
			}
		}
		if r, _ := utf8.DecodeRuneInString(f); unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

func isBlank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}
