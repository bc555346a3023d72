package bank

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// camtNamespacePrefix is what the namespace of every ISO 20022 message
// starts with; the message and version follow ("camt.053.001.08").
const camtNamespacePrefix = "urn:iso:std:iso:20022:tech:xsd:"

// camtMinVersion and camtMaxVersion bound the message versions read: their
// entries, balances and parties have the shapes this file decodes (001.02
// and 001.08 are tested with full fixtures).
const camtMinVersion, camtMaxVersion = 2, 13

// ParseCamt reads an ISO 20022 camt.053 (BankToCustomerStatement) or
// camt.054 (BankToCustomerDebitCreditNotification) document, versions
// 001.02 to 001.13, as a stream: one <Ntry> at a time is held in memory,
// whatever the file's size.
//
// Each Stmt (or Ntfctn) is a Statement and each Ntry an Entry. A bad entry
// is rejected with its <Ntry> element and the line of the element at fault,
// and reading goes on with the next entry; a file that is not well-formed
// XML, not UTF-8, or not one of these messages is refused as a whole with a
// *ledger.ParseError.
func ParseCamt(r io.Reader, file string, opt Options, h Handler) error {
	br := newBufReader(r)
	if err := checkEncoding(br); err != nil {
		return &ledger.ParseError{File: file, Line: 1, Field: "encoding", Err: err}
	}
	p := &camtParser{file: file, opt: opt, h: &h, tap: &tapReader{r: br}}
	p.d = xml.NewDecoder(p.tap)
	p.d.CharsetReader = xmlCharset
	return p.run()
}

var errCharset = errors.New("only UTF-8 is read")

// xmlCharset accepts the declared encodings that are UTF-8 (or its ASCII
// subset) and refuses every other with a message that says so.
func xmlCharset(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf8", "us-ascii", "ascii":
		return input, nil
	case "utf-16", "utf-16le", "utf-16be", "utf16":
		return nil, errUTF16
	}
	return nil, fmt.Errorf("encoding %q declared: %w (convert the file to UTF-8)", clip(label), errCharset)
}

// tapReader hands the XML decoder its bytes one at a time and keeps those
// read since the last drop, so that an element can be kept as it stood in
// the file.
type tapReader struct {
	r     *bufio.Reader
	buf   []byte
	start int64 // offset of buf[0]
}

func (t *tapReader) ReadByte() (byte, error) {
	if len(t.buf) >= maxEntryBytes {
		return 0, errElementTooLong
	}
	c, err := t.r.ReadByte()
	if err == nil {
		t.buf = append(t.buf, c)
	}
	return c, err
}

func (t *tapReader) Read(p []byte) (int, error) {
	if len(t.buf) >= maxEntryBytes {
		return 0, errElementTooLong
	}
	n, err := t.r.Read(p[:min(len(p), maxEntryBytes-len(t.buf))])
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// errElementTooLong stops the reading of an element longer than
// maxEntryBytes.
var errElementTooLong = fmt.Errorf("an element longer than %d bytes", maxEntryBytes)

// drop forgets the bytes before offset off.
func (t *tapReader) drop(off int64) {
	k := off - t.start
	if k <= 0 || k > int64(len(t.buf)) {
		return
	}
	n := copy(t.buf, t.buf[k:])
	t.buf = t.buf[:n]
	t.start = off
}

// bytes returns the bytes from offset from to offset to, valid until the
// next drop.
func (t *tapReader) bytes(from, to int64) []byte {
	return t.buf[from-t.start : to-t.start]
}

type camtParser struct {
	file    string
	opt     Options
	h       *Handler
	tap     *tapReader
	d       *xml.Decoder
	format  Format
	version string
	msgID   string
	// created is GrpHdr/CreDtTm, each statement's creation time unless
	// the statement gives its own.
	created time.Time
	// tokStart and tokLine are the offset and line where the last token
	// read began.
	tokStart int64
	tokLine  int
	seenRoot bool
}

// token reads the next token, first forgetting the bytes before it.
func (p *camtParser) token() (xml.Token, error) {
	p.tokStart = p.d.InputOffset()
	p.tap.drop(p.tokStart)
	tok, err := p.d.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, p.xmlErr(err)
	}
	if _, ok := tok.(xml.StartElement); ok {
		line, _ := p.d.InputPos()
		p.tokLine = line - bytes.Count(p.tap.bytes(p.tokStart, p.d.InputOffset()), []byte{'\n'})
	}
	return tok, nil
}

// xmlErr turns a decoder error into a ParseError naming the line, or an
// I/O error into a read error.
func (p *camtParser) xmlErr(err error) error {
	var se *xml.SyntaxError
	switch {
	case errors.As(err, &se):
		return &ledger.ParseError{File: p.file, Line: se.Line, Field: "xml", Err: fmt.Errorf("not well-formed XML: %s", se.Msg)}
	case errors.Is(err, errCharset), errors.Is(err, errUTF16):
		return &ledger.ParseError{File: p.file, Line: 1, Field: "encoding", Err: err}
	case errors.Is(err, errElementTooLong):
		return &ledger.ParseError{File: p.file, Line: p.tokLine, Field: "xml", Err: errElementTooLong}
	}
	line, _ := p.d.InputPos()
	if strings.HasPrefix(err.Error(), "xml: ") {
		return &ledger.ParseError{File: p.file, Line: line, Field: "xml", Err: err}
	}
	return fmt.Errorf("bank: read %s: %w", p.file, err)
}

func (p *camtParser) fileErr(line int, field string, err error) error {
	return &ledger.ParseError{File: p.file, Line: line, Field: field, Err: err}
}

func (p *camtParser) run() error {
	for {
		tok, err := p.token()
		if err == io.EOF {
			if !p.seenRoot {
				return p.fileErr(1, "Document", errors.New("no XML element: not a camt file"))
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if p.seenRoot {
				return p.fileErr(p.tokLine, t.Name.Local, errors.New("a second root element after </Document>"))
			}
			p.seenRoot = true
			if err := p.document(t); err != nil {
				return err
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				line, _ := p.d.InputPos()
				return p.fileErr(line, "Document", errors.New("text outside the root element"))
			}
		}
	}
}

// camtNamespace reads a namespace such as
// urn:iso:std:iso:20022:tech:xsd:camt.053.001.08.
func camtNamespace(ns string) (Format, string, bool) {
	rest, ok := strings.CutPrefix(ns, camtNamespacePrefix)
	if !ok || len(rest) != len("camt.053.001.08") {
		return "", "", false
	}
	var f Format
	switch rest[:9] {
	case "camt.053.":
		f = FormatCamt053
	case "camt.054.":
		f = FormatCamt054
	default:
		return "", "", false
	}
	if rest[9:13] != "001." {
		return "", "", false
	}
	v, ok := digits(rest[13:])
	if !ok || v < camtMinVersion || v > camtMaxVersion {
		return "", "", false
	}
	return f, rest[9:], true
}

func (p *camtParser) document(start xml.StartElement) error {
	if start.Name.Local != "Document" {
		return p.fileErr(p.tokLine, start.Name.Local, fmt.Errorf("root element <%s>: want the <Document> of a camt.053 or camt.054 message", clip(start.Name.Local)))
	}
	f, v, ok := camtNamespace(start.Name.Space)
	if !ok {
		return p.fileErr(p.tokLine, "Document", fmt.Errorf("namespace %q: want %scamt.053.001.NN or camt.054.001.NN, versions %02d to %02d",
			clip(start.Name.Space), camtNamespacePrefix, camtMinVersion, camtMaxVersion))
	}
	p.format, p.version = f, v
	want := "BkToCstmrStmt"
	if f == FormatCamt054 {
		want = "BkToCstmrDbtCdtNtfctn"
	}
	for {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != want {
				return p.fileErr(p.tokLine, t.Name.Local, fmt.Errorf("element <%s>: want <%s> in a %s document", clip(t.Name.Local), want, f))
			}
			if err := p.message(t); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// eof turns an end of file inside an element into a ParseError.
func (p *camtParser) eof(err error) error {
	if err == io.EOF {
		line, _ := p.d.InputPos()
		return p.fileErr(line, "xml", errors.New("the file ends inside an element (truncated?)"))
	}
	return err
}

type xGrpHdr struct {
	MsgId   string `xml:"MsgId"`
	CreDtTm string `xml:"CreDtTm"`
}

func (p *camtParser) message(start xml.StartElement) error {
	stmt := "Stmt"
	if p.format == FormatCamt054 {
		stmt = "Ntfctn"
	}
	for {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "GrpHdr":
				line, from := p.tokLine, p.tokStart
				var g xGrpHdr
				if err := p.d.DecodeElement(&g, &t); err != nil {
					return p.xmlErr(err)
				}
				p.msgID = strings.TrimSpace(g.MsgId)
				if s := strings.TrimSpace(g.CreDtTm); s != "" {
					at, err := parseISODateTime(s, p.opt.zone())
					if err != nil {
						raw := bytes.Clone(p.tap.bytes(from, p.d.InputOffset()))
						if err := p.h.reject(&ledger.ParseError{File: p.file, Line: lineIn(raw, line, "CreDtTm"), Field: "GrpHdr/CreDtTm", Err: err}, raw); err != nil {
							return err
						}
					}
					p.created = at
				}
			case stmt:
				if err := p.statement(t); err != nil {
					return err
				}
			default:
				if err := p.d.Skip(); err != nil {
					return p.xmlErr(err)
				}
			}
		case xml.EndElement:
			return nil
		}
	}
}

type xAmt struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

type xDateChoice struct {
	Dt   string `xml:"Dt"`
	DtTm string `xml:"DtTm"`
}

// xCode is a code given as text (camt.053.001.02 <Sts>BOOK</Sts>) or as a
// choice (001.08 <Sts><Cd>BOOK</Cd></Sts>).
type xCode struct {
	Text  string `xml:",chardata"`
	Cd    string `xml:"Cd"`
	Prtry string `xml:"Prtry"`
}

type xTxCode struct {
	Domn struct {
		Cd   string `xml:"Cd"`
		Fmly struct {
			Cd        string `xml:"Cd"`
			SubFmlyCd string `xml:"SubFmlyCd"`
		} `xml:"Fmly"`
	} `xml:"Domn"`
	Prtry struct {
		Cd   string `xml:"Cd"`
		Issr string `xml:"Issr"`
	} `xml:"Prtry"`
}

type xStmtAcct struct {
	IBAN  string `xml:"Id>IBAN"`
	Othr  string `xml:"Id>Othr>Id"`
	Ccy   string `xml:"Ccy"`
	Nm    string `xml:"Nm"`
	Ownr  string `xml:"Ownr>Nm"`
	BIC   string `xml:"Svcr>FinInstnId>BIC"`
	BICFI string `xml:"Svcr>FinInstnId>BICFI"`
}

type xAcct struct {
	IBAN string `xml:"Id>IBAN"`
	Othr string `xml:"Id>Othr>Id"`
}

// xParty is a party as 001.02 writes it (<Dbtr><Nm>) or as 001.08 does
// (<Dbtr><Pty><Nm>).
type xParty struct {
	Nm    string `xml:"Nm"`
	PtyNm string `xml:"Pty>Nm"`
}

type xAgent struct {
	BIC   string `xml:"FinInstnId>BIC"`
	BICFI string `xml:"FinInstnId>BICFI"`
}

type xBal struct {
	Tp struct {
		Cd    string `xml:"CdOrPrtry>Cd"`
		Prtry string `xml:"CdOrPrtry>Prtry"`
	} `xml:"Tp"`
	Amt       xAmt        `xml:"Amt"`
	CdtDbtInd string      `xml:"CdtDbtInd"`
	Dt        xDateChoice `xml:"Dt"`
}

type xTxDtls struct {
	Refs struct {
		AcctSvcrRef string `xml:"AcctSvcrRef"`
		PmtInfId    string `xml:"PmtInfId"`
		InstrId     string `xml:"InstrId"`
		EndToEndId  string `xml:"EndToEndId"`
		TxId        string `xml:"TxId"`
	} `xml:"Refs"`
	Amt       xAmt    `xml:"Amt"`
	CdtDbtInd string  `xml:"CdtDbtInd"`
	TxAmt     xAmt    `xml:"AmtDtls>TxAmt>Amt"`
	BkTxCd    xTxCode `xml:"BkTxCd"`
	RltdPties struct {
		Dbtr     xParty `xml:"Dbtr"`
		DbtrAcct xAcct  `xml:"DbtrAcct"`
		Cdtr     xParty `xml:"Cdtr"`
		CdtrAcct xAcct  `xml:"CdtrAcct"`
	} `xml:"RltdPties"`
	RltdAgts struct {
		DbtrAgt xAgent `xml:"DbtrAgt"`
		CdtrAgt xAgent `xml:"CdtrAgt"`
	} `xml:"RltdAgts"`
	RmtInf struct {
		Ustrd []string `xml:"Ustrd"`
		Strd  []struct {
			Ref string `xml:"CdtrRefInf>Ref"`
		} `xml:"Strd"`
	} `xml:"RmtInf"`
	AddtlTxInf string `xml:"AddtlTxInf"`
}

type xEntry struct {
	NtryRef     string      `xml:"NtryRef"`
	Amt         xAmt        `xml:"Amt"`
	CdtDbtInd   string      `xml:"CdtDbtInd"`
	RvslInd     string      `xml:"RvslInd"`
	Sts         xCode       `xml:"Sts"`
	BookgDt     xDateChoice `xml:"BookgDt"`
	ValDt       xDateChoice `xml:"ValDt"`
	AcctSvcrRef string      `xml:"AcctSvcrRef"`
	BkTxCd      xTxCode     `xml:"BkTxCd"`
	NtryDtls    []struct {
		TxDtls []xTxDtls `xml:"TxDtls"`
	} `xml:"NtryDtls"`
	AddtlNtryInf string `xml:"AddtlNtryInf"`
}

// camtStmt is the state of one statement being read.
type camtStmt struct {
	st           Statement
	elSeq, lgSeq string
	closingRaw   []byte
	index        int
}

func (p *camtParser) statement(xml.StartElement) error {
	cs := &camtStmt{st: Statement{File: p.file, Format: p.format, Version: p.version, Line: p.tokLine,
		MessageID: p.msgID, Zone: p.opt.zone(), Created: p.created}}
	for {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := p.statementChild(cs, t); err != nil {
				return err
			}
		case xml.EndElement:
			return p.endStatement(cs)
		}
	}
}

// reject hands a bad part of a statement to the handler.
func (p *camtParser) reject(st *Statement, line int, field string, err error, raw []byte) error {
	st.Totals.Rejected++
	return p.h.reject(&ledger.ParseError{File: p.file, Line: line, Field: field, Err: err}, raw)
}

func (p *camtParser) statementChild(cs *camtStmt, t xml.StartElement) error {
	st := &cs.st
	line, from := p.tokLine, p.tokStart
	name := t.Name.Local
	raw := func() []byte { return p.rawSince(from) }
	text := func() (string, error) {
		var s string
		if err := p.d.DecodeElement(&s, &t); err != nil {
			return "", p.xmlErr(err)
		}
		return strings.TrimSpace(s), nil
	}
	switch name {
	case "Id", "ElctrncSeqNb", "LglSeqNb", "AddtlStmtInf", "AddtlNtfctnInf":
		s, err := text()
		if err != nil {
			return err
		}
		switch name {
		case "Id":
			st.ID = s
		case "ElctrncSeqNb":
			cs.elSeq = s
		case "LglSeqNb":
			cs.lgSeq = s
		default:
			st.Info = s
		}
		st.Sequence = cs.elSeq
		if cs.lgSeq != "" {
			st.Sequence = cs.elSeq + "/" + cs.lgSeq
		}
	case "CreDtTm":
		s, err := text()
		if err != nil {
			return err
		}
		at, perr := parseISODateTime(s, p.opt.zone())
		if perr != nil {
			return p.reject(st, line, p.stmtName()+"/CreDtTm", perr, raw())
		}
		st.Created = at
	case "FrToDt":
		return p.stmtPeriod(cs, t, line, from)
	case "Acct":
		var x xStmtAcct
		if err := p.d.DecodeElement(&x, &t); err != nil {
			return p.xmlErr(err)
		}
		return p.stmtAccount(st, &x, line, from)
	case "Bal":
		return p.stmtBalance(cs, t, line, from)
	case "Ntry":
		cs.index++
		return p.entry(cs, t)
	default:
		if err := p.d.Skip(); err != nil {
			return p.xmlErr(err)
		}
	}
	return nil
}

// rawSince is a copy of the input from offset from to the decoder's
// offset.
func (p *camtParser) rawSince(from int64) []byte {
	return bytes.Clone(p.tap.bytes(from, p.d.InputOffset()))
}

// stmtPeriod reads the statement's FrToDt element t, which began at offset
// from on line, into its From and To dates.
func (p *camtParser) stmtPeriod(cs *camtStmt, t xml.StartElement, line int, from int64) error {
	st := &cs.st
	var x struct {
		FrDtTm string `xml:"FrDtTm"`
		ToDtTm string `xml:"ToDtTm"`
	}
	if err := p.d.DecodeElement(&x, &t); err != nil {
		return p.xmlErr(err)
	}
	for _, f := range []struct {
		name, v string
		d       *Date
	}{{"FrDtTm", x.FrDtTm, &st.From}, {"ToDtTm", x.ToDtTm, &st.To}} {
		at, err := parseISODateTime(strings.TrimSpace(f.v), p.opt.zone())
		if err != nil {
			r := p.rawSince(from)
			return p.reject(st, lineIn(r, line, f.name), p.stmtName()+"/FrToDt/"+f.name, err, r)
		}
		*f.d = DateOf(at.In(p.opt.zone()))
	}
	return nil
}

// stmtAccount takes the statement's Acct element x, which began at offset
// from on line, as its account and currency.
func (p *camtParser) stmtAccount(st *Statement, x *xStmtAcct, line int, from int64) error {
	a := Account{IBAN: strings.TrimSpace(x.IBAN), Number: strings.TrimSpace(x.Othr), Name: strings.TrimSpace(x.Nm),
		BIC: strings.TrimSpace(firstOf(x.BICFI, x.BIC))}
	if a.Name == "" {
		a.Name = strings.TrimSpace(x.Ownr)
	}
	st.Account = a
	if c := strings.TrimSpace(x.Ccy); c != "" {
		cur, err := money.NormalizeCurrency(c)
		if err != nil {
			r := p.rawSince(from)
			return p.reject(st, lineIn(r, line, "Ccy"), p.stmtName()+"/Acct/Ccy", err, r)
		}
		st.Currency = cur
	}
	return nil
}

// stmtBalance reads one Bal element t of the statement, which began at
// offset from on line: the opening (OPBD, else PRCD), closing (CLBD, kept
// with its text) or available (CLAV) balance. A second OPBD or CLBD is
// rejected.
func (p *camtParser) stmtBalance(cs *camtStmt, t xml.StartElement, line int, from int64) error {
	st := &cs.st
	var x xBal
	if err := p.d.DecodeElement(&x, &t); err != nil {
		return p.xmlErr(err)
	}
	r := p.rawSince(from)
	b, field, err := p.balance(st, &x, line)
	if err != nil {
		return p.reject(st, lineIn(r, line, lastElem(field)), field, err, r)
	}
	switch b.Type {
	case "OPBD":
		if st.Opening != nil && st.Opening.Type == "OPBD" {
			return p.reject(st, line, p.stmtName()+"/Bal", errors.New("a second OPBD balance"), r)
		}
		st.Opening = b
	case "PRCD":
		if st.Opening == nil {
			st.Opening = b
		}
	case "CLBD":
		if st.Closing != nil {
			return p.reject(st, line, p.stmtName()+"/Bal", errors.New("a second CLBD balance"), r)
		}
		st.Closing, cs.closingRaw = b, r
	case "CLAV":
		st.Available = b
	}
	return nil
}

func (p *camtParser) stmtName() string {
	if p.format == FormatCamt054 {
		return "Ntfctn"
	}
	return "Stmt"
}

func firstOf(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// lastElem is the last element of an XML path.
func lastElem(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// lineIn finds the line of the first <name> element inside raw, an element
// that starts at line base.
func lineIn(raw []byte, base int, name string) int {
	for i := 0; i < len(raw); {
		j := bytes.Index(raw[i:], []byte(name))
		if j < 0 {
			break
		}
		at := i + j
		end := at + len(name)
		if at > 0 && (raw[at-1] == '<' || raw[at-1] == ':') && end < len(raw) && strings.IndexByte("> /\t\r\n", raw[end]) >= 0 {
			return base + bytes.Count(raw[:at], []byte{'\n'})
		}
		i = end
	}
	return base
}

// amount reads an amount element: an unsigned decimal with a point and a
// currency attribute.
func amount(x xAmt) (money.Amount, error) {
	ccy := strings.TrimSpace(x.Ccy)
	if ccy == "" {
		return money.Amount{}, errors.New("has no Ccy attribute")
	}
	cur, err := money.NormalizeCurrency(ccy)
	if err != nil {
		return money.Amount{}, err
	}
	return parseMajor(strings.TrimSpace(x.Value), '.', cur)
}

func direction(s string) (Direction, error) {
	switch strings.TrimSpace(s) {
	case "CRDT":
		return Credit, nil
	case "DBIT":
		return Debit, nil
	case "":
		return "", errors.New("is missing")
	}
	return "", fmt.Errorf("%q: want CRDT or DBIT", clip(s))
}

// date reads a date choice: a date, or a date-time whose day in the bank's
// zone is the date.
func (p *camtParser) date(x xDateChoice) (Date, time.Time, string, error) {
	if s := strings.TrimSpace(x.Dt); s != "" {
		d, err := parseISODate(s)
		return d, time.Time{}, "Dt", err
	}
	if s := strings.TrimSpace(x.DtTm); s != "" {
		at, err := parseISODateTime(s, p.opt.zone())
		if err != nil {
			return Date{}, time.Time{}, "DtTm", err
		}
		return DateOf(at.In(p.opt.zone())), at, "DtTm", nil
	}
	return Date{}, time.Time{}, "", nil
}

func (p *camtParser) balance(st *Statement, x *xBal, line int) (*Balance, string, error) {
	base := p.stmtName() + "/Bal/"
	typ := strings.TrimSpace(x.Tp.Cd)
	if typ == "" {
		typ = "prtry:" + strings.TrimSpace(x.Tp.Prtry)
	}
	a, err := amount(x.Amt)
	if err != nil {
		return nil, base + "Amt", err
	}
	if err := p.currency(st, a.Currency); err != nil {
		return nil, base + "Amt", err
	}
	dir, err := direction(x.CdtDbtInd)
	if err != nil {
		return nil, base + "CdtDbtInd", err
	}
	if dir == Debit {
		a.Value = a.Value.Neg()
	}
	d, _, el, err := p.date(x.Dt)
	if err != nil {
		return nil, base + "Dt/" + el, err
	}
	if d.IsZero() {
		return nil, base + "Dt", errors.New("is missing")
	}
	return &Balance{Type: typ, Amount: a, Date: d, Line: line}, "", nil
}

// currency checks that an amount is in the statement's currency, taking
// it as the statement's when none is known yet.
func (p *camtParser) currency(st *Statement, cur string) error {
	if st.Currency == "" {
		st.Currency = cur
		return nil
	}
	if cur != st.Currency {
		return fmt.Errorf("in %s on a statement in %s (one currency per statement)", cur, st.Currency)
	}
	return nil
}

func (p *camtParser) entry(cs *camtStmt, start xml.StartElement) error {
	st := &cs.st
	line, from := p.tokLine, p.tokStart
	var x xEntry
	if err := p.d.DecodeElement(&x, &start); err != nil {
		return p.xmlErr(err)
	}
	raw := bytes.Clone(p.tap.bytes(from, p.d.InputOffset()))
	e := &Entry{Line: line, Index: cs.index, Raw: raw}
	if field, err := p.fill(st, e, &x); err != nil {
		return p.reject(st, lineIn(raw, line, lastElem(field)), field, err, raw)
	}
	if field, err := checkEntry(e); err != nil {
		return p.reject(st, line, field, err, raw)
	}
	st.count(e)
	return p.h.entry(st, e)
}

// noRef reads the placeholders ISO 20022 prescribes for a reference that
// was not given as none.
func noRef(s string) string {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "NOTPROVIDED") || strings.EqualFold(s, "NONREF") {
		return ""
	}
	return s
}

func (p *camtParser) fill(st *Statement, e *Entry, x *xEntry) (string, error) {
	var field string
	a, err := amount(x.Amt)
	if err != nil {
		return "Ntry/Amt", err
	}
	if err := p.currency(st, a.Currency); err != nil {
		return "Ntry/Amt", err
	}
	e.Amount = a
	if e.Direction, err = direction(x.CdtDbtInd); err != nil {
		return "Ntry/CdtDbtInd", err
	}
	switch strings.TrimSpace(x.RvslInd) {
	case "", "false", "0":
	case "true", "1":
		e.Reversal = true
	default:
		return "Ntry/RvslInd", fmt.Errorf("%q: want true or false", clip(x.RvslInd))
	}
	if e.Status, field, err = entryStatus(x.Sts); err != nil {
		return field, err
	}
	booked, at, el, err := p.date(x.BookgDt)
	if err != nil {
		return "Ntry/BookgDt/" + el, err
	}
	e.BookingDate, e.BookedAt = booked, at
	if e.ValueDate, _, el, err = p.date(x.ValDt); err != nil {
		return "Ntry/ValDt/" + el, err
	}
	if e.BookingDate.IsZero() {
		if e.Status == Booked {
			return "Ntry/BookgDt", errors.New("a booked entry without a booking date")
		}
		if e.ValueDate.IsZero() {
			return "Ntry/BookgDt", errors.New("neither a booking nor a value date")
		}
		e.BookingDate = e.ValueDate
	}
	e.EntryRef = strings.TrimSpace(x.NtryRef)
	e.BankRef = strings.TrimSpace(x.AcctSvcrRef)
	e.Code = txCode(x.BkTxCd)
	e.Info = strings.TrimSpace(x.AddtlNtryInf)
	for i := range x.NtryDtls {
		for j := range x.NtryDtls[i].TxDtls {
			d, field, err := detail(&x.NtryDtls[i].TxDtls[j], e.Direction)
			if err != nil {
				return field, err
			}
			e.Details = append(e.Details, d)
		}
	}
	e.fromDetails()
	return "", nil
}

// entryStatus is the status an entry's Sts names (its code, else its
// text), and the field at fault when it names none we know.
func entryStatus(x xCode) (Status, string, error) {
	sts := strings.TrimSpace(x.Cd)
	if sts == "" {
		sts = strings.TrimSpace(x.Text)
	}
	switch sts {
	case "BOOK":
		return Booked, "", nil
	case "PDNG":
		return Pending, "", nil
	case "INFO":
		return Info, "", nil
	case "FUTR":
		return Future, "", nil
	case "":
		if p := strings.TrimSpace(x.Prtry); p != "" {
			return "", "Ntry/Sts/Prtry", fmt.Errorf("proprietary status %q: want BOOK, PDNG, INFO or FUTR", clip(p))
		}
		return "", "Ntry/Sts", errors.New("is missing")
	}
	return "", "Ntry/Sts", fmt.Errorf("%q: want BOOK, PDNG, INFO or FUTR", clip(sts))
}

// fromDetails completes the entry from its transaction details: a single
// one gives its references, counterparty and text (and the bank ref, code
// and info the entry lacks); several give their texts joined.
func (e *Entry) fromDetails() {
	switch len(e.Details) {
	case 0:
	case 1:
		d := &e.Details[0]
		e.CustomerRef, e.CreditorRef, e.Counterparty, e.Text = d.EndToEndID, d.CreditorRef, d.Counterparty, d.Text
		if e.BankRef == "" {
			e.BankRef = d.BankRef
		}
		if e.Code == (TxCode{}) {
			e.Code = d.Code
		}
		if e.Info == "" {
			e.Info = d.Info
		}
	default:
		texts := make([]string, 0, len(e.Details))
		for _, d := range e.Details {
			if d.Text != "" {
				texts = append(texts, d.Text)
			}
		}
		e.Text = strings.Join(texts, "; ")
	}
}

func txCode(x xTxCode) TxCode {
	return TxCode{Domain: strings.TrimSpace(x.Domn.Cd), Family: strings.TrimSpace(x.Domn.Fmly.Cd),
		SubFamily: strings.TrimSpace(x.Domn.Fmly.SubFmlyCd), Proprietary: strings.TrimSpace(x.Prtry.Cd),
		Issuer: strings.TrimSpace(x.Prtry.Issr)}
}

func account(x xAcct) Account {
	return Account{IBAN: strings.TrimSpace(x.IBAN), Number: strings.TrimSpace(x.Othr)}
}

// detail reads one TxDtls. The counterparty is the debtor of a credit and
// the creditor of a debit.
func detail(x *xTxDtls, entryDir Direction) (Detail, string, error) {
	const base = "Ntry/NtryDtls/TxDtls/"
	d := Detail{
		EndToEndID: noRef(x.Refs.EndToEndId), InstructionID: noRef(x.Refs.InstrId), TxID: noRef(x.Refs.TxId),
		BankRef: strings.TrimSpace(x.Refs.AcctSvcrRef), PaymentInfoID: noRef(x.Refs.PmtInfId),
		Info: strings.TrimSpace(x.AddtlTxInf), Code: txCode(x.BkTxCd),
	}
	amt, field := x.Amt, base+"Amt"
	if strings.TrimSpace(amt.Value) == "" {
		amt, field = x.TxAmt, base+"AmtDtls/TxAmt/Amt"
	}
	if strings.TrimSpace(amt.Value) != "" {
		a, err := amount(amt)
		if err != nil {
			return d, field, err
		}
		d.Amount = a
	}
	d.Direction = entryDir
	if s := strings.TrimSpace(x.CdtDbtInd); s != "" {
		dir, err := direction(s)
		if err != nil {
			return d, base + "CdtDbtInd", err
		}
		d.Direction = dir
	}
	rp, ra := &x.RltdPties, &x.RltdAgts
	if d.Direction == Credit {
		d.Counterparty = Party{Name: strings.TrimSpace(firstOf(rp.Dbtr.Nm, rp.Dbtr.PtyNm)), Account: account(rp.DbtrAcct)}
		d.Counterparty.Account.BIC = strings.TrimSpace(firstOf(ra.DbtrAgt.BICFI, ra.DbtrAgt.BIC))
	} else {
		d.Counterparty = Party{Name: strings.TrimSpace(firstOf(rp.Cdtr.Nm, rp.Cdtr.PtyNm)), Account: account(rp.CdtrAcct)}
		d.Counterparty.Account.BIC = strings.TrimSpace(firstOf(ra.CdtrAgt.BICFI, ra.CdtrAgt.BIC))
	}
	lines := make([]string, 0, len(x.RmtInf.Ustrd))
	for _, u := range x.RmtInf.Ustrd {
		if u = strings.TrimSpace(u); u != "" {
			lines = append(lines, u)
		}
	}
	d.Text = strings.Join(lines, " ")
	for _, s := range x.RmtInf.Strd {
		if r := strings.TrimSpace(s.Ref); r != "" && d.CreditorRef == "" {
			d.CreditorRef = r
		}
	}
	return d, "", nil
}

func (p *camtParser) endStatement(cs *camtStmt) error {
	st := &cs.st
	if p.format == FormatCamt053 {
		switch {
		case st.Opening == nil:
			if err := p.reject(st, st.Line, "Stmt/Bal", errors.New("no opening booked balance (OPBD or PRCD): the entries cannot be checked"), nil); err != nil {
				return err
			}
		case st.Closing == nil:
			if err := p.reject(st, st.Line, "Stmt/Bal", errors.New("no closing booked balance (CLBD): the entries cannot be checked"), nil); err != nil {
				return err
			}
		case st.Totals.Rejected == 0:
			if err := CheckBalance(st); err != nil {
				if err := p.reject(st, st.Closing.Line, "Stmt/Bal/CLBD", err, cs.closingRaw); err != nil {
					return err
				}
			}
		}
	}
	return p.h.end(st)
}
