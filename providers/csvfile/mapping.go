package csvfile

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Mapping says how to read one statement layout. Column fields hold header
// names exactly as they appear in the file; the header row is required.
type Mapping struct {
	// Provider is the provider name stored on the transactions (and the
	// name `reconcile import statement --provider` takes). Required.
	Provider string `mapstructure:"provider"`
	// Delimiter is the field separator, one character. Default ",".
	Delimiter string `mapstructure:"delimiter"`

	// ID is the column with the transaction id, unique per provider.
	// Required.
	ID string `mapstructure:"id"`
	// Time is the column with when the transaction happened. Required.
	Time string `mapstructure:"time"`
	// TimeFormat is a Go time layout (e.g. "02/01/2006 15:04"). Required.
	TimeFormat string `mapstructure:"time_format"`
	// Zone is the IANA zone (e.g. "Africa/Nairobi") of times whose layout
	// carries no zone or offset; required for such layouts.
	Zone string `mapstructure:"zone"`

	// Amount is the column with a signed amount: positive is money in,
	// negative money out. Set either Amount or both Debit and Credit.
	Amount string `mapstructure:"amount"`
	// Debit and Credit are the columns with unsigned money out and money in;
	// on each row exactly one of them holds a non-zero amount.
	Debit  string `mapstructure:"debit"`
	Credit string `mapstructure:"credit"`
	// ThousandsSeparator, when set (",", ".", " " or "'"), is removed from
	// amounts before they are read ("1,500.00").
	ThousandsSeparator string `mapstructure:"thousands_separator"`
	// DecimalSeparator is "." (the default) or ",".
	DecimalSeparator string `mapstructure:"decimal_separator"`

	// Currency is the column with the ISO 4217 code; FixedCurrency is the
	// code of a single-currency file. Set exactly one.
	Currency      string `mapstructure:"currency"`
	FixedCurrency string `mapstructure:"fixed_currency"`

	// Status is the column with the transaction status, and StatusMap maps
	// its values (compared case-insensitively) to succeeded, failed or
	// pending; a value not in the map is an error. Without a Status column
	// every row is succeeded.
	Status    string            `mapstructure:"status"`
	StatusMap map[string]string `mapstructure:"status_map"`

	// Type is the column with the transaction type, and TypeMap maps its
	// values (case-insensitively) to charge, refund, reversal, fee or
	// payout; amounts are then taken as magnitudes and the type gives the
	// direction. Without a Type column, money in is a charge and money out
	// is OutType.
	Type    string            `mapstructure:"type"`
	TypeMap map[string]string `mapstructure:"type_map"`
	// OutType is the type of money-out rows when there is no Type column.
	// Default refund.
	OutType string `mapstructure:"out_type"`

	// Reference is the column with what the payer or the request put on the
	// transaction (an invoice number, the intent key). Optional.
	Reference string `mapstructure:"reference"`
	// Counterparty is the column naming the payer; it is masked before it
	// is stored. Optional.
	Counterparty string `mapstructure:"counterparty"`
}

// MappingError reports a mapping that cannot work, naming the mapping field
// (as spelled in the configuration) at fault.
type MappingError struct {
	Field string
	Err   error
}

func (e *MappingError) Error() string { return "mapping." + e.Field + ": " + e.Err.Error() }
func (e *MappingError) Unwrap() error { return e.Err }

func mapErr(field string, format string, args ...any) error {
	return &MappingError{Field: field, Err: fmt.Errorf(format, args...)}
}

// compiled is a checked Mapping ready to read files.
type compiled struct {
	m         Mapping
	comma     rune
	loc       *time.Location
	currency  string
	statusMap map[string]ledger.TxnStatus
	typeMap   map[string]ledger.TxnType
	outType   ledger.TxnType
}

// Validate checks everything about the mapping that does not depend on a
// file's header. Errors are *MappingError.
func (m Mapping) Validate() error {
	_, err := m.compile()
	return err
}

func (m Mapping) compile() (*compiled, error) {
	c := &compiled{m: m, comma: ',', statusMap: map[string]ledger.TxnStatus{}, typeMap: map[string]ledger.TxnType{},
		outType: ledger.TxnRefund}
	if strings.TrimSpace(m.Provider) == "" {
		return nil, mapErr("provider", "is empty")
	}
	if m.Delimiter != "" {
		r, size := utf8.DecodeRuneInString(m.Delimiter)
		if size != len(m.Delimiter) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' {
			return nil, mapErr("delimiter", "%q is not a single usable character", m.Delimiter)
		}
		c.comma = r
	}
	if m.ID == "" {
		return nil, mapErr("id", "no column named")
	}
	if m.Time == "" {
		return nil, mapErr("time", "no column named")
	}
	loc, err := m.timeZone()
	if err != nil {
		return nil, err
	}
	c.loc = loc
	if err := m.checkAmount(); err != nil {
		return nil, err
	}
	switch {
	case m.Currency != "" && m.FixedCurrency != "":
		return nil, mapErr("currency", "set either currency or fixed_currency, not both")
	case m.Currency == "" && m.FixedCurrency == "":
		return nil, mapErr("currency", "no column named and no fixed_currency")
	case m.FixedCurrency != "":
		cur, err := money.NormalizeCurrency(m.FixedCurrency)
		if err != nil {
			return nil, &MappingError{Field: "fixed_currency", Err: err}
		}
		c.currency = cur
	}
	if err := c.compileStatuses(); err != nil {
		return nil, err
	}
	if err := c.compileTypes(); err != nil {
		return nil, err
	}
	return c, nil
}

// timeZone checks the time format and is the zone of times that carry
// none: Zone, required when the format has no zone or offset, else UTC.
func (m Mapping) timeZone() (*time.Location, error) {
	if err := checkLayout(m.TimeFormat); err != nil {
		return nil, &MappingError{Field: "time_format", Err: err}
	}
	if m.Zone != "" {
		loc, err := time.LoadLocation(m.Zone)
		if err != nil || m.Zone == "Local" {
			return nil, mapErr("zone", "%q is not an IANA zone name", m.Zone)
		}
		return loc, nil
	}
	if !layoutHasZone(m.TimeFormat) {
		return nil, mapErr("zone", "required: time_format %q has no zone or offset", m.TimeFormat)
	}
	return time.UTC, nil
}

// checkAmount checks the amount columns (amount, or debit and credit) and
// the thousands and decimal separators.
func (m Mapping) checkAmount() error {
	switch {
	case m.Amount != "" && (m.Debit != "" || m.Credit != ""):
		return mapErr("amount", "set either amount or debit and credit, not both")
	case m.Amount == "" && (m.Debit == "" || m.Credit == ""):
		if m.Debit == "" && m.Credit == "" {
			return mapErr("amount", "no column named (set amount, or debit and credit)")
		}
		if m.Debit == "" {
			return mapErr("debit", "no column named (credit needs debit)")
		}
		return mapErr("credit", "no column named (debit needs credit)")
	}
	switch m.ThousandsSeparator {
	case "", ",", ".", " ", "'":
	default:
		return mapErr("thousands_separator", "%q is not one of , . ' or a space", m.ThousandsSeparator)
	}
	switch m.DecimalSeparator {
	case "", ".", ",":
	default:
		return mapErr("decimal_separator", "%q is not . or ,", m.DecimalSeparator)
	}
	dec := m.DecimalSeparator
	if dec == "" {
		dec = "."
	}
	if m.ThousandsSeparator == dec {
		return mapErr("thousands_separator", "%q is also the decimal separator", dec)
	}
	return nil
}

// compileStatuses checks the status column and its map and fills
// c.statusMap.
func (c *compiled) compileStatuses() error {
	m := c.m
	if m.Status == "" && len(m.StatusMap) > 0 {
		return mapErr("status_map", "set without a status column")
	}
	if m.Status != "" && len(m.StatusMap) == 0 {
		return mapErr("status_map", "empty: say which values of column %q are succeeded, failed or pending", m.Status)
	}
	for k, v := range m.StatusMap {
		st := ledger.TxnStatus(strings.ToLower(strings.TrimSpace(v)))
		switch st {
		case ledger.TxnSucceeded, ledger.TxnFailed, ledger.TxnPending:
		default:
			return mapErr("status_map", "%q maps to %q; want succeeded, failed or pending", k, v)
		}
		if err := addKey(c.statusMap, k, st); err != nil {
			return &MappingError{Field: "status_map", Err: err}
		}
	}
	return nil
}

// compileTypes checks the type column, its map and OutType, and fills
// c.typeMap and c.outType.
func (c *compiled) compileTypes() error {
	m := c.m
	if m.Type == "" && len(m.TypeMap) > 0 {
		return mapErr("type_map", "set without a type column")
	}
	if m.Type != "" && len(m.TypeMap) == 0 {
		return mapErr("type_map", "empty: say which values of column %q are charge, refund, reversal, fee or payout", m.Type)
	}
	for k, v := range m.TypeMap {
		t, err := txnType(v)
		if err != nil {
			return mapErr("type_map", "%q: %v", k, err)
		}
		if err := addKey(c.typeMap, k, t); err != nil {
			return &MappingError{Field: "type_map", Err: err}
		}
	}
	if m.OutType != "" {
		if m.Type != "" {
			return mapErr("out_type", "set with a type column, which decides every row's type")
		}
		t, err := txnType(m.OutType)
		if err != nil {
			return &MappingError{Field: "out_type", Err: err}
		}
		if t == ledger.TxnCharge {
			return mapErr("out_type", "money out cannot be a charge")
		}
		c.outType = t
	}
	return nil
}

func addKey[V comparable](m map[string]V, k string, v V) error {
	key := strings.ToLower(strings.TrimSpace(k))
	if old, ok := m[key]; ok && old != v {
		return fmt.Errorf("%q is mapped twice (keys are compared case-insensitively)", k)
	}
	m[key] = v
	return nil
}

func txnType(v string) (ledger.TxnType, error) {
	t := ledger.TxnType(strings.ToLower(strings.TrimSpace(v)))
	switch t {
	case ledger.TxnCharge, ledger.TxnRefund, ledger.TxnReversal, ledger.TxnFee, ledger.TxnPayout:
		return t, nil
	}
	return "", fmt.Errorf("%q is not charge, refund, reversal, fee or payout", v)
}

// checkLayout accepts a Go time layout that names a year, a month and a day.
func checkLayout(layout string) error {
	if strings.TrimSpace(layout) == "" {
		return errors.New("is empty (want a Go layout such as 2006-01-02 15:04:05)")
	}
	ref := time.Date(2024, time.November, 23, 14, 5, 6, 0, time.UTC)
	got, err := time.Parse(layout, ref.Format(layout))
	if err != nil {
		return fmt.Errorf("%q is not a usable Go time layout: %v", layout, err)
	}
	if got.Year() != 2024 || got.Month() != time.November || got.Day() != 23 {
		return fmt.Errorf("%q does not name a year, month and day (Go layouts use 2006, 01 and 02)", layout)
	}
	if strings.Contains(layout, "MST") {
		// Go reads an unknown abbreviation as UTC without a word; only
		// numeric offsets, or the zone setting, say where a time is.
		return fmt.Errorf("%q reads zone abbreviations (MST), which are ambiguous: use a numeric offset (-0700) or set zone and write the abbreviation as literal text", layout)
	}
	return nil
}

// layoutHasZone reports whether a layout reads a numeric UTC offset.
func layoutHasZone(layout string) bool {
	for _, z := range []string{"Z07", "-07"} {
		if strings.Contains(layout, z) {
			return true
		}
	}
	return false
}
