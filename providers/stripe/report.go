package stripe

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/csvfile"
)

// ChannelStatement is the source channel of report rows. Each sighting's
// ref is the row's balance transaction id, so importing the same rows again
// (the same file, or a later report that overlaps it) adds nothing.
const ChannelStatement = "statement"

// ReportType is the Stripe report this parser reads.
const ReportType = "payout_reconciliation.itemized.5"

// ReportColumns are the columns to request (parameters[columns][]) when
// running the report, so that a column Stripe adds later cannot change the
// file. The parser finds columns by name and needs balance_transaction_id,
// created_utc or created, currency, gross, fee, reporting_category and
// source_id or charge_id; the others are optional.
var ReportColumns = []string{
	"balance_transaction_id", "created_utc", "charge_created_utc", "currency", "gross", "fee", "net",
	"reporting_category", "source_id", "charge_id", "payment_intent_id", "customer_id", "customer_email",
	"automatic_payout_id", "description", "payment_metadata[" + MetadataIntentKey + "]",
}

const reportTimeLayout = "2006-01-02 15:04:05"

// ReportParser reads payout reconciliation report CSVs (ReportType). It
// implements providers.StatementParser.
//
// Amounts are decimal strings in major units, refused when they carry more
// decimals than the currency allows. Times in _utc columns are UTC; the
// others are read in Location, the timezone the report was run with.
//
// Rows become sightings by reporting category: charge (the charge, plus its
// Stripe fee under the balance transaction id), refund (the refund, linked to
// its charge, plus any fee change), dispute (a reversal linked to the
// charge, plus the dispute fee), fee and payout. Charges, refunds, reversals
// and payouts are stored as magnitudes, their type giving the direction; a
// fee is positive when assessed and negative when returned. A row of another
// category is rejected with the reason, never dropped.
type ReportParser struct {
	// Location is the zone of the columns without _utc. Nil: only _utc
	// columns may be used.
	Location *time.Location
	// Clock stamps sightings with their receipt time. Default time.Now.
	Clock func() time.Time
}

var _ providers.StatementParser = ReportParser{}

// reportRow is one row of the report, typed.
type reportRow struct {
	BalanceTxnID  string
	Created       time.Time
	ChargeCreated time.Time
	Currency      string
	Gross, Fee    money.Amount
	Category      string
	SourceID      string
	ChargeID      string
	PaymentIntent string
	CustomerID    string
	CustomerEmail string
	IntentKey     string
}

type reportCols struct {
	btx, createdUTC, created, chargeCreatedUTC, chargeCreated, currency, gross, fee, net, category, source,
	charge, pi, customer, email, intentKey int
}

// ParseStatement reads a report CSV.
func (p ReportParser) ParseStatement(r io.Reader, file string, emit func(providers.Sighting) error,
	reject func(*ledger.ParseError, []byte) error) error {
	cr, err := csvfile.NewReader(r, file, ',')
	if err != nil {
		return err
	}
	cols, err := p.columns(cr, file)
	if err != nil {
		return err
	}
	clock := p.Clock
	if clock == nil {
		clock = time.Now
	}
	now := clock().UTC()
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var perr *ledger.ParseError
		if err != nil && !errors.As(err, &perr) {
			return err
		}
		var row reportRow
		if perr == nil {
			row, perr = p.row(cols, rec, file)
		}
		var ss []providers.Sighting
		if perr == nil {
			ss, perr = row.sightings(file, rec.Line)
		}
		for _, s := range ss {
			var fe *ledger.FieldError
			if err := ledger.ValidateTxn(s.Txn); perr == nil && errors.As(err, &fe) {
				perr = &ledger.ParseError{File: file, Line: rec.Line, Field: fe.Field, Err: fe.Err}
			}
		}
		if perr != nil {
			if err := reject(perr, rec.Raw); err != nil {
				return err
			}
			continue
		}
		for _, s := range ss {
			s.Source = ledger.Source{Channel: ChannelStatement, Ref: row.BalanceTxnID, Raw: rec.Raw, ReceivedAt: now}
			if err := emit(s); err != nil {
				return err
			}
		}
	}
}

func (p ReportParser) columns(cr *csvfile.Reader, file string) (reportCols, error) {
	var dups []error
	col := func(name string) int {
		i, err := cr.Column(name)
		if errors.Is(err, csvfile.ErrDuplicateColumn) {
			dups = append(dups, &ledger.ParseError{File: file, Line: cr.HeaderLine(), Field: name, Err: err})
		}
		return i
	}
	c := reportCols{btx: col("balance_transaction_id"), createdUTC: col("created_utc"), created: col("created"),
		chargeCreatedUTC: col("charge_created_utc"), chargeCreated: col("charge_created"), currency: col("currency"),
		gross: col("gross"), fee: col("fee"), net: col("net"), category: col("reporting_category"),
		source: col("source_id"), charge: col("charge_id"), pi: col("payment_intent_id"), customer: col("customer_id"),
		email: col("customer_email"), intentKey: col("payment_metadata[" + MetadataIntentKey + "]")}
	if len(dups) > 0 {
		return c, errors.Join(dups...)
	}
	var missing []string
	for name, i := range map[string]int{"balance_transaction_id": c.btx, "currency": c.currency, "gross": c.gross,
		"fee": c.fee, "reporting_category": c.category} {
		if i < 0 {
			missing = append(missing, name)
		}
	}
	if c.createdUTC < 0 && c.created < 0 {
		missing = append(missing, "created_utc")
	}
	if c.source < 0 && c.charge < 0 {
		missing = append(missing, "source_id")
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return c, &ledger.ParseError{File: file, Line: cr.HeaderLine(), Field: missing[0],
			Err: fmt.Errorf("header row lacks column(s) %s of a %s report (is this the header row?)", strings.Join(missing, ", "), ReportType)}
	}
	if c.createdUTC < 0 && p.Location == nil {
		return c, &ledger.ParseError{File: file, Line: cr.HeaderLine(), Field: "created",
			Err: errors.New("only the local-time column is present and no report timezone was given")}
	}
	return c, nil
}

func (p ReportParser) row(c reportCols, rec csvfile.Record, file string) (reportRow, *ledger.ParseError) {
	bad := func(field, format string, args ...any) (reportRow, *ledger.ParseError) {
		return reportRow{}, &ledger.ParseError{File: file, Line: rec.Line, Field: field, Err: fmt.Errorf(format, args...)}
	}
	row := reportRow{BalanceTxnID: rec.Get(c.btx), Category: rec.Get(c.category), SourceID: rec.Get(c.source),
		ChargeID: rec.Get(c.charge), PaymentIntent: rec.Get(c.pi), CustomerID: rec.Get(c.customer),
		CustomerEmail: rec.Get(c.email), IntentKey: rec.Get(c.intentKey)}
	if row.BalanceTxnID == "" {
		return bad("balance_transaction_id", "is empty")
	}
	var err error
	if row.Created, err = p.time(rec, c.createdUTC, c.created); err != nil {
		return bad(timeField(c.createdUTC, "created"), "%w", err)
	}
	if row.Created.IsZero() {
		return bad(timeField(c.createdUTC, "created"), "is empty")
	}
	if row.ChargeCreated, err = p.time(rec, c.chargeCreatedUTC, c.chargeCreated); err != nil {
		return bad(timeField(c.chargeCreatedUTC, "charge_created"), "%w", err)
	}
	code := rec.Get(c.currency)
	if code == "" {
		return bad("currency", "is empty")
	}
	if row.Currency, err = money.NormalizeCurrency(code); err != nil {
		return bad("currency", "%w", err)
	}
	if row.Gross, err = money.Parse(rec.Get(c.gross), row.Currency); err != nil {
		return bad("gross", "%w", err)
	}
	if row.Fee, err = money.Parse(rec.Get(c.fee), row.Currency); err != nil {
		return bad("fee", "%w", err)
	}
	if c.net >= 0 && rec.Get(c.net) != "" {
		net, err := money.Parse(rec.Get(c.net), row.Currency)
		if err != nil {
			return bad("net", "%w", err)
		}
		if want := row.Gross.Value.Sub(row.Fee.Value); !net.Value.Equal(want) {
			return bad("net", "%s is not gross %s minus fee %s", net.Text(), row.Gross.Text(), row.Fee.Text())
		}
	}
	return row, nil
}

func timeField(utcCol int, base string) string {
	if utcCol >= 0 {
		return base + "_utc"
	}
	return base
}

// time reads the _utc column if the report has it, else the local one.
func (p ReportParser) time(rec csvfile.Record, utcCol, localCol int) (time.Time, error) {
	col, loc := utcCol, time.UTC
	if col < 0 {
		col, loc = localCol, p.Location
	}
	if col < 0 {
		return time.Time{}, nil
	}
	s := rec.Get(col)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(reportTimeLayout, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time like 2024-11-23 14:05:06", s)
	}
	if t.Nanosecond() != 0 {
		return time.Time{}, fmt.Errorf("%q has a fraction of a second; report times are whole seconds", s)
	}
	if u := t.Unix(); u < 1 || u > maxUnix {
		return time.Time{}, fmt.Errorf("%q is not a plausible time", s)
	}
	return t.UTC(), nil
}

// sightings normalises a row into the transactions it shows, all or none.
func (row reportRow) sightings(file string, line int) ([]providers.Sighting, *ledger.ParseError) {
	bad := func(field, format string, args ...any) ([]providers.Sighting, *ledger.ParseError) {
		return nil, &ledger.ParseError{File: file, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
	}
	gross := row.Gross.Value
	base := ledger.ProviderTxn{Provider: Provider, Status: ledger.TxnSucceeded, OccurredAt: row.Created,
		Reference: row.IntentKey, ProviderRef: row.PaymentIntent, Counterparty: row.counterparty()}
	main := base
	main.Amount = abs(row.Gross)
	chargeID := row.ChargeID
	switch row.Category {
	case "charge":
		if gross.IsNegative() {
			return bad("gross", "%s is negative on a charge", row.Gross.Text())
		}
		main.Type, main.ID = ledger.TxnCharge, row.SourceID
		if main.ID == "" {
			main.ID = row.ChargeID
		}
		if !row.ChargeCreated.IsZero() {
			main.OccurredAt = row.ChargeCreated
		}
		chargeID = main.ID
	case "refund":
		if gross.IsPositive() {
			return bad("gross", "%s is positive on a refund (refunds take money out)", row.Gross.Text())
		}
		main.Type, main.ID, main.LinkedID = ledger.TxnRefund, row.SourceID, row.ChargeID
	case "dispute":
		if gross.IsPositive() {
			return bad("gross", "%s is positive on a dispute (disputes take money out)", row.Gross.Text())
		}
		main.Type, main.ID, main.LinkedID = ledger.TxnReversal, row.SourceID, row.ChargeID
	case "payout":
		main.Type, main.ID = ledger.TxnPayout, row.SourceID
		main.Reference, main.ProviderRef, main.Counterparty = "", "", ""
	case "fee":
		main.Type, main.ID, main.LinkedID = ledger.TxnFee, row.BalanceTxnID, row.SourceID
		main.Amount = neg(row.Gross)
		main.Reference, main.ProviderRef, main.Counterparty = "", "", ""
		return []providers.Sighting{{Txn: main}}, nil
	case "":
		return bad("reporting_category", "is empty")
	default:
		return bad("reporting_category", "%q is not a category this parser reads (charge, refund, dispute, fee, payout)", row.Category)
	}
	if main.ID == "" {
		return bad("source_id", "is empty on a %s row", row.Category)
	}
	out := []providers.Sighting{{Txn: main}}
	if !row.Fee.Value.IsZero() {
		fee := base
		fee.Type, fee.ID, fee.LinkedID, fee.Amount = ledger.TxnFee, row.BalanceTxnID, chargeID, row.Fee
		fee.Reference, fee.ProviderRef, fee.Counterparty = "", "", ""
		if fee.ID == main.ID {
			return bad("balance_transaction_id", "equals the source id %q", main.ID)
		}
		out = append(out, providers.Sighting{Txn: fee})
	}
	return out, nil
}

func (row reportRow) counterparty() string {
	if row.CustomerID != "" {
		return row.CustomerID
	}
	return ledger.MaskCustomer(row.CustomerEmail)
}
