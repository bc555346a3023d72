package stripe

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/internal/quicktime"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/csvfile"
)

// ChannelStatement is the source channel of report rows. Each sighting's
// ref is the row's balance transaction id, so importing the same rows again
// (the same file, or a later report that overlaps it) adds nothing.
const ChannelStatement = "statement"

// The Stripe reports this parser reads. All are itemized by balance
// transaction and share its columns; the parser finds columns by name, so
// the version suffix and the column set may vary.
const (
	// ReportBalanceChange lists the balance transactions created in the
	// interval: the report for daily reconciliation.
	ReportBalanceChange = "balance_change_from_activity.itemized.3"
	// ReportPayoutReconciliation lists the balance transactions settled by
	// the automatic payouts paid in the interval: a charge appears days
	// after it was made, with its payout.
	ReportPayoutReconciliation = "payout_reconciliation.itemized.5"
	// ReportEndingBalance lists the balance transactions not yet paid out
	// at the end of the interval.
	ReportEndingBalance = "ending_balance_reconciliation.itemized.4"
)

// ReportType is the payout reconciliation report, kept for callers that
// named the one report this parser once read.
const ReportType = ReportPayoutReconciliation

// ReportColumns returns the columns to request (parameters[columns][]) when
// running any of the reports above with the Reporting API, for intents
// whose key is in metadata[key] (empty: MetadataIntentKey). Naming the
// columns keeps a column Stripe adds later from changing the file.
func ReportColumns(key string) []string {
	if key == "" {
		key = MetadataIntentKey
	}
	return []string{"balance_transaction_id", "created_utc", "charge_created_utc", "currency", "gross", "fee", "net",
		"reporting_category", "source_id", "charge_id", "payment_intent_id", "customer_facing_amount",
		"customer_facing_currency", "customer_id", "customer_email", "automatic_payout_id", "description",
		"payment_metadata[" + key + "]"}
}

const reportTimeLayout = "2006-01-02 15:04:05"

// ReportParser reads Stripe's itemized balance reports (ReportBalanceChange,
// ReportPayoutReconciliation, ReportEndingBalance) in their default or
// extended column sets. It implements providers.StatementParser.
//
// Amounts are decimal strings in major units, refused when they carry more
// decimals than the currency allows. Times in _utc columns are UTC; the
// others are read in Location, the timezone the report was run with.
//
// Every reporting category Stripe documents is read (see normalize); a
// category it does not document is imported as "other" with a warning and
// never as a charge. Charges, refunds and disputes are compared in the
// customer-facing amount and currency when the report has those columns;
// gross and currency are then kept as the settlement.
//
// Linking needs payment_intent_id or payment_metadata[MetadataKey], and
// charge_id or source_id: a report without them is refused with the
// columns to add.
type ReportParser struct {
	// Location is the zone of the columns without _utc. Nil: only _utc
	// columns may be used.
	Location *time.Location
	// MetadataKey is the metadata key that carries the intent key
	// (payment_metadata[MetadataKey]); default MetadataIntentKey.
	MetadataKey string
	// Clock stamps sightings with their receipt time. Default time.Now.
	Clock func() time.Time
}

var _ providers.StatementParser = ReportParser{}

// reportRow is one row of the report, typed.
type reportRow struct {
	BalanceTxnID    string
	Created         time.Time
	ChargeCreated   time.Time
	Currency        string
	Gross, Fee      money.Amount
	Presented       money.Amount
	Category        string
	SourceID        string
	ChargeID        string
	PaymentIntent   string
	CustomerID      string
	CustomerEmail   string
	IntentKey       string
	AutomaticPayout string
	// PayoutEffective is when the automatic payout is expected at the
	// bank (automatic_payout_effective_at); zero when not given.
	PayoutEffective  time.Time
	presentedColumns bool
}

type reportCols struct {
	btx, createdUTC, created, chargeCreatedUTC, chargeCreated, currency, gross, fee, net, category, source,
	charge, pi, customer, email, intentKey, faceAmount, faceCurrency, payout, payoutAtUTC, payoutAt int
	metadataColumn string
}

func (p ReportParser) key() string {
	if p.MetadataKey != "" {
		return p.MetadataKey
	}
	return MetadataIntentKey
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
	fileNotes := cols.notes()
	cr.ReuseRecords()
	var (
		perr *ledger.ParseError
		fe   *ledger.FieldError
		// txns holds a line's transactions until they are emitted
		// (copied into their sightings).
		txns = make([]ledger.ProviderTxn, 0, 2)
	)
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		perr = nil
		if err != nil && !errors.As(err, &perr) {
			return err
		}
		var row reportRow
		if perr == nil {
			row, perr = p.row(cols, rec, file)
		}
		var res lineResult
		if perr == nil {
			var lerr *lineError
			if res, lerr = row.line().normalizeInto(txns); lerr != nil {
				perr = &ledger.ParseError{File: file, Line: rec.Line, Field: lerr.field, Err: lerr.err}
			}
		}
		for _, t := range res.txns {
			if err := ledger.ValidateTxn(t); perr == nil && err != nil {
				perr = &ledger.ParseError{File: file, Line: rec.Line, Err: err}
				if errors.As(err, &fe) {
					perr.Field, perr.Err = fe.Field, fe.Err
				}
			}
		}
		if perr != nil {
			if err := reject(perr, rec.Raw); err != nil {
				return err
			}
			continue
		}
		for i, t := range res.txns {
			s := providers.Sighting{Txn: t, Source: ledger.Source{Channel: ChannelStatement, Ref: row.BalanceTxnID, Raw: rec.Raw, ReceivedAt: now}}
			if i == 0 {
				row.payout(&s, res.txns)
				s.Category = res.category
				if res.warning != "" {
					s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: %s", rec.Line, res.warning))
					s.Warnings = append(s.Warnings, fileNotes...)
				} else if len(fileNotes) > 0 {
					// Shared by every line; an append copies it.
					s.Warnings = fileNotes[:len(fileNotes):len(fileNotes)]
				}
			}
			if err := emit(s); err != nil {
				return err
			}
		}
	}
}

// notes are the warnings the report's columns call for, given with every
// line: no customer-facing amount, or rows listed by payout.
func (cols reportCols) notes() []string {
	var fileNotes []string
	if cols.faceAmount < 0 || cols.faceCurrency < 0 {
		fileNotes = append(fileNotes, "the report has no customer_facing_amount and customer_facing_currency columns: "+
			"payments are compared in the settlement currency (gross, currency); add those columns for payments presented in other currencies")
	}
	if cols.payout >= 0 {
		fileNotes = append(fileNotes, "rows of a payout reconciliation report are listed by payout: a payment not yet paid out is not in it "+
			"(reconcile days from the balance change report or the API, or give the settlement grace your payout delay)")
	}
	return fileNotes
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
	mdCol := "payment_metadata[" + p.key() + "]"
	c := reportCols{btx: col("balance_transaction_id"), createdUTC: col("created_utc"), created: col("created"),
		chargeCreatedUTC: col("charge_created_utc"), chargeCreated: col("charge_created"), currency: col("currency"),
		gross: col("gross"), fee: col("fee"), net: col("net"), category: col("reporting_category"),
		source: col("source_id"), charge: col("charge_id"), pi: col("payment_intent_id"), customer: col("customer_id"),
		email: col("customer_email"), intentKey: col(mdCol), faceAmount: col("customer_facing_amount"),
		faceCurrency: col("customer_facing_currency"), payout: col("automatic_payout_id"),
		payoutAtUTC: col("automatic_payout_effective_at_utc"), payoutAt: col("automatic_payout_effective_at"), metadataColumn: mdCol}
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
	if len(missing) > 0 {
		sort.Strings(missing)
		return c, &ledger.ParseError{File: file, Line: cr.HeaderLine(), Field: missing[0],
			Err: fmt.Errorf("header row lacks column(s) %s of a Stripe itemized balance report such as %s (is this the header row?)",
				strings.Join(missing, ", "), ReportBalanceChange)}
	}
	var link []string
	if c.pi < 0 && c.intentKey < 0 {
		link = append(link, "payment_intent_id or "+mdCol)
	}
	if c.charge < 0 && c.source < 0 {
		link = append(link, "charge_id or source_id")
	}
	if len(link) > 0 {
		field := "payment_intent_id"
		if c.pi >= 0 || c.intentKey >= 0 {
			field = "charge_id"
		}
		return c, &ledger.ParseError{File: file, Line: cr.HeaderLine(), Field: field,
			Err: fmt.Errorf("the report lacks the linking column(s) %s, without which no row links to an intent: "+
				"run it again with them (Dashboard: the report's Columns menu; Reporting API: name them in parameters[columns][]; "+
				"docs/stripe.md lists the columns to ask for)", strings.Join(link, "; "))}
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
		CustomerEmail: rec.Get(c.email), IntentKey: rec.Get(c.intentKey), AutomaticPayout: rec.Get(c.payout)}
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
	if row.PayoutEffective, err = p.time(rec, c.payoutAtUTC, c.payoutAt); err != nil {
		return bad(timeField(c.payoutAtUTC, "automatic_payout_effective_at"), "%w", err)
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
		short := max(len(rec.Get(c.net)), len(rec.Get(c.gross)), len(rec.Get(c.fee))) <= maxShortAmount
		if !netOf(net, row.Gross, row.Fee, short) {
			return bad("net", "%s is not gross %s minus fee %s", net.Text(), row.Gross.Text(), row.Fee.Text())
		}
	}
	row.presentedColumns = c.faceAmount >= 0 && c.faceCurrency >= 0
	if fa, fc := rec.Get(c.faceAmount), rec.Get(c.faceCurrency); fa != "" || fc != "" {
		if fa == "" {
			return bad("customer_facing_amount", "is empty while customer_facing_currency is %q", fc)
		}
		if fc == "" {
			return bad("customer_facing_currency", "is empty while customer_facing_amount is %q", fa)
		}
		cur, err := money.NormalizeCurrency(fc)
		if err != nil {
			return bad("customer_facing_currency", "%w", err)
		}
		if row.Presented, err = money.Parse(fa, cur); err != nil {
			return bad("customer_facing_amount", "%w", err)
		}
	}
	return row, nil
}

// maxShortAmount bounds the text of an amount whose coefficient netOf
// compares as an int64: 18 characters hold at most 18 digits.
const maxShortAmount = 18

// netOf says whether net is gross minus fee. When short (each was parsed
// from at most maxShortAmount characters, so that each coefficient and
// their difference fit an int64) and the three share an exponent (as a
// report writes them), their coefficients are compared without
// allocating.
func netOf(net, gross, fee money.Amount, short bool) bool {
	e := net.Value.Exponent()
	if short && gross.Value.Exponent() == e && fee.Value.Exponent() == e {
		return gross.Value.CoefficientInt64()-fee.Value.CoefficientInt64() == net.Value.CoefficientInt64()
	}
	return net.Value.Equal(gross.Value.Sub(fee.Value))
}

// payout puts what the row says of payouts on its first sighting s: a row
// of category payout is a payout, which left when the row was created; a
// row paid out in an automatic payout (automatic_payout_id) is one of its
// items, with its fee, and tells the payout's arrival when the report has
// automatic_payout_effective_at.
func (row reportRow) payout(s *providers.Sighting, txns []ledger.ProviderTxn) {
	if txns[0].Type == ledger.TxnPayout {
		s.Payout = &ledger.Payout{Provider: Provider, ID: txns[0].ID, InitiatedAt: row.Created}
		return
	}
	if row.AutomaticPayout == "" || row.AutomaticPayout == txns[0].ID {
		return
	}
	for _, t := range txns {
		s.PayoutItems = append(s.PayoutItems, ledger.PayoutItem{Provider: Provider, PayoutID: row.AutomaticPayout, TxnID: t.ID})
	}
	if !row.PayoutEffective.IsZero() {
		s.Payout = &ledger.Payout{Provider: Provider, ID: row.AutomaticPayout, ArrivalAt: row.PayoutEffective}
	}
}

// line is the row as a balance line.
func (row reportRow) line() balanceLine {
	return balanceLine{BalanceTxnID: row.BalanceTxnID, Created: row.Created, ChargeCreated: row.ChargeCreated,
		Category: row.Category, SourceID: row.SourceID, ChargeID: row.ChargeID, PaymentIntent: row.PaymentIntent,
		IntentKey: row.IntentKey, Counterparty: row.counterparty(), Gross: row.Gross, Fee: row.Fee, Presented: row.Presented}
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
	t, ok := quicktime.Parse(quicktime.YearFirst, s, loc)
	var err error
	if !ok {
		t, err = time.ParseInLocation(reportTimeLayout, s, loc)
	}
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

func (row reportRow) counterparty() string {
	if row.CustomerID != "" {
		return row.CustomerID
	}
	return ledger.MaskCustomer(row.CustomerEmail)
}
