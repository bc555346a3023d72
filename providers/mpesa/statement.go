package mpesa

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/rawcsv"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// ChannelStatement is the Source.Channel of portal statement rows.
const ChannelStatement = "statement"

// StatementParser reads the M-Pesa organisation portal's statement export
// (CSV). It scans past preamble rows to the header, tolerates a UTF-8 BOM
// and CRLF line ends, thousands separators in quoted amounts, several date
// forms (all EAT), a negative or positive Withdrawn, and lower-case receipts.
// Columns are found by name; unknown columns are ignored.
//
// Each row's source ref is "statement:<receipt>": the same row in two
// exports of overlapping periods is one sighting, so re-importing either
// export changes nothing.
//
// Clock stamps each sighting's ReceivedAt; time.Now when nil.
//
// ShortCode, when set, is the paybill or till the file is imported into:
// a preamble row naming another one ("Paybill,556677") refuses the file,
// so that one paybill's statement never lands in another's books.
type StatementParser struct {
	Clock     func() time.Time
	ShortCode string
}

var _ providers.StatementParser = StatementParser{}

// column identifies a statement column.
type column int

const (
	colReceipt column = iota
	colCompletion
	colInitiation
	colDetails
	colStatus
	colPaidIn
	colWithdrawn
	colReason
	colOther
	colLinked
	colAccount
	colBalance
	numColumns
)

// columnNames are the header names of each column, normalised by normHeader;
// the first is the one used in errors.
var columnNames = [numColumns][]string{
	colReceipt:    {"Receipt No.", "receipt no", "receipt", "receipt number"},
	colCompletion: {"Completion Time", "completion time", "date", "completion date"},
	colInitiation: {"Initiation Time", "initiation time"},
	colDetails:    {"Details", "details"},
	colStatus:     {"Transaction Status", "transaction status", "status"},
	colPaidIn:     {"Paid In", "paid in"},
	colWithdrawn:  {"Withdrawn", "withdrawn"},
	colReason:     {"Reason Type", "reason type", "transaction type"},
	colOther:      {"Other Party Info", "other party info"},
	colLinked:     {"Linked Transaction ID", "linked transaction id"},
	colAccount:    {"A/C No.", "a/c no", "account no", "acc no", "account number"},
	colBalance:    {"Balance", "balance"},
}

var requiredColumns = []column{colReceipt, colCompletion, colStatus, colPaidIn, colWithdrawn}

func normHeader(s string) string {
	s = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, "\ufeff")))
	s = strings.TrimSuffix(s, ".")
	return strings.Join(strings.Fields(s), " ")
}

// header maps columns to their index in a row; -1 when absent.
type header struct {
	idx   [numColumns]int
	width int
}

// canonical maps every accepted spelling of a column, normalised by
// normHeader, to the column's name in errors.
var canonical = func() map[string]string {
	m := map[string]string{}
	for _, names := range columnNames {
		for _, n := range names[1:] {
			m[n] = names[0]
		}
	}
	return m
}()

// nearHeader is how many of the known columns a row must name to be taken
// for the header even though a required column is missing (renamed): the
// error then names what is missing instead of finding no header at all.
const nearHeader = 3

// headerRow is what a row says as a header row.
type headerRow struct {
	h header
	// found is set when the row names every required column, each once.
	found bool
	// known counts the columns it names; missing lists the required ones
	// it lacks.
	known   int
	missing []string
	// err is a column named twice (rawcsv.Header's rule), in a row that
	// looks like the header.
	err error
}

// findHeader reads rec as a header row: columns are found by name
// (columnNames), and a column named twice, under one spelling or two, is
// an error naming it when the row is the header or close to it.
func findHeader(rec []string) headerRow {
	cols := rawcsv.NewHeader(rec, func(cell string) string { return canonical[normHeader(cell)] })
	var r headerRow
	var dup error
	for c, names := range columnNames {
		i, err := cols.Column(names[0])
		r.h.idx[c] = i
		if cols.Has(names[0]) {
			r.known++
		}
		if errors.Is(err, rawcsv.ErrDuplicateColumn) && dup == nil {
			dup = err
		}
	}
	for _, c := range requiredColumns {
		if !cols.Has(columnNames[c][0]) {
			r.missing = append(r.missing, columnNames[c][0])
		}
	}
	if dup != nil && (len(r.missing) == 0 || r.known >= nearHeader) {
		r.err = dup
		return r
	}
	r.found = len(r.missing) == 0 && dup == nil
	r.h.width = len(rec)
	return r
}

// mayBeHeader is a quick necessary condition of findHeader, checked first
// on every row: a header names the receipt column, and every name of it
// begins with "receipt" once normalised. It saves normalising every cell
// of every row.
func mayBeHeader(rec []string) bool {
	for _, cell := range rec {
		c := strings.TrimSpace(strings.TrimPrefix(cell, "\ufeff"))
		if len(c) >= len("receipt") && strings.EqualFold(c[:len("receipt")], "receipt") {
			return true
		}
	}
	return false
}

// ParseStatement implements providers.StatementParser.
func (sp StatementParser) ParseStatement(r io.Reader, file string, emit func(providers.Sighting) error,
	reject func(perr *ledger.ParseError, raw []byte) error) error {
	cr, err := openStatement(r, file)
	if err != nil {
		return err
	}
	st := sp.newState(file)
	var hs headerSearch
	lines := 0
	var pe *csv.ParseError // one for the file: As needs its address
	for {
		fields, consumed, err := cr.Read()
		if err == io.EOF {
			break
		}
		raw := bytes.TrimRight(consumed, "\r\n")
		lines++
		if err != nil && errors.As(err, &pe) {
			if hs.found {
				if err := rejectBadCSV(file, pe, consumed, raw, reject); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("mpesa: read statement %s: %w", file, err)
		}
		line, _ := cr.CSV.FieldPos(0)
		if !hs.found {
			if err := sp.checkPreamble(file, fields, line); err != nil {
				return err
			}
			if err := hs.look(file, fields, line); err != nil {
				return err
			}
			continue
		}
		if blankRow(fields) {
			continue
		}
		if mayBeHeader(fields) {
			// Exports pasted together repeat the header.
			again, err := st.headerAgain(fields, line, raw, reject)
			if err != nil {
				return err
			}
			if again {
				continue
			}
		}
		s, perr := st.row(hs.h, fields, line, raw)
		if perr == nil && !st.text.repeat {
			st.observe(s.Txn)
			perr = st.balance(line, &s, st.text.balance)
		}
		if perr != nil {
			if err := reject(perr, raw); err != nil {
				return err
			}
			continue
		}
		if hs.h.idx[colBalance] < 0 {
			s.Warnings = append(s.Warnings, noBalanceWarning)
		}
		if st.text.repeat {
			if err := emit(s); err != nil {
				return err
			}
			continue
		}
		st.out = st.settle(st.out[:0], s, st.text.reason, st.text.details, st.text.other)
		for _, x := range st.out {
			if err := emit(x); err != nil {
				return err
			}
		}
	}
	if err := emitAll(st.finish(), emit); err != nil {
		return err
	}
	return hs.missing(file, lines)
}

// emitAll emits each of xs in order, stopping at the first error.
func emitAll(xs []providers.Sighting, emit func(providers.Sighting) error) error {
	for _, x := range xs {
		if err := emit(x); err != nil {
			return err
		}
	}
	return nil
}

// openStatement opens r as CSV with the encoding sniffed, rows of any width
// and the record reused between rows.
func openStatement(r io.Reader, file string) (*rawcsv.Reader, error) {
	cr, err := rawcsv.NewReader(r)
	if err != nil {
		return nil, &ledger.ParseError{File: file, Line: 1, Err: err}
	}
	cr.CSV.FieldsPerRecord = -1
	cr.CSV.ReuseRecord = true // no row's slice of fields is kept; its strings are
	return cr, nil
}

// newState starts the state of one statement file, stamped with the
// parser's clock.
func (sp StatementParser) newState(file string) *statementState {
	now := time.Now
	if sp.Clock != nil {
		now = sp.Clock
	}
	return &statementState{file: file, receivedAt: now().UTC(), seen: map[string]seenRow{}}
}

// rejectBadCSV rejects a row that is not valid CSV; it fails when the reader
// made no progress past it.
func rejectBadCSV(file string, pe *csv.ParseError, consumed, raw []byte,
	reject func(perr *ledger.ParseError, raw []byte) error) error {
	if rerr := reject(&ledger.ParseError{File: file, Line: pe.StartLine, Err: fmt.Errorf("bad CSV: %w", pe.Err)}, raw); rerr != nil {
		return rerr
	}
	if len(consumed) == 0 {
		return fmt.Errorf("mpesa: read statement %s: no progress after line %d", file, pe.StartLine)
	}
	return nil
}

// preambleShortCode are the names, normalised by normHeader, under which a
// preamble row gives the short code the statement is of.
var preambleShortCode = map[string]bool{"paybill": true, "paybill number": true, "till": true, "till number": true,
	"short code": true, "shortcode": true, "business number": true, "organisation short code": true,
	"organization short code": true}

// checkPreamble refuses a row before the header that names a short code
// other than sp.ShortCode.
func (sp StatementParser) checkPreamble(file string, fields []string, line int) error {
	if sp.ShortCode == "" || len(fields) < 2 || !preambleShortCode[normHeader(fields[0])] {
		return nil
	}
	code := strings.TrimSpace(fields[1])
	if code == "" || code == sp.ShortCode {
		return nil
	}
	return &ledger.ParseError{File: file, Line: line, Field: strings.TrimSpace(fields[0]), Err: fmt.Errorf(
		"the statement is of short code %s, not %s: import it into that account (--account %s), or under its own configuration",
		ledger.SafeLine(code, 32), sp.ShortCode, ledger.SafeLine(code, 32))}
}

// headerSearch is the search for the header row among the first rows of a
// statement.
type headerSearch struct {
	h     header
	found bool
	// near is the first row that looked like the header without
	// being it, and nearLine its line.
	near     headerRow
	nearLine int
}

// look takes one row before the header: the header itself, a row close to
// it (kept for the error when none is found) or anything else (skipped).
func (hs *headerSearch) look(file string, fields []string, line int) error {
	hr := findHeader(fields)
	var dup *rawcsv.DuplicateColumnError
	switch {
	case errors.As(hr.err, &dup):
		return &ledger.ParseError{File: file, Line: line, Field: dup.Column, Err: hr.err}
	case hr.found:
		hs.h, hs.found = hr.h, true
	case hr.known >= nearHeader && hr.known > hs.near.known:
		hs.near, hs.nearLine = hr, line
	}
	return nil
}

// missing is the error of a file read to its end: nil when the header was
// found, else what the closest row lacked or that there was no header.
func (hs *headerSearch) missing(file string, lines int) error {
	want := make([]string, len(requiredColumns))
	for i, c := range requiredColumns {
		want[i] = columnNames[c][0]
	}
	switch {
	case !hs.found && hs.near.known > 0:
		return &ledger.ParseError{File: file, Line: hs.nearLine, Field: hs.near.missing[0], Err: fmt.Errorf(
			"the header row lacks column(s) %s (a portal statement names %s; other columns are ignored)",
			strings.Join(hs.near.missing, ", "), strings.Join(want, ", "))}
	case !hs.found:
		return &ledger.ParseError{File: file, Field: "header", Err: fmt.Errorf("no header row in %d line(s) (want columns %s)",
			lines, strings.Join(want, ", "))}
	}
	return nil
}

// headerAgain handles a row after the header that may be the header
// repeated: a repeat starts another export's balance chain, a repeat with a
// duplicate column is rejected. again says the row was taken (so it is no
// transaction); err is reject's error.
func (st *statementState) headerAgain(fields []string, line int, raw []byte,
	reject func(perr *ledger.ParseError, raw []byte) error) (again bool, err error) {
	hr := findHeader(fields)
	var dup *rawcsv.DuplicateColumnError
	if errors.As(hr.err, &dup) {
		return true, reject(&ledger.ParseError{File: st.file, Line: line, Field: dup.Column, Err: hr.err}, raw)
	}
	if hr.found {
		st.sweep.prev = nil // another export: its chain starts again
		return true, nil
	}
	return false, nil
}

func blankRow(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// seenRow remembers a receipt within one file, in few bytes: a statement
// can have millions of rows.
type seenRow struct {
	line int32
	// sig is a hash of what must not differ between two rows of the
	// receipt. A collision can only hide a contradiction from this check;
	// the books still quarantine it.
	sig uint64
}

type statementState struct {
	// out holds the sightings settle gives for a row, until emitted.
	out        []providers.Sighting
	file       string
	receivedAt time.Time
	seen       map[string]seenRow
	// types remembers typeOfReason of the first reasons of the file: a
	// statement has few.
	types map[reasonKey]ledger.TxnType
	// statuses remembers statusOf likewise.
	statuses map[string]statusResult
	// text is what the last row said beyond its transaction, for the
	// balance check and settlements.
	text rowText
	// sweep is the running balance and the settlements of the file
	// (settlement.go).
	sweep sweep
}

// rowText is what a row says beyond its transaction.
type rowText struct {
	reason, details, other, balance string
	// bal is the row's balance, read by balance when hasBal.
	bal    decimal.Decimal
	hasBal bool
	// repeat says the file showed the row before (exports pasted
	// together): it is neither checked nor swept again.
	repeat bool
}

type statusResult struct {
	status ledger.TxnStatus
	ok     bool
}

type reasonKey struct {
	reason string
	paidIn bool
}

// maxTypes bounds statementState.types and statuses.
const maxTypes = 64

// statusOf is statusOf, remembered.
func (st *statementState) statusOf(s string) (ledger.TxnStatus, bool) {
	if r, ok := st.statuses[s]; ok {
		return r.status, r.ok
	}
	status, ok := statusOf(s)
	if len(st.statuses) < maxTypes {
		if st.statuses == nil {
			st.statuses = map[string]statusResult{}
		}
		st.statuses[strings.Clone(s)] = statusResult{status, ok}
	}
	return status, ok
}

// typeOf is typeOfReason, remembered.
func (st *statementState) typeOf(reason string, paidIn bool) ledger.TxnType {
	if t, ok := st.types[reasonKey{reason, paidIn}]; ok {
		return t
	}
	t := typeOfReason(reason, paidIn)
	if len(st.types) < maxTypes {
		if st.types == nil {
			st.types = map[reasonKey]ledger.TxnType{}
		}
		// A copy: reason is part of the row's text, which it would keep.
		st.types[reasonKey{strings.Clone(reason), paidIn}] = t
	}
	return t
}

// refPrefix begins the ref of every statement row's source.
const refPrefix = "statement:"

func (st *statementState) fail(line int, c column, err error) *ledger.ParseError {
	return &ledger.ParseError{File: st.file, Line: line, Field: columnNames[c][0], Err: err}
}

var accRef = regexp.MustCompile(`(?i)\bAcc\.\s*(.+)$`)

// checkWidth rejects a row with fewer fields than the columns read need, or
// with text past the header's width.
func (st *statementState) checkWidth(h *header, fields []string, line int) *ledger.ParseError {
	if len(fields) < h.width {
		// A short row is fine only if what is missing lies past every column we read.
		for _, i := range h.idx {
			if i >= len(fields) {
				return &ledger.ParseError{File: st.file, Line: line,
					Err: fmt.Errorf("has %d fields, the header has %d", len(fields), h.width)}
			}
		}
	}
	if len(fields) > h.width && !blankRow(fields[h.width:]) {
		return &ledger.ParseError{File: st.file, Line: line,
			Err: fmt.Errorf("has %d fields, the header has %d", len(fields), h.width)}
	}
	return nil
}

// occurredAt is the row's time: its completion time, else its initiation
// time.
func (st *statementState) occurredAt(line int, completion, initiation string) (time.Time, *ledger.ParseError) {
	whenCol := colCompletion
	when := completion
	if when == "" && initiation != "" {
		whenCol, when = colInitiation, initiation
	}
	if when == "" {
		return time.Time{}, st.fail(line, colCompletion, errMissing)
	}
	at, err := parseStatementTime(when)
	if err != nil {
		return time.Time{}, st.fail(line, whenCol, err)
	}
	return at, nil
}

// remember notes the receipt id of a valid row with its signature, and
// rejects a row whose receipt the file showed before with a different
// signature. st.text.repeat says whether the file showed it before.
func (st *statementState) remember(id string, sig uint64, line int) *ledger.ParseError {
	prev, ok := st.seen[id]
	st.text.repeat = ok
	switch {
	case !ok:
		st.seen[id] = seenRow{line: int32(line), sig: sig}
	case prev.sig != sig:
		return st.fail(line, colReceipt,
			fmt.Errorf("receipt %s is also on line %d with a different type, status, amount or time", id, prev.line))
	}
	return nil
}

// row reads one transaction row under header h.
func (st *statementState) row(h header, fields []string, line int, raw []byte) (providers.Sighting, *ledger.ParseError) {
	if perr := st.checkWidth(&h, fields, line); perr != nil {
		return providers.Sighting{}, perr
	}
	get := func(c column) string {
		if i := h.idx[c]; i >= 0 && i < len(fields) {
			return strings.TrimSpace(fields[i])
		}
		return ""
	}
	id, err := receipt(get(colReceipt))
	if err != nil {
		return providers.Sighting{}, st.fail(line, colReceipt, err)
	}
	// The source's ref and the id in one string of their own: the id then
	// keeps no part of the row's text.
	ref := refPrefix + id
	id = ref[len(refPrefix):]
	status, ok := st.statusOf(get(colStatus))
	if !ok {
		if get(colStatus) == "" {
			return providers.Sighting{}, st.fail(line, colStatus, errMissing)
		}
		return providers.Sighting{}, st.fail(line, colStatus, fmt.Errorf("%q is not a known status (want Completed or Failed)", get(colStatus)))
	}
	amt, paidIn, perr := st.amount(line, get(colPaidIn), get(colWithdrawn), status)
	if perr != nil {
		return providers.Sighting{}, perr
	}
	at, perr := st.occurredAt(line, get(colCompletion), get(colInitiation))
	if perr != nil {
		return providers.Sighting{}, perr
	}
	linked := ""
	if l := get(colLinked); l != "" {
		if linked, err = receipt(l); err != nil {
			return providers.Sighting{}, st.fail(line, colLinked, err)
		}
	}
	details := get(colDetails)
	reason := get(colReason)
	if reason == "" {
		// Details ends with the payer's account reference, which must not
		// decide the type ("Acc. DELIVERY CHARGE").
		reason = accRef.ReplaceAllString(details, "")
	}
	st.text = rowText{reason: get(colReason), details: details, other: get(colOther), balance: get(colBalance)}
	account := get(colAccount)
	if account == "" {
		if m := accRef.FindStringSubmatch(details); m != nil {
			account = strings.TrimSpace(m[1])
		}
	}
	t := ledger.ProviderTxn{Provider: Provider, ID: id, Type: st.typeOf(reason, paidIn), Status: status, Amount: amt,
		OccurredAt: at, Reference: account, Counterparty: partyCounterparty(get(colOther)), LinkedID: linked}
	if linked == id {
		t.LinkedID = ""
	}
	if err := ledger.ValidateTxn(t); err != nil {
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			return providers.Sighting{}, &ledger.ParseError{File: st.file, Line: line, Field: fe.Field, Err: fe.Err}
		}
		return providers.Sighting{}, &ledger.ParseError{File: st.file, Line: line, Err: err}
	}
	if perr := st.remember(id, rowSig(t), line); perr != nil {
		return providers.Sighting{}, perr
	}
	return providers.Sighting{Txn: t, Source: ledger.Source{Channel: ChannelStatement, Ref: ref,
		Raw: raw, ReceivedAt: st.receivedAt}}, nil
}

// rowSig hashes (FNV-1a) what must not differ between two rows of one
// receipt: the type, the status, the amount as its text at the currency's
// exponent says it (in minor units) and the time to the second (as RFC 3339
// in UTC says it, t being in UTC). The hash stays in memory: it only needs
// to be the same for two equal rows of one file.
func rowSig(t ledger.ProviderTxn) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	str := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * prime
		}
		h = (h ^ '|') * prime
	}
	word := func(v uint64) {
		for range 8 {
			h = (h ^ (v & 0xff)) * prime
			v >>= 8
		}
	}
	str(string(t.Type))
	str(string(t.Status))
	if minor, ok := minorUnits(t.Amount); ok {
		word(0)
		word(uint64(minor))
	} else {
		word(1)
		str(t.Amount.Text())
	}
	word(uint64(t.OccurredAt.Unix()))
	return h
}

// currencyExp is the exponent of Currency.
var currencyExp = func() int32 {
	e, err := money.Exponent(Currency)
	if err != nil {
		panic(err)
	}
	return e
}()

// coefLimits are ±10^16 at each exponent from 0 down to -currencyExp: a
// coefficient between them fits an int64 even in minor units.
var coefLimits = func() (l [][2]decimal.Decimal) {
	for k := range currencyExp + 1 {
		l = append(l, [2]decimal.Decimal{decimal.New(-1e16, -k), decimal.New(1e16, -k)})
	}
	return l
}()

// minorUnits is a.Minor(), without allocating for the amounts a statement
// holds: in Currency, with at most its decimals and a coefficient below
// 10^16 (compared at its own exponent, which allocates nothing). Other
// amounts go through a.Minor().
func minorUnits(a money.Amount) (int64, bool) {
	k := -a.Value.Exponent()
	if a.Currency != Currency || k < 0 || int(k) >= len(coefLimits) ||
		a.Value.Cmp(coefLimits[k][0]) <= 0 || a.Value.Cmp(coefLimits[k][1]) >= 0 {
		m, err := a.Minor()
		return m, err == nil
	}
	c := a.Value.CoefficientInt64()
	for range currencyExp - k {
		c *= 10
	}
	return c, true
}

// amount reads Paid In and Withdrawn: exactly one carries the amount.
// Withdrawn may be written negative or positive; its column gives the
// direction.
func (st *statementState) amount(line int, in, out string, status ledger.TxnStatus) (money.Amount, bool, *ledger.ParseError) {
	var inA, outA money.Amount
	var err error
	if in != "" {
		if inA, err = statementAmount(in); err != nil {
			return money.Amount{}, false, st.fail(line, colPaidIn, err)
		}
		if inA.Value.IsNegative() {
			return money.Amount{}, false, st.fail(line, colPaidIn, fmt.Errorf("%s is negative", in))
		}
	}
	if out != "" {
		if outA, err = statementAmount(out); err != nil {
			return money.Amount{}, false, st.fail(line, colWithdrawn, err)
		}
		outA.Value = outA.Value.Abs()
	}
	inSet := in != "" && !inA.Value.IsZero()
	outSet := out != "" && !outA.Value.IsZero()
	switch {
	case inSet && outSet:
		return money.Amount{}, false, st.fail(line, colPaidIn, fmt.Errorf("both Paid In (%s) and Withdrawn (%s) are set", in, out))
	case inSet:
		return inA, true, nil
	case outSet:
		return outA, false, nil
	case in == "" && out == "":
		return money.Amount{}, false, st.fail(line, colPaidIn, errors.New("both Paid In and Withdrawn are empty"))
	case status == ledger.TxnSucceeded:
		return money.Amount{}, false, st.fail(line, colPaidIn, errors.New("a completed row moves no money (Paid In and Withdrawn are zero)"))
	}
	if in != "" {
		return inA, true, nil
	}
	return outA, false, nil
}

// isGrouped says whether s is an amount with thousands separators, as
// ^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$ would (checked by hand: it runs on most
// statement amounts): an optional sign, one to three digits, then groups of
// a comma and three digits, then an optional fraction of at least one digit.
func isGrouped(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if n := digits(); n < 1 || n > 3 {
		return false
	}
	groups := 0
	for i < len(s) && s[i] == ',' {
		i++
		if digits() != 3 {
			return false
		}
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() < 1 {
			return false
		}
	}
	return i == len(s)
}

// statementAmount parses a statement amount: "1000.00", "-15.00" or, with
// thousands separators, "1,131,340.00". Misplaced separators are an error.
func statementAmount(s string) (money.Amount, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ",") {
		if !isGrouped(s) {
			return money.Amount{}, fmt.Errorf("%q has misplaced thousands separators", s)
		}
		if a, ok := groupedAmount(s); ok {
			return a, nil
		}
		s = strings.ReplaceAll(s, ",", "")
	}
	return money.Parse(s, Currency)
}

// groupedAmount reads s, an isGrouped amount, as money.Parse reads it
// without its separators, when that is short (money.QuickDecimal).
// Otherwise it returns false.
func groupedAmount(s string) (money.Amount, bool) {
	v, ok := money.QuickDecimal(s, currencyExp)
	if !ok {
		return money.Amount{}, false
	}
	return money.Amount{Value: v, Currency: Currency}, true
}
