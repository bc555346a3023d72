package ledger

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// Limits at the edge. Every input path (intents CSV, the intents API,
// statements, callbacks, webhooks, pulls) refuses a value outside them with
// the field at fault, through ValidateTxn and IntentParams.Normalize, so that
// nothing the matcher cannot evaluate reaches the books.
const (
	// DefaultMaxMinor is the largest absolute amount, in minor units of its
	// currency, that a currency without a configured maximum accepts:
	// 10^15 (ten trillion dollars, a quadrillion yen), far above any real
	// payment.
	DefaultMaxMinor = 1_000_000_000_000_000
	// CeilingMaxMinor is the largest maximum that may be configured, in
	// minor units: sums of many such amounts still fit in int64.
	CeilingMaxMinor = 100_000_000_000_000_000
	// MaxIDLen bounds identifiers in bytes: intent keys, provider
	// transaction ids, references, provider references, customers,
	// counterparties.
	MaxIDLen = 255
	// MaxProviderLen bounds a provider's name in bytes.
	MaxProviderLen = 64
	// MaxMetadataEntries, MaxMetadataKeyLen and MaxMetadataValueLen bound
	// an intent's metadata (the lengths in bytes).
	MaxMetadataEntries  = 50
	MaxMetadataKeyLen   = 40
	MaxMetadataValueLen = 500
)

// EarliestTime and LatestTime bound every time outside input brings in
// (creation, update and occurrence times): [2000-01-01, 2101-01-01) UTC.
var (
	EarliestTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	LatestTime   = time.Date(2101, 1, 1, 0, 0, 0, 0, time.UTC)
)

// maxMinor holds the configured maxima: currency -> minor units.
var maxMinor atomic.Pointer[map[string]int64]

// SetMaxAmounts configures the largest absolute amount per currency (in
// major units, e.g. {"KES": 1e9}); other currencies keep DefaultMaxMinor.
// It is process-wide: the binary calls it once at start, from its config.
func SetMaxAmounts(max map[string]decimal.Decimal) error {
	m, err := maxMinorOf(max)
	if err != nil {
		return err
	}
	maxMinor.Store(&m)
	return nil
}

// ValidateMaxAmounts checks maxima for SetMaxAmounts without applying them.
func ValidateMaxAmounts(max map[string]decimal.Decimal) error {
	_, err := maxMinorOf(max)
	return err
}

func maxMinorOf(max map[string]decimal.Decimal) (map[string]int64, error) {
	m := make(map[string]int64, len(max))
	for code, v := range max {
		cur, err := money.NormalizeCurrency(code)
		if err != nil {
			return nil, err
		}
		a, err := money.New(v, cur)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", code, err)
		}
		if !a.Value.IsPositive() {
			return nil, fmt.Errorf("%s: %s is not positive", cur, a.Text())
		}
		minor, err := a.Minor()
		if err != nil || minor > CeilingMaxMinor {
			return nil, fmt.Errorf("%s: %s is above the ceiling of %d minor units", cur, a.Text(), int64(CeilingMaxMinor))
		}
		m[cur] = minor
	}
	return m, nil
}

// MaxAmount returns the largest absolute amount accepted in currency cur.
func MaxAmount(cur string) money.Amount {
	if b := amountBounds().of[cur]; b != nil {
		return b.max
	}
	return maxAmount(cur)
}

// maxAmount computes MaxAmount from the configured maxima.
func maxAmount(cur string) money.Amount {
	limit := int64(DefaultMaxMinor)
	if m := maxMinor.Load(); m != nil {
		if v, ok := (*m)[cur]; ok {
			limit = v
		}
	}
	a, err := money.FromMinor(limit, cur)
	if err != nil {
		return money.Amount{}
	}
	return a
}

// bounds are the maxima of every known currency, computed once for the
// configured maxima (from), since every line of an import checks its
// amount.
type bounds struct {
	from *map[string]int64
	of   map[string]*bound
}

// bound is the maximum of one currency, with the largest coefficient an
// amount of each exponent from 0 down to -(the currency's exponent) may
// have: within[k] is the maximum at exponent -k, rounded down.
type bound struct {
	max    money.Amount
	within []decimal.Decimal
	// neg are the negated within.
	neg []decimal.Decimal
}

var boundsCache atomic.Pointer[bounds]

// amountBounds returns the bounds of the configured maxima, computing them
// when the maxima changed.
func amountBounds() *bounds {
	m := maxMinor.Load()
	if b := boundsCache.Load(); b != nil && b.from == m {
		return b
	}
	b := &bounds{from: m, of: map[string]*bound{}}
	for _, cur := range money.Codes() {
		max := maxAmount(cur)
		exp, err := money.Exponent(cur)
		if max.IsZero() || err != nil {
			continue
		}
		minor, err := max.Minor()
		if err != nil {
			continue
		}
		bd := &bound{max: max}
		scale := int64(1)
		for range exp {
			scale *= 10
		}
		for k := int32(0); k <= exp; k++ {
			c := minor / scale
			bd.within = append(bd.within, decimal.New(c, -k))
			bd.neg = append(bd.neg, decimal.New(-c, -k))
			scale /= 10
		}
		b.of[cur] = bd
	}
	boundsCache.Store(b)
	return b
}

// withinMax is a quick sufficient condition of CheckAmount's success: a
// of a known currency, written with no more decimals than the currency
// has, is within its maximum. Compared at the same exponent, decimals
// compare their coefficients without allocating.
func withinMax(a money.Amount) bool {
	b := amountBounds().of[a.Currency]
	if b == nil {
		return false
	}
	k := -int(a.Value.Exponent())
	if k < 0 || k >= len(b.within) {
		return false
	}
	return a.Value.Cmp(b.within[k]) <= 0 && a.Value.Cmp(b.neg[k]) >= 0
}

// ErrOutOfRange reports a value outside the limits.
var ErrOutOfRange = errors.New("out of range")

// CheckAmount refuses an amount whose absolute value is above its currency's
// maximum.
func CheckAmount(a money.Amount) error {
	if a.IsZero() || withinMax(a) {
		return nil
	}
	max := MaxAmount(a.Currency)
	if max.IsZero() {
		return &money.UnknownCurrencyError{Code: a.Currency}
	}
	if a.Value.Abs().GreaterThan(max.Value) {
		return fmt.Errorf("%s %s is above the maximum of %s: %w", a.Currency, SafeText(a.Value.String(), 40), max.Text(), ErrOutOfRange)
	}
	return nil
}

// CheckTime refuses a time outside [EarliestTime, LatestTime).
func CheckTime(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	if t.Before(EarliestTime) || !t.Before(LatestTime) {
		return fmt.Errorf("%s is outside %d..%d: %w", t.UTC().Format(time.RFC3339), EarliestTime.Year(),
			LatestTime.Year()-1, ErrOutOfRange)
	}
	return nil
}

// CheckText refuses an identifier that is longer than max bytes, is not
// valid UTF-8, or holds a control character (C0, DEL, C1) or a
// bidirectional formatting character that could make it read as something
// else.
func CheckText(s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%d bytes, longer than %d: %w", len(s), max, ErrOutOfRange)
	}
	if printableASCII(s) {
		return nil // the common case, without decoding runes
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", Clip(s))
	}
	for i, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) {
			return fmt.Errorf("%s has control character %U at byte %d", Clip(s), r, i)
		}
	}
	return nil
}

// printableASCII reports whether s is ASCII without control characters
// (C0 and DEL): valid UTF-8 that CheckText accepts.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// isBidiControl reports the bidirectional embedding, override and isolate
// characters ("Trojan Source").
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

// checkField is CheckText as a *FieldError naming field.
func checkField(field, s string, max int) error {
	if err := CheckText(s, max); err != nil {
		return &FieldError{Field: field, Err: err}
	}
	return nil
}

// maxClip bounds how much of a value an error message shows.
const maxClip = 64

// Clip quotes s for an error message or a log line: Go-quoted (control
// characters and invalid bytes escaped) and, when long, cut with its size
// noted, so that a 10 MB field is never echoed whole.
func Clip(s string) string {
	if len(s) <= maxClip {
		return fmt.Sprintf("%q", s)
	}
	cut := maxClip
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// SafeText makes s fit for a text column and a terminal: invalid bytes and
// control characters (except newline and tab) escaped as Go does in quoted
// strings, and the result cut to max bytes with the size noted.
func SafeText(s string, max int) string { return safeText(s, max, true) }

// SafeLine is SafeText for one cell of a line of output: newlines and tabs
// are escaped too, so that a value cannot forge lines or columns.
func SafeLine(s string, max int) string { return safeText(s, max, false) }

func safeText(s string, max int, keepNLTab bool) string {
	unsafe := func(r rune) bool {
		if r == '\n' || r == '\t' {
			return !keepNLTab
		}
		return unicode.IsControl(r) || isBidiControl(r)
	}
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafe(r) {
			clean = false
			break
		}
	}
	if !clean {
		var b strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n <= 1:
				fmt.Fprintf(&b, `\x%02x`, s[i])
			case unsafe(r):
				q := fmt.Sprintf("%+q", string(r))
				b.WriteString(q[1 : len(q)-1])
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
		}
		s = b.String()
	}
	if max > 0 && len(s) > max {
		n := len(s)
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = fmt.Sprintf("%s… (%d bytes in all)", s[:cut], n)
	}
	return s
}
