package bank

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// sniffLen is how much of a file Sniff looks at.
const sniffLen = 4096

// maxLine bounds one line of an MT940 or BAI2 file (their standards allow
// 65 and 80 characters): a file whose line is longer is refused.
const maxLine = 64 << 10

// maxEntryBytes bounds one entry as the file writes it (a camt <Ntry>
// element, an MT940 field, a BAI2 record with its continuations), so that
// one hostile entry cannot take the memory streaming saves. Real entries
// are a few KiB.
const maxEntryBytes = 1 << 20

var (
	errUTF16 = errors.New("the file is UTF-16: only UTF-8 is read (convert it, e.g. with iconv -f UTF-16 -t UTF-8)")
	bomUTF8  = []byte{0xEF, 0xBB, 0xBF}
)

func newBufReader(r io.Reader) *bufio.Reader {
	if br, ok := r.(*bufio.Reader); ok && br.Size() >= sniffLen {
		return br
	}
	return bufio.NewReaderSize(r, 64<<10)
}

// checkEncoding refuses UTF-16 (by its byte-order mark, or the zero bytes
// of ASCII text in it) and skips a UTF-8 byte-order mark.
func checkEncoding(br *bufio.Reader) error {
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return errUTF16
	case len(head) >= 2 && (head[0] == 0 || head[1] == 0):
		return errUTF16
	case bytes.HasPrefix(head, bomUTF8):
		_, _ = br.Discard(len(bomUTF8))
	}
	return nil
}

// Sniff names the format of a statement file from its first bytes (a few
// KiB are enough): camt by the namespace of its XML, MT940 by its envelope
// or first field, BAI2 by its 01 record. It refuses UTF-16.
func Sniff(head []byte) (Format, error) {
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) ||
		(len(head) >= 2 && (head[0] == 0 || head[1] == 0)) {
		return "", errUTF16
	}
	head = bytes.TrimPrefix(head, bomUTF8)
	head = bytes.TrimLeft(head, " \t\r\n")
	switch {
	case bytes.HasPrefix(head, []byte("<")):
		switch {
		case bytes.Contains(head, []byte("camt.053.")):
			return FormatCamt053, nil
		case bytes.Contains(head, []byte("camt.054.")):
			return FormatCamt054, nil
		}
		return "", errors.New("XML without a camt.053 or camt.054 namespace in its first bytes")
	case bytes.HasPrefix(head, []byte("{1:")), bytes.HasPrefix(head, []byte("{4:")), bytes.HasPrefix(head, []byte(":20:")):
		return FormatMT940, nil
	case bytes.HasPrefix(head, []byte("01,")):
		return FormatBAI2, nil
	}
	return "", errors.New("not a camt.053, camt.054, MT940 or BAI2 file")
}

// lineError is a line a text format cannot take: too long, or not in
// its character set.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return e.err.Error() }

// lineErr turns a lineError into a ParseError of file, and any other
// error of the reader into a read error.
func lineErr(file string, err error) error {
	var le *lineError
	if errors.As(err, &le) {
		return &ledger.ParseError{File: file, Line: le.line, Field: "line", Err: le.err}
	}
	return fmt.Errorf("bank: read %s: %w", file, err)
}

// lineReader reads the lines of a text format with their numbers, without
// their line ends (LF or CRLF).
type lineReader struct {
	br      *bufio.Reader
	n       int
	long    []byte
	charset Charset
	latin   []byte
}

// next returns the next line, valid until the following call, or io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.long = l.long[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(l.long)+len(frag) > maxLine {
				return nil, &lineError{l.n + 1, fmt.Errorf("longer than %d bytes", maxLine)}
			}
			l.long = append(l.long, frag...)
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if err == io.EOF && len(frag) == 0 && len(l.long) == 0 {
			return nil, io.EOF
		}
		line := frag
		if len(l.long) > 0 {
			l.long = append(l.long, frag...)
			line = l.long
			if len(line) > maxLine {
				return nil, &lineError{l.n + 1, fmt.Errorf("longer than %d bytes", maxLine)}
			}
		}
		l.n++
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		return l.decode(line)
	}
}

// decode checks a line's character set, or converts it from Latin-1.
func (l *lineReader) decode(line []byte) ([]byte, error) {
	ascii := true
	for _, c := range line {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return line, nil
	}
	if l.charset == Latin1 {
		l.latin = l.latin[:0]
		for _, c := range line {
			l.latin = utf8.AppendRune(l.latin, rune(c))
		}
		return l.latin, nil
	}
	if !utf8.Valid(line) {
		return nil, &lineError{l.n, errors.New("not UTF-8 (read a file in ISO 8859-1 with the Latin-1 charset)")}
	}
	return line, nil
}

// makeDate returns the date, if it exists and lies within the times the
// books accept.
func makeDate(y, m, d int) (Date, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return Date{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || t.Before(ledger.EarliestTime) || !t.Before(ledger.LatestTime) {
		return Date{}, false
	}
	return Date{Year: y, Month: time.Month(m), Day: d}, true
}

func digits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// parseYYMMDD reads a six-digit date; years 00-99 are 2000-2099.
func parseYYMMDD(s string) (Date, error) {
	if len(s) != 6 {
		return Date{}, fmt.Errorf("date %q: want YYMMDD", clip(s))
	}
	y, ok1 := digits(s[0:2])
	m, ok2 := digits(s[2:4])
	d, ok3 := digits(s[4:6])
	if !ok1 || !ok2 || !ok3 {
		return Date{}, fmt.Errorf("date %q: want YYMMDD", clip(s))
	}
	date, ok := makeDate(2000+y, m, d)
	if !ok {
		return Date{}, fmt.Errorf("date %q does not exist", s)
	}
	return date, nil
}

// parseISODate reads an xs:date, YYYY-MM-DD with an optional zone, which a
// calendar day does not need and is ignored.
func parseISODate(s string) (Date, error) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, fmt.Errorf("date %q: want YYYY-MM-DD", clip(s))
	}
	if rest := s[10:]; rest != "" && rest != "Z" && !isOffset(rest) {
		return Date{}, fmt.Errorf("date %q: want YYYY-MM-DD", clip(s))
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 {
		return Date{}, fmt.Errorf("date %q: want YYYY-MM-DD", clip(s))
	}
	date, ok := makeDate(y, m, d)
	if !ok {
		return Date{}, fmt.Errorf("date %q does not exist or lies outside %d-%d", s,
			ledger.EarliestTime.Year(), ledger.LatestTime.Year()-1)
	}
	return date, nil
}

func isOffset(s string) bool {
	return len(s) == 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':' &&
		isDigits(s[1:3]) && isDigits(s[4:6])
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseISODateTime reads an xs:dateTime: with an offset or Z it is that
// instant, without one it is read in loc. The result is in UTC.
func parseISODateTime(s string, loc *time.Location) (time.Time, error) {
	var (
		t   time.Time
		err error
	)
	if hasZone(s) {
		t, err = time.Parse("2006-01-02T15:04:05.999999999Z07:00", s)
	} else {
		t, err = time.ParseInLocation("2006-01-02T15:04:05.999999999", s, loc)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("date-time %q: want YYYY-MM-DDThh:mm:ss with an optional fraction and offset", clip(s))
	}
	if t.Before(ledger.EarliestTime) || !t.Before(ledger.LatestTime) {
		return time.Time{}, fmt.Errorf("date-time %q lies outside %d-%d", s, ledger.EarliestTime.Year(), ledger.LatestTime.Year()-1)
	}
	return t.UTC(), nil
}

func hasZone(s string) bool {
	if strings.HasSuffix(s, "Z") {
		return true
	}
	return len(s) > 6 && isOffset(s[len(s)-6:])
}

// parseMajor reads an unsigned decimal amount in major units whose decimal
// separator is sep ('.' in camt, ',' in MT940): digits, at most one
// separator, at most the currency's decimals. It never goes through a
// float.
func parseMajor(s string, sep byte, currency string) (money.Amount, error) {
	if s == "" {
		return money.Amount{}, errors.New("is empty")
	}
	if len(s) > money.MaxTextLen {
		return money.Amount{}, fmt.Errorf("%q: %w", clip(s), money.ErrTooLong)
	}
	seen, n := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			n++
		case c == sep && !seen:
			seen = true
		default:
			return money.Amount{}, fmt.Errorf("amount %q: want digits with %q before the decimals", clip(s), sep)
		}
	}
	if n == 0 {
		return money.Amount{}, fmt.Errorf("amount %q has no digits", clip(s))
	}
	text := s
	if sep != '.' && seen {
		text = strings.Replace(s, string(sep), ".", 1)
	}
	return money.Parse(strings.TrimSuffix(text, "."), currency)
}

// fromMinor reads integer minor units (BAI2) of currency.
func fromMinor(minor int64, currency string) (money.Amount, error) {
	exp, err := money.Exponent(currency)
	if err != nil {
		return money.Amount{}, err
	}
	return money.Amount{Value: decimal.New(minor, -exp), Currency: currency}, nil
}

// clip shortens a value for an error message.
func clip(s string) string {
	const max = 48
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// checkEntry holds every entry to what the package promises before it is
// handed on: a known currency, an amount not negative at its currency's
// scale, a direction, a status, a booking day, and texts within bounds.
// It names the field at fault.
func checkEntry(e *Entry) (string, error) {
	exp, err := money.Exponent(e.Amount.Currency)
	if err != nil {
		return "amount", err
	}
	switch {
	case e.Amount.Value.IsNegative():
		return "amount", errors.New("is negative")
	case !e.Amount.Value.Equal(e.Amount.Value.Truncate(exp)):
		return "amount", money.ErrTooPrecise
	case e.Direction != Credit && e.Direction != Debit:
		return "direction", errors.New("is neither credit nor debit")
	case e.Status == "":
		return "status", errors.New("is empty")
	case e.BookingDate.IsZero():
		return "booking date", errors.New("is missing")
	}
	for _, f := range []struct{ name, v string }{{"entry reference", e.EntryRef}, {"bank reference", e.BankRef},
		{"customer reference", e.CustomerRef}, {"creditor reference", e.CreditorRef},
		{"counterparty name", e.Counterparty.Name}, {"counterparty account", e.Counterparty.Account.String()}} {
		if len(f.v) > ledger.MaxIDLen {
			return f.name, fmt.Errorf("is %d bytes long, more than %d", len(f.v), ledger.MaxIDLen)
		}
	}
	if len(e.Text) > MaxTextLen {
		return "text", fmt.Errorf("is %d bytes long, more than %d", len(e.Text), MaxTextLen)
	}
	if len(e.Info) > MaxTextLen {
		return "info", fmt.Errorf("is %d bytes long, more than %d", len(e.Info), MaxTextLen)
	}
	return "", nil
}

// joinWrapped joins the pieces of a text that a format cut to a width: a
// piece that fills the width and does not end in a space was cut by the
// bank mid-text, and the next one continues it; any other piece ended where
// its writer ended it (or was padded with spaces), so a space separates it
// from the next. Pieces are trimmed of trailing spaces.
func joinWrapped(pieces []string, width int) string {
	var b strings.Builder
	prevFull := false
	for _, p := range pieces {
		full := utf8.RuneCountInString(p) >= width && !strings.HasSuffix(p, " ")
		p = strings.TrimRight(p, " ")
		if p == "" {
			prevFull = false
			continue
		}
		if b.Len() > 0 && !prevFull {
			b.WriteByte(' ')
			p = strings.TrimLeft(p, " ")
		}
		b.WriteString(p)
		prevFull = full
	}
	return b.String()
}

// isIBAN reports whether s is an IBAN: a country code, two check digits and
// up to 30 letters and digits whose ISO 7064 mod 97 check holds.
func isIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i < 2 && (c < 'A' || c > 'Z'):
			return false
		case i >= 2 && i < 4 && (c < '0' || c > '9'):
			return false
		case !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'):
			return false
		}
	}
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[(i+4)%len(s)]
		if c >= 'A' {
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	return rem == 1
}

// isBIC reports whether s has the form of a BIC: four letters of the bank,
// two of the country, two letters or digits of the location, and an
// optional branch of three.
func isBIC(s string) bool {
	if len(s) != 8 && len(s) != 11 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'A' && c <= 'Z'
		if i < 6 && !letter || i >= 6 && !letter && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
