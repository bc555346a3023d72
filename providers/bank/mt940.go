package bank

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Widths of MT940 text: a line of a field, and a subfield of a structured
// :86:.
const (
	mtLineWidth     = 65
	mtSubfieldWidth = 27
)

// ParseMT940 reads SWIFT MT940 customer statements line by line: one field
// (and one entry with its :86:) is held in memory at a time. A file may
// hold several statements, each in a SWIFT envelope ({1:...}{2:...}{4:
// ... -}) or one after the other without one; lines may end in CRLF or
// LF.
//
// Each message (from :20: to its end) is a Statement, checked against its
// own :60a: and :62a: balances; a statement split into pages by :28C: is
// one Statement per page. Each :61: with the :86: that follows it is an
// Entry. A bad :61: is rejected with its lines and reading goes on;
// fields MT940 does not have are rejected too.
func ParseMT940(r io.Reader, file string, opt Options, h Handler) error {
	br := newBufReader(r)
	if err := checkEncoding(br); err != nil {
		return &ledger.ParseError{File: file, Line: 1, Field: "encoding", Err: err}
	}
	p := &mt940Parser{file: file, opt: opt, h: &h, lr: &lineReader{br: br, charset: opt.Charset}}
	return p.run()
}

type mtField struct {
	tag   string
	line  int
	lines []string
	// size is the field's length in bytes; past maxEntryBytes its lines
	// are no longer kept and the field is rejected.
	size int
}

// raw is the field as it stood in the file, its lines joined by LF.
func (f *mtField) raw() []byte {
	n := len(f.tag) + 2
	for _, l := range f.lines {
		n += len(l) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, ':')
	b = append(b, f.tag...)
	b = append(b, ':')
	for i, l := range f.lines {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, l...)
	}
	return b
}

type mtEntry struct {
	e     Entry
	perr  *ledger.ParseError
	has86 bool
}

type mtStmt struct {
	st         Statement
	pending    *mtEntry
	closingRaw []byte
	index      int
}

type mt940Parser struct {
	file string
	opt  Options
	h    *Handler
	lr   *lineReader
	// bic is the account servicer's BIC from the current envelope.
	bic   string
	field *mtField
	cur   *mtStmt
	seen  bool
	// spare is a field kept for reuse.
	spare *mtField
}

func (p *mt940Parser) run() error {
	for {
		line, err := p.lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return lineErr(p.file, err)
		}
		if err := p.line(p.lr.n, string(line)); err != nil {
			return err
		}
	}
	if err := p.endMessage(); err != nil {
		return err
	}
	if !p.seen {
		return &ledger.ParseError{File: p.file, Line: 1, Field: "20", Err: errors.New("no :20: field: not an MT940 statement")}
	}
	return nil
}

// isTag reports whether s starts with a field tag (":20:", ":28C:") and
// returns the tag and the rest.
func isTag(s string) (string, string, bool) {
	if len(s) < 4 || s[0] != ':' || !isDigits(s[1:3]) {
		return "", "", false
	}
	if s[3] == ':' {
		return s[1:3], s[4:], true
	}
	if len(s) >= 5 && s[3] >= 'A' && s[3] <= 'Z' && s[4] == ':' {
		return s[1:4], s[5:], true
	}
	return "", "", false
}

func (p *mt940Parser) line(n int, s string) error {
	t := strings.TrimRight(s, " \t")
	switch {
	case t == "":
		return nil
	case isBlock(t):
		if err := p.flushField(); err != nil {
			return err
		}
		return p.envelope(n, t)
	case t == "-" || strings.HasPrefix(t, "-}"):
		return p.endMessage()
	}
	if tag, rest, ok := isTag(s); ok {
		if err := p.flushField(); err != nil {
			return err
		}
		f := p.spare
		if f == nil {
			f = &mtField{}
		}
		p.spare = nil
		f.tag, f.line, f.lines, f.size = tag, n, append(f.lines[:0], rest), len(s)
		p.field = f
		return nil
	}
	if p.field == nil {
		return p.rejectLine(n, t, errors.New("text outside any field"))
	}
	// Trailing spaces stay: a line cut by the bank after a space goes on
	// with the next word.
	if p.field.size += len(s) + 1; p.field.size <= maxEntryBytes {
		p.field.lines = append(p.field.lines, s)
	}
	return nil
}

func (p *mt940Parser) rejectLine(n int, t string, err error) error {
	if p.cur != nil {
		p.cur.st.Totals.Rejected++
	}
	return p.h.reject(&ledger.ParseError{File: p.file, Line: n, Field: "line", Err: err}, []byte(t))
}

// isBlock reports whether a line starts with a SWIFT block ({1: to {5:).
// Braces are in SWIFT's character set, so a line of text may start with
// one too.
func isBlock(t string) bool {
	return len(t) >= 3 && t[0] == '{' && t[1] >= '1' && t[1] <= '5' && t[2] == ':'
}

// envelope reads the SWIFT blocks of a line: the sender's BIC from block 1
// or 2, and the text block {4: that the fields follow.
func (p *mt940Parser) envelope(n int, t string) error {
	for t != "" {
		if len(t) < 3 || t[0] != '{' || t[2] != ':' {
			return p.rejectLine(n, t, errors.New("not a SWIFT block ({1:, {2:, {3:, {4:, {5:)"))
		}
		if t[1] == '4' {
			if err := p.endMessage(); err != nil {
				return err
			}
			rest := strings.TrimSpace(t[3:])
			if rest == "" {
				return nil
			}
			return p.line(n, rest)
		}
		end := blockEnd(t)
		if end < 0 {
			return p.rejectLine(n, t, errors.New("a SWIFT block without its closing brace"))
		}
		body := t[3:end]
		switch t[1] {
		case '1':
			if err := p.endMessage(); err != nil {
				return err
			}
			// F01 + the logical terminal (BIC8, terminal letter, branch).
			if len(body) >= 15 {
				p.bic = terminalBIC(body[3:15])
			}
		case '2':
			// Output: O + type + time + the input reference (date, the
			// sender's logical terminal, session, sequence).
			if len(body) >= 26 && body[0] == 'O' {
				if b := terminalBIC(body[14:26]); b != "" {
					p.bic = b
				}
			}
		}
		t = strings.TrimSpace(t[end+1:])
	}
	return nil
}

// blockEnd finds the brace closing the block t starts with.
func blockEnd(t string) int {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// terminalBIC turns a 12-character logical terminal address (BIC8, a
// terminal letter, branch) into a BIC: eight characters for the head
// office (branch XXX), eleven for a branch.
func terminalBIC(lt string) string {
	b := lt[:8]
	if branch := lt[9:12]; branch != "XXX" {
		b += branch
	}
	if !isBIC(b) {
		return ""
	}
	return b
}

// endMessage ends the current field and statement.
func (p *mt940Parser) endMessage() error {
	if err := p.flushField(); err != nil {
		return err
	}
	return p.endStatement()
}

func (p *mt940Parser) flushField() error {
	f := p.field
	if f == nil {
		return nil
	}
	p.field = nil
	err := p.fieldDone(f)
	p.spare = f
	return err
}

// fieldErr is a ParseError about field f.
func (p *mt940Parser) fieldErr(f *mtField, err error) *ledger.ParseError {
	return &ledger.ParseError{File: p.file, Line: f.line, Field: f.tag, Err: err}
}

func (p *mt940Parser) rejectField(f *mtField, err error) error {
	if p.cur != nil {
		p.cur.st.Totals.Rejected++
	}
	return p.h.reject(p.fieldErr(f, err), f.raw())
}

// oversized rejects a field longer than maxEntryBytes; an oversized :86:
// takes its entry with it.
func (p *mt940Parser) oversized(f *mtField) error {
	if f.tag == "86" && p.cur != nil && p.cur.pending != nil && !p.cur.pending.has86 {
		// The entry goes with its information.
		me := p.cur.pending
		me.has86 = true
		if me.perr == nil {
			me.perr = p.fieldErr(f, fmt.Errorf("longer than %d bytes", maxEntryBytes))
		}
		return nil
	}
	return p.rejectField(f, fmt.Errorf("longer than %d bytes", maxEntryBytes))
}

// balanceField takes a balance field of the statement: the opening
// (:60F:/:60M:), closing (:62F:/:62M:, kept with its text) or available
// (:64:) balance; a forward available balance (:65:) is read and dropped.
func (p *mt940Parser) balanceField(cs *mtStmt, f *mtField) error {
	st := &cs.st
	if err := p.flushEntry(); err != nil {
		return err
	}
	b, err := p.balance(st, f)
	if err != nil {
		return p.rejectField(f, err)
	}
	switch f.tag {
	case "60F", "60M":
		if st.Opening != nil {
			return p.rejectField(f, errors.New("a second opening balance"))
		}
		st.Opening, st.From = b, b.Date
	case "62F", "62M":
		if st.Closing != nil {
			return p.rejectField(f, errors.New("a second closing balance"))
		}
		st.Closing, st.To, cs.closingRaw = b, b.Date, f.raw()
	case "64":
		st.Available = b
	}
	return nil
}

// fieldDone takes a field read whole: it starts a statement (:20:), fills
// the current one or its pending entry, or rejects the field.
func (p *mt940Parser) fieldDone(f *mtField) error {
	if f.size > maxEntryBytes {
		return p.oversized(f)
	}
	if f.tag == "20" {
		if err := p.endStatement(); err != nil {
			return err
		}
		p.seen = true
		p.cur = &mtStmt{st: Statement{File: p.file, Format: FormatMT940, Line: f.line, ID: strings.TrimSpace(f.lines[0]),
			Account: Account{BIC: p.bic}, Zone: p.opt.zone()}}
		return nil
	}
	if p.cur == nil {
		return p.rejectField(f, fmt.Errorf("field :%s: before any :20:", f.tag))
	}
	cs := p.cur
	st := &cs.st
	switch f.tag {
	case "21", "13D", "34F", "90C", "90D":
		return nil
	case "25", "25P":
		a := mtAccount(strings.TrimSpace(f.lines[0]))
		if a.BIC == "" {
			a.BIC = st.Account.BIC
		}
		if f.tag == "25P" && len(f.lines) > 1 {
			a.BIC = strings.TrimSpace(f.lines[1])
		}
		st.Account = a
	case "28C", "28":
		st.Sequence = strings.TrimSpace(f.lines[0])
	case "86":
		if cs.pending != nil && !cs.pending.has86 {
			cs.pending.has86 = true
			e := &cs.pending.e
			e.Raw = append(append(e.Raw, '\n'), f.raw()...)
			text, info, party, gvc := parse86(f.lines)
			e.Text, e.Counterparty, e.Code.GVC = text, party, gvc
			e.Info = joinInfo(e.Info, info)
			return nil
		}
		st.Info = joinInfo(st.Info, joinWrapped(f.lines, mtLineWidth))
	case "61":
		if err := p.flushEntry(); err != nil {
			return err
		}
		cs.index++
		me := &mtEntry{e: Entry{Line: f.line, Index: cs.index, Raw: f.raw()}}
		if err := p.entry(st, f, &me.e); err != nil {
			me.perr = p.fieldErr(f, err)
		}
		cs.pending = me
	case "60F", "60M", "62F", "62M", "64", "65":
		return p.balanceField(cs, f)
	default:
		return p.rejectField(f, fmt.Errorf("field :%s: is not an MT940 field", f.tag))
	}
	return nil
}

func joinInfo(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// mtAccount reads :25:: an IBAN, a BIC and an IBAN ("INGBNL2A/NL20..."),
// an IBAN followed by its currency, or any other account number as given
// ("50010517/0123456789").
func mtAccount(s string) Account {
	compact := strings.ReplaceAll(s, " ", "")
	if isIBAN(compact) {
		return Account{IBAN: compact}
	}
	if bic, iban, ok := strings.Cut(compact, "/"); ok && isBIC(bic) && isIBAN(iban) {
		return Account{IBAN: iban, BIC: bic}
	}
	if n := len(compact); n > 3 && isIBAN(compact[:n-3]) {
		if _, err := money.NormalizeCurrency(compact[n-3:]); err == nil {
			return Account{IBAN: compact[:n-3]}
		}
	}
	return Account{Number: s}
}

// balance reads a balance field: D or C, YYMMDD, currency, amount.
func (p *mt940Parser) balance(st *Statement, f *mtField) (*Balance, error) {
	s := strings.TrimSpace(f.lines[0])
	if len(f.lines) > 1 {
		return nil, errors.New("a balance takes one line")
	}
	if len(s) < 1+6+3+2 {
		return nil, fmt.Errorf("%q: want D or C, YYMMDD, currency and amount", clip(s))
	}
	neg := false
	switch s[0] {
	case 'C':
	case 'D':
		neg = true
	default:
		return nil, fmt.Errorf("debit/credit mark %q: want D or C", s[:1])
	}
	d, err := parseYYMMDD(s[1:7])
	if err != nil {
		return nil, err
	}
	cur, err := money.NormalizeCurrency(s[7:10])
	if err != nil {
		return nil, err
	}
	if st.Currency == "" {
		st.Currency = cur
	} else if cur != st.Currency {
		return nil, fmt.Errorf("balance in %s on a statement in %s", cur, st.Currency)
	}
	a, err := mtAmount(s[10:], cur)
	if err != nil {
		return nil, err
	}
	if neg {
		a.Value = a.Value.Neg()
	}
	return &Balance{Type: f.tag, Amount: a, Date: d, Line: f.line}, nil
}

// mtAmount reads an MT amount: digits with a decimal comma that SWIFT
// requires, 15 characters at most.
func mtAmount(s, cur string) (money.Amount, error) {
	if len(s) > 15 {
		return money.Amount{}, fmt.Errorf("amount %q: longer than 15 characters", clip(s))
	}
	if !strings.Contains(s, ",") {
		return money.Amount{}, fmt.Errorf("amount %q: want a decimal comma", clip(s))
	}
	return parseMajor(s, ',', cur)
}

// entry reads a :61: statement line into e:
//
//	value date YYMMDD, [entry date MMDD], mark (C, D, RC, RD), [funds code],
//	amount, transaction type (N/F/S and 3 characters), customer reference,
//	[//bank reference], and on the next line [supplementary details].
func (p *mt940Parser) entry(st *Statement, f *mtField, e *Entry) error {
	s := strings.TrimRight(f.lines[0], " ")
	if len(s) < 6 {
		return fmt.Errorf("%q: want a value date YYMMDD first", clip(s))
	}
	vd, err := parseYYMMDD(s[:6])
	if err != nil {
		return fmt.Errorf("value date: %w", err)
	}
	e.ValueDate, e.BookingDate = vd, vd
	i := 6
	if len(s) >= i+4 && isDigits(s[i:i+4]) {
		bd, err := entryDate(vd, s[i:i+4])
		if err != nil {
			return err
		}
		e.BookingDate = bd
		i += 4
	}
	switch {
	case strings.HasPrefix(s[i:], "RC"):
		// A reversal of a credit takes the money back out: a debit.
		e.Direction, e.Reversal = Debit, true
		i += 2
	case strings.HasPrefix(s[i:], "RD"):
		e.Direction, e.Reversal = Credit, true
		i += 2
	case strings.HasPrefix(s[i:], "C"):
		e.Direction = Credit
		i++
	case strings.HasPrefix(s[i:], "D"):
		e.Direction = Debit
		i++
	default:
		return fmt.Errorf("debit/credit mark %q: want C, D, RC or RD", clip(s[i:min(i+2, len(s))]))
	}
	if i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++ // the funds code, the third letter of the currency
	}
	j := i
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ',') {
		j++
	}
	if st.Currency == "" {
		return errors.New("no opening balance (:60F:) before the entry gives its currency")
	}
	if e.Amount, err = mtAmount(s[i:j], st.Currency); err != nil {
		return err
	}
	if len(s) < j+4 {
		return fmt.Errorf("transaction type %q: want N, F or S and three characters", clip(s[j:]))
	}
	typ := s[j : j+4]
	if typ[0] != 'N' && typ[0] != 'F' && typ[0] != 'S' {
		return fmt.Errorf("transaction type %q: want N, F or S and three characters", clip(typ))
	}
	e.Code.SWIFT = typ
	ref := s[j+4:]
	cust, bankRef, _ := strings.Cut(ref, "//")
	e.CustomerRef = noRef(cust)
	e.BankRef = strings.TrimSpace(bankRef)
	e.Status = Booked
	if len(f.lines) > 1 {
		e.Info = strings.TrimSpace(strings.Join(f.lines[1:], " "))
	}
	return nil
}

// entryDate reads the MMDD entry date of a :61:, in the year that puts it
// nearest its value date: an entry booked on 31 December for value on 2
// January belongs to the year before the value date's.
func entryDate(value Date, mmdd string) (Date, error) {
	m, _ := digits(mmdd[:2])
	d, _ := digits(mmdd[2:])
	best, bestDist := Date{}, 0
	for _, y := range []int{value.Year - 1, value.Year, value.Year + 1} {
		c, ok := makeDate(y, m, d)
		if !ok {
			continue
		}
		dist := c.Midnight(nil).Sub(value.Midnight(nil))
		if dist < 0 {
			dist = -dist
		}
		if days := int(dist.Hours() / 24); best.IsZero() || days < bestDist {
			best, bestDist = c, days
		}
	}
	if best.IsZero() || bestDist > 183 {
		return Date{}, fmt.Errorf("entry date %q does not exist", mmdd)
	}
	return best, nil
}

// parse86 reads the information to the account owner. A structured :86:
// (a three-digit business transaction code, then subfields ?00..?63, as
// German banks write it) gives its remittance text (?20..?29, ?60..?63),
// posting text (?00), counterparty (?30 bank, ?31 account, ?32 and ?33
// name) and code; any other :86: is free text, its lines joined.
func parse86(lines []string) (text, info string, party Party, gvc string) {
	joined := strings.Join(lines, "")
	if len(joined) < 4 || !isDigits(joined[:3]) || joined[3] != '?' {
		return joinWrapped(lines, mtLineWidth), "", Party{}, ""
	}
	gvc = joined[:3]
	var remit, name []string
	for _, sf := range subfields(joined[3:]) {
		v := sf.value
		switch code := sf.code; {
		case code == "00":
			info = strings.TrimSpace(v)
		case code >= "20" && code <= "29", code >= "60" && code <= "63":
			remit = append(remit, v)
		case code == "30":
			b := strings.TrimSpace(v)
			if isBIC(b) {
				party.Account.BIC = b
			} else {
				party.Account.BankCode = b
			}
		case code == "31":
			a := strings.TrimSpace(v)
			if isIBAN(a) {
				party.Account.IBAN = a
			} else {
				party.Account.Number = a
			}
		case code == "32", code == "33":
			name = append(name, v)
		}
	}
	party.Name = joinWrapped(name, mtSubfieldWidth)
	return joinWrapped(remit, mtSubfieldWidth), info, party, gvc
}

type subfield struct{ code, value string }

// subfields splits "?20abc?21def" into its subfields: a ? and two digits
// open each.
func subfields(s string) []subfield {
	var out []subfield
	start := -1
	var code string
	for i := 0; i < len(s); i++ {
		if s[i] == '?' && i+2 < len(s) && isDigits(s[i+1:i+3]) {
			if start >= 0 {
				out = append(out, subfield{code, s[start:i]})
			}
			code, start = s[i+1:i+3], i+3
			i += 2
		}
	}
	if start >= 0 {
		out = append(out, subfield{code, s[start:]})
	}
	return out
}

// flushEntry hands on the entry waiting for its :86:.
func (p *mt940Parser) flushEntry() error {
	cs := p.cur
	if cs == nil || cs.pending == nil {
		return nil
	}
	me := cs.pending
	cs.pending = nil
	st := &cs.st
	if me.perr != nil {
		st.Totals.Rejected++
		return p.h.reject(me.perr, me.e.Raw)
	}
	if field, err := checkEntry(&me.e); err != nil {
		st.Totals.Rejected++
		return p.h.reject(&ledger.ParseError{File: p.file, Line: me.e.Line, Field: "61 " + field, Err: err}, me.e.Raw)
	}
	st.count(&me.e)
	return p.h.entry(st, &me.e)
}

func (p *mt940Parser) endStatement() error {
	if err := p.flushEntry(); err != nil {
		return err
	}
	cs := p.cur
	if cs == nil {
		return nil
	}
	p.cur = nil
	st := &cs.st
	reject := func(line int, field string, err error, raw []byte) error {
		st.Totals.Rejected++
		return p.h.reject(&ledger.ParseError{File: p.file, Line: line, Field: field, Err: err}, raw)
	}
	var err error
	switch {
	case st.Opening == nil:
		err = reject(st.Line, "60F", errors.New("no opening balance (:60F: or :60M:): the entries cannot be checked"), nil)
	case st.Closing == nil:
		err = reject(st.Line, "62F", errors.New("no closing balance (:62F: or :62M:): the entries cannot be checked"), nil)
	case st.Totals.Rejected == 0:
		if berr := CheckBalance(st); berr != nil {
			err = reject(st.Closing.Line, st.Closing.Type, berr, cs.closingRaw)
		}
	}
	if err != nil {
		return err
	}
	return p.h.end(st)
}
