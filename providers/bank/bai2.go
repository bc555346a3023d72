package bank

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// baiDefaultCurrency is the currency of a group whose 02 record leaves it
// out, as the standard says.
const baiDefaultCurrency = "USD"

// BAI2 type codes with a meaning of their own here.
const (
	baiOpeningLedger   = "010"
	baiClosingLedger   = "015"
	baiClosingAvail    = "045"
	baiNonMonetaryCode = "890"
)

// ParseBAI2 reads a BAI2 (Cash Management Balance Reporting, version 2)
// file record by record: one logical record (a record and its 88
// continuations) is held in memory at a time.
//
// Each account (an 03 record to its 49 trailer) is a Statement: its
// opening (010) and closing (015) ledger balances, when given, are checked
// against its entries. Each 16 record is an Entry, credit or debit by its
// type code. The control totals and record counts of the 49, 98 and 99
// trailers are checked against the records they close, and a mismatch is
// rejected with a *ControlError naming the trailer. A bad record is
// rejected with its lines and reading goes on; a file without its 01
// header or 99 trailer, of another version, or of a test or deletion group
// is refused as a whole.
func ParseBAI2(r io.Reader, file string, opt Options, h Handler) error {
	br := newBufReader(r)
	if err := checkEncoding(br); err != nil {
		return &ledger.ParseError{File: file, Line: 1, Field: "encoding", Err: err}
	}
	p := &bai2Parser{file: file, opt: opt, h: &h, lr: &lineReader{br: br, charset: opt.Charset}}
	return p.run()
}

// baiRecord is a logical record: a record and its 88 continuations.
type baiRecord struct {
	code string
	line int
	// segs are the physical records' contents after their code and comma,
	// trailing spaces trimmed.
	segs []string
	raw  []byte
	phys int64
	// tooLong is set when the continuations run past maxEntryBytes.
	tooLong bool
}

type baiGroup struct {
	line     int
	n        int
	currency string
	asOf     Date
	records  int64
	sum      int64
	accounts int64
}

type baiAccount struct {
	st       Statement
	records  int64
	sum      int64
	index    int
	raw03    []byte
	line03   int
	overflow bool
}

type bai2Parser struct {
	file string
	opt  Options
	h    *Handler
	lr   *lineReader

	rec     baiRecord
	has     bool
	header  bool
	trailer bool
	fileID  string
	created time.Time
	records int64
	sum     int64
	groups  int64
	nGroups int
	group   *baiGroup
	acct    *baiAccount
}

func (p *bai2Parser) run() error {
	for {
		line, err := p.lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return lineErr(p.file, err)
		}
		t := strings.TrimRight(string(line), " ")
		if t == "" {
			continue
		}
		if t == "88" || strings.HasPrefix(t, "88,") {
			if !p.has {
				if err := p.rejectRaw(p.lr.n, "88", errors.New("a continuation with no record before it"), []byte(t)); err != nil {
					return err
				}
				continue
			}
			p.rec.phys++
			if len(p.rec.raw)+len(t) > maxEntryBytes {
				p.rec.tooLong = true
				continue
			}
			p.rec.segs = append(p.rec.segs, strings.TrimPrefix(t[2:], ","))
			p.rec.raw = append(append(p.rec.raw, '\n'), t...)
			continue
		}
		if p.has {
			if err := p.record(&p.rec); err != nil {
				return err
			}
		}
		if len(t) < 3 || !isDigits(t[:2]) || t[2] != ',' && t[2] != '/' {
			p.has = false
			if !p.header {
				return &ledger.ParseError{File: p.file, Line: p.lr.n, Field: "01", Err: errors.New("no 01 file header: not a BAI2 file")}
			}
			if err := p.rejectRaw(p.lr.n, "record", errors.New("not a BAI2 record (two digits and a comma)"), []byte(t)); err != nil {
				return err
			}
			continue
		}
		p.has = true
		p.rec.code, p.rec.line, p.rec.phys, p.rec.tooLong = t[:2], p.lr.n, 1, false
		p.rec.segs = append(p.rec.segs[:0], t[3:])
		p.rec.raw = append(p.rec.raw[:0], t...)
	}
	if p.has {
		if err := p.record(&p.rec); err != nil {
			return err
		}
	}
	if !p.header {
		return &ledger.ParseError{File: p.file, Line: 1, Field: "01", Err: errors.New("no 01 file header: not a BAI2 file")}
	}
	if !p.trailer {
		if err := p.closeGroup(p.lr.n); err != nil {
			return err
		}
		return &ledger.ParseError{File: p.file, Line: p.lr.n, Field: "99", Err: errors.New("the file ends without its 99 file trailer (truncated?)")}
	}
	return nil
}

// rejectRaw rejects a bad record or line.
func (p *bai2Parser) rejectRaw(line int, field string, err error, raw []byte) error {
	if p.acct != nil {
		p.acct.st.Totals.Rejected++
	}
	return p.h.reject(&ledger.ParseError{File: p.file, Line: line, Field: field, Err: err}, raw)
}

func (p *bai2Parser) reject(rec *baiRecord, field string, err error) error {
	return p.rejectRaw(rec.line, rec.code+" "+field, err, copyBytes(rec.raw))
}

func copyBytes(b []byte) []byte { return append([]byte(nil), b...) }

// fields walks the fields of a logical record. A comma ends a field; a
// slash ends the physical record, and the fields go on in its 88
// continuation, if any.
type fields struct {
	segs    []string
	si, pos int
	// junk is set when a physical record goes on after the slash that
	// ends it.
	junk bool
}

func (c *fields) next() (string, bool) {
	if c.si < len(c.segs) {
		s := c.segs[c.si]
		rest := s[c.pos:]
		k := strings.IndexAny(rest, ",/")
		if k < 0 {
			c.si, c.pos = c.si+1, 0
			return strings.TrimSpace(rest), true
		}
		if rest[k] == ',' {
			c.pos += k + 1
		} else {
			if strings.TrimSpace(rest[k+1:]) != "" {
				c.junk = true
			}
			c.si, c.pos = c.si+1, 0
		}
		return strings.TrimSpace(rest[:k]), true
	}
	return "", false
}

// field returns the next field, "" when the record has no more.
func (c *fields) field() string {
	f, _ := c.next()
	return f
}

// text returns the rest of the record as the text of a 16 record: it runs
// to the end of the physical record, slashes included, and on through the
// 88 continuations, which a space joins. A slash that ends a physical
// record is its delimiter, not text.
func (c *fields) text() string {
	var b strings.Builder
	for ; c.si < len(c.segs); c.si, c.pos = c.si+1, 0 {
		piece := strings.TrimRight(c.segs[c.si][c.pos:], " ")
		piece = strings.TrimSpace(strings.TrimSuffix(piece, "/"))
		if piece == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(piece)
	}
	return b.String()
}

// minor reads an amount in minor units: digits, with a sign when signed
// allows one. An empty amount is zero.
func minor(s string, signed bool) (int64, error) {
	if s == "" {
		return 0, nil
	}
	neg := false
	if signed && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if !isDigits(s) {
		return 0, fmt.Errorf("amount %q: want digits (minor units, no decimal point)", clip(s))
	}
	if len(s) > 18 {
		return 0, fmt.Errorf("amount %q: more than 18 digits", clip(s))
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", clip(s), err)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// add adds b to *a, reporting an overflow.
func add(a *int64, b int64) bool {
	if b > 0 && *a > math.MaxInt64-b || b < 0 && *a < math.MinInt64-b {
		return false
	}
	*a += b
	return true
}

// baiTime reads HHMM; 2400 and 9999 are the end of the day.
func baiTime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if s == "9999" || s == "2400" {
		return 24 * time.Hour, nil
	}
	if len(s) != 4 || !isDigits(s) {
		return 0, fmt.Errorf("time %q: want HHMM", clip(s))
	}
	h, _ := digits(s[:2])
	m, _ := digits(s[2:])
	if h > 23 || m > 59 {
		return 0, fmt.Errorf("time %q does not exist", s)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}

func (p *bai2Parser) record(rec *baiRecord) error {
	if p.trailer {
		return p.reject(rec, "record", errors.New("a record after the 99 file trailer"))
	}
	if !p.header && rec.code != "01" {
		return &ledger.ParseError{File: p.file, Line: rec.line, Field: "01", Err: errors.New("no 01 file header: not a BAI2 file")}
	}
	p.records += rec.phys
	if rec.code != "01" && rec.code != "99" && p.group != nil {
		p.group.records += rec.phys
	}
	if (rec.code == "16" || rec.code == "49") && p.acct != nil {
		p.acct.records += rec.phys
	}
	if rec.tooLong {
		if p.acct != nil && rec.code == "16" {
			p.acct.index++
		}
		return p.reject(rec, "record", fmt.Errorf("longer than %d bytes with its continuations", maxEntryBytes))
	}
	c := &fields{segs: rec.segs}
	if err := p.dispatch(rec, c); err != nil {
		return err
	}
	if c.junk && rec.code != "16" {
		if rec.code == "01" {
			return p.fileErr(rec, "record", errors.New("more after the 01 record on its line: files of fixed-length records without line ends are not read"))
		}
		return p.reject(rec, "record", errors.New("more after the slash that ends the record"))
	}
	return nil
}

func (p *bai2Parser) dispatch(rec *baiRecord, c *fields) error {
	switch rec.code {
	case "01":
		return p.fileHeader(rec, c)
	case "02":
		return p.groupHeader(rec, c)
	case "03":
		return p.account(rec, c)
	case "16":
		return p.detail(rec, c)
	case "49":
		return p.accountTrailer(rec, c)
	case "98":
		return p.groupTrailer(rec, c)
	case "99":
		return p.fileTrailer(rec, c)
	}
	return p.reject(rec, "record", fmt.Errorf("record type %s: want 01, 02, 03, 16, 49, 88, 98 or 99", rec.code))
}

func (p *bai2Parser) fileErr(rec *baiRecord, field string, err error) error {
	return &ledger.ParseError{File: p.file, Line: rec.line, Field: rec.code + " " + field, Err: err}
}

func (p *bai2Parser) fileHeader(rec *baiRecord, c *fields) error {
	if p.header {
		return p.reject(rec, "record", errors.New("a second 01 file header"))
	}
	p.header = true
	c.field() // sender
	c.field() // receiver
	date, tm := c.field(), c.field()
	p.fileID = c.field()
	c.field() // physical record length
	c.field() // block size
	if v := c.field(); v != "2" {
		return p.fileErr(rec, "version", fmt.Errorf("version %q: only BAI version 2 is read", clip(v)))
	}
	d, err := parseYYMMDD(date)
	if err != nil {
		return p.reject(rec, "creation date", err)
	}
	at, err := baiTime(tm)
	if err != nil {
		return p.reject(rec, "creation time", err)
	}
	p.created = d.Midnight(p.opt.zone()).Add(at).UTC()
	return nil
}

func (p *bai2Parser) groupHeader(rec *baiRecord, c *fields) error {
	if err := p.closeGroup(rec.line); err != nil {
		return err
	}
	p.nGroups++
	g := &baiGroup{line: rec.line, n: p.nGroups, records: rec.phys}
	p.group = g
	c.field() // ultimate receiver
	c.field() // originator
	switch s := c.field(); s {
	case "", "0", "1", "3":
	case "2":
		return p.fileErr(rec, "group status", errors.New("a deletion group (status 2) takes back data sent before: not read"))
	case "4":
		return p.fileErr(rec, "group status", errors.New("a test-only group (status 4): not read"))
	default:
		return p.reject(rec, "group status", fmt.Errorf("%q: want 1 (update), 2, 3 or 4", clip(s)))
	}
	d, err := parseYYMMDD(c.field())
	if err != nil {
		return p.reject(rec, "as-of date", err)
	}
	g.asOf = d
	if _, err := baiTime(c.field()); err != nil {
		return p.reject(rec, "as-of time", err)
	}
	g.currency = baiDefaultCurrency
	if s := c.field(); s != "" {
		cur, err := money.NormalizeCurrency(s)
		if err != nil {
			return p.reject(rec, "currency", err)
		}
		g.currency = cur
	}
	return nil
}

// closeGroup ends a group that has no 98 trailer, and its account.
func (p *bai2Parser) closeGroup(line int) error {
	if err := p.closeAccount(line); err != nil {
		return err
	}
	if p.group == nil {
		return nil
	}
	g := p.group
	p.group = nil
	return p.rejectRaw(line, "98", fmt.Errorf("the group of line %d has no 98 group trailer", g.line), nil)
}

// closeAccount ends an account that has no 49 trailer.
func (p *bai2Parser) closeAccount(line int) error {
	a := p.acct
	if a == nil {
		return nil
	}
	if err := p.rejectRaw(line, "49", fmt.Errorf("the account of line %d has no 49 account trailer", a.line03), nil); err != nil {
		return err
	}
	p.acct = nil
	return p.h.end(&a.st)
}

func (p *bai2Parser) account(rec *baiRecord, c *fields) error {
	if err := p.closeAccount(rec.line); err != nil {
		return err
	}
	if p.group == nil {
		return p.reject(rec, "record", errors.New("an account outside any group (no 02 record before it)"))
	}
	g := p.group
	a := &baiAccount{records: rec.phys, raw03: copyBytes(rec.raw), line03: rec.line}
	p.acct = a
	st := &a.st
	*st = Statement{File: p.file, Format: FormatBAI2, Version: "2", Line: rec.line, MessageID: p.fileID, ID: p.fileID,
		Sequence: fmt.Sprintf("%d/%d", g.n, g.accounts+1), Created: p.created, From: g.asOf, To: g.asOf,
		Currency: g.currency, Zone: p.opt.zone()}
	st.Account.Number = c.field()
	if st.Account.Number == "" {
		return p.reject(rec, "account number", errors.New("is empty"))
	}
	if s := c.field(); s != "" {
		cur, err := money.NormalizeCurrency(s)
		if err != nil {
			return p.reject(rec, "currency", err)
		}
		st.Currency = cur
	}
	for {
		tc, ok := c.next()
		if !ok {
			break
		}
		amt, cnt, ft := c.field(), c.field(), c.field()
		if tc == "" && amt == "" && cnt == "" && ft == "" {
			continue
		}
		if _, err := fundsType(c, ft); err != nil {
			return p.reject(rec, "funds type", err)
		}
		code, ok := digits(tc)
		if !ok || len(tc) != 3 {
			return p.reject(rec, "type code", fmt.Errorf("%q: want three digits", clip(tc)))
		}
		if cnt != "" && !isDigits(cnt) {
			return p.reject(rec, "item count", fmt.Errorf("%q: want digits", clip(cnt)))
		}
		v, err := minor(amt, code < 100)
		if err != nil {
			return p.reject(rec, "amount", err)
		}
		if !add(&a.sum, v) {
			a.overflow = true
		}
		if amt == "" {
			continue
		}
		var slot **Balance
		switch tc {
		case baiOpeningLedger:
			slot = &st.Opening
		case baiClosingLedger:
			slot = &st.Closing
		case baiClosingAvail:
			slot = &st.Available
		default:
			continue
		}
		m, err := fromMinor(v, st.Currency)
		if err != nil {
			return p.reject(rec, "currency", err)
		}
		*slot = &Balance{Type: tc, Amount: m, Date: g.asOf, Line: rec.line}
	}
	return nil
}

// fundsType reads the fields a funds type adds after it: S three amounts
// (immediate, one day, two or more days), V a value date and time, D a
// count and as many pairs of days and amount. It returns the value date of
// V.
func fundsType(c *fields, ft string) (Date, error) {
	switch ft {
	case "", "Z", "0", "1", "2":
		return Date{}, nil
	case "S":
		for range 3 {
			if _, err := minor(c.field(), true); err != nil {
				return Date{}, err
			}
		}
		return Date{}, nil
	case "V":
		d, err := parseYYMMDD(c.field())
		if err != nil {
			return Date{}, fmt.Errorf("value date: %w", err)
		}
		if _, err := baiTime(c.field()); err != nil {
			return Date{}, fmt.Errorf("value time: %w", err)
		}
		return d, nil
	case "D":
		n, ok := digits(c.field())
		if !ok {
			return Date{}, errors.New("D: want the number of distributions")
		}
		for range n {
			if _, ok := c.next(); !ok {
				return Date{}, fmt.Errorf("D: %d distributions announced, fewer given", n)
			}
			if _, err := minor(c.field(), true); err != nil {
				return Date{}, err
			}
		}
		return Date{}, nil
	}
	return Date{}, fmt.Errorf("%q: want Z, 0, 1, 2, S, V or D", clip(ft))
}

// baiDirection says which way a detail type code moves money: 100-399
// credit, 400-699 debit, loans (700-799) and the bank's own codes
// (900-999) as configured.
func (p *bai2Parser) baiDirection(tc string, code int) (Direction, error) {
	switch {
	case code > 100 && code < 400:
		return Credit, nil
	case code > 400 && code < 700:
		return Debit, nil
	case code >= 700 && code < 800 || code >= 900:
		if d, ok := p.opt.BAI2Directions[tc]; ok && (d == Credit || d == Debit) {
			return d, nil
		}
		return "", fmt.Errorf("%s is a loan or the bank's own code: its direction must be configured", tc)
	case code == 100 || code == 400:
		return "", fmt.Errorf("%s is a summary total, not a detail", tc)
	}
	return "", fmt.Errorf("%s is not a detail type code (101-399 credits, 401-699 debits)", tc)
}

func (p *bai2Parser) detail(rec *baiRecord, c *fields) error {
	a := p.acct
	if a == nil {
		return p.reject(rec, "record", errors.New("a transaction detail outside any account (no 03 record before it)"))
	}
	st := &a.st
	a.index++
	tc := c.field()
	code, ok := digits(tc)
	if !ok || len(tc) != 3 {
		return p.reject(rec, "type code", fmt.Errorf("%q: want three digits", clip(tc)))
	}
	amt := c.field()
	v, err := minor(amt, false)
	if err != nil {
		return p.reject(rec, "amount", err)
	}
	if !add(&a.sum, v) {
		a.overflow = true
	}
	valueDate, err := fundsType(c, c.field())
	if err != nil {
		return p.reject(rec, "funds type", err)
	}
	e := &Entry{Line: rec.line, Index: a.index, Status: Booked, BookingDate: p.group.asOf, ValueDate: valueDate,
		Code: TxCode{BAI: tc}}
	e.BankRef, e.CustomerRef = c.field(), c.field()
	if c.junk {
		return p.reject(rec, "record", errors.New("more after a slash that ends the record before its text"))
	}
	e.Text = c.text()
	if tc == baiNonMonetaryCode {
		return nil // information only: no money moved
	}
	if amt == "" {
		return p.reject(rec, "amount", errors.New("is empty"))
	}
	if e.Direction, err = p.baiDirection(tc, code); err != nil {
		return p.reject(rec, "type code", err)
	}
	if e.Amount, err = fromMinor(v, st.Currency); err != nil {
		return p.reject(rec, "currency", err)
	}
	e.Raw = copyBytes(rec.raw)
	if field, err := checkEntry(e); err != nil {
		return p.reject(rec, field, err)
	}
	st.count(e)
	return p.h.entry(st, e)
}

// control compares a trailer's declared number with the counted one.
func (p *bai2Parser) control(rec *baiRecord, what, declared string, counted int64, signed bool) error {
	v, err := minor(declared, signed)
	if err != nil || declared == "" {
		if err == nil {
			err = errors.New("is empty")
		}
		return p.reject(rec, what, err)
	}
	if v != counted {
		return p.rejectRaw(rec.line, rec.code+" "+what, &ControlError{Record: rec.code, What: what, Declared: v, Counted: counted},
			copyBytes(rec.raw))
	}
	return nil
}

func (p *bai2Parser) accountTrailer(rec *baiRecord, c *fields) error {
	a := p.acct
	if a == nil {
		return p.reject(rec, "record", errors.New("an account trailer with no account open"))
	}
	p.acct = nil
	st := &a.st
	total, count := c.field(), c.field()
	if a.overflow {
		if err := p.reject(rec, "control total", errors.New("the amounts overflow 64 bits")); err != nil {
			return err
		}
	} else if err := p.control(rec, "control total", total, a.sum, true); err != nil {
		return err
	}
	if err := p.control(rec, "record count", count, a.records, false); err != nil {
		return err
	}
	if declared, err := minor(total, true); err == nil && p.group != nil {
		if !add(&p.group.sum, declared) {
			p.group.sum = math.MaxInt64
		}
	}
	if p.group != nil {
		p.group.accounts++
	}
	if st.Opening != nil && st.Closing != nil && st.Totals.Rejected == 0 {
		if err := CheckBalance(st); err != nil {
			st.Totals.Rejected++
			if err := p.h.reject(&ledger.ParseError{File: p.file, Line: a.line03, Field: "03 " + baiClosingLedger, Err: err}, a.raw03); err != nil {
				return err
			}
		}
	}
	return p.h.end(st)
}

func (p *bai2Parser) groupTrailer(rec *baiRecord, c *fields) error {
	if err := p.closeAccount(rec.line); err != nil {
		return err
	}
	g := p.group
	if g == nil {
		return p.reject(rec, "record", errors.New("a group trailer with no group open"))
	}
	p.group = nil
	total := c.field()
	if err := p.control(rec, "control total", total, g.sum, true); err != nil {
		return err
	}
	if err := p.control(rec, "account count", c.field(), g.accounts, false); err != nil {
		return err
	}
	if err := p.control(rec, "record count", c.field(), g.records, false); err != nil {
		return err
	}
	if declared, err := minor(total, true); err == nil {
		if !add(&p.sum, declared) {
			p.sum = math.MaxInt64
		}
	}
	p.groups++
	return nil
}

func (p *bai2Parser) fileTrailer(rec *baiRecord, c *fields) error {
	if err := p.closeGroup(rec.line); err != nil {
		return err
	}
	p.trailer = true
	if err := p.control(rec, "control total", c.field(), p.sum, true); err != nil {
		return err
	}
	if err := p.control(rec, "group count", c.field(), p.groups, false); err != nil {
		return err
	}
	return p.control(rec, "record count", c.field(), p.records, false)
}
