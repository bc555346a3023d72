package mpesa

import (
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/internal/quicktime"
)

// ZoneName is the IANA name of M-Pesa's zone, the default zone of its
// date-only windows.
const ZoneName = "Africa/Nairobi"

// EAT is East Africa Time (ZoneName, UTC+3, no daylight saving), the zone
// of every M-Pesa timestamp that states none. The parsers always read
// Safaricom's times in it, whatever zone the windows are cut in.
var EAT = time.FixedZone("EAT", 3*3600)

const compactLayout = "20060102150405"

// parseCompact parses a YYYYMMDDHHmmss timestamp (TransTime,
// TransactionDate, InitiatedTime, FinalisedTime, TransCompletedTime) in EAT
// and returns it in UTC.
func parseCompact(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) != len(compactLayout) || strings.Trim(s, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("%q is not a YYYYMMDDHHmmss time", s)
	}
	t, err := time.ParseInLocation(compactLayout, s, EAT)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a YYYYMMDDHHmmss time", s)
	}
	return plausible(s, t)
}

// earliest is a floor for M-Pesa times: M-Pesa started in 2007, so an
// earlier date is a mangled one (an Excel zero date, a year 0000).
var earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, EAT)

func plausible(s string, t time.Time) (time.Time, error) {
	if t.Before(earliest) {
		return time.Time{}, fmt.Errorf("%q is before %d, not an M-Pesa time", s, earliest.Year())
	}
	return t.UTC(), nil
}

// parseLocal parses s with the first of layouts that fits, in EAT, and
// returns it in UTC. want describes the accepted forms for the error.
func parseLocal(s string, layouts []string, want string) (time.Time, error) {
	s = strings.Join(strings.Fields(s), " ")
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, s, EAT); err == nil {
			return plausible(s, t)
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (want %s)", s, want)
}

// b2cLayouts are the forms of B2C TransactionCompletedDateTime.
var b2cLayouts = []string{"02.01.2006 15:04:05", compactLayout, "2006-01-02 15:04:05"}

// parseB2CTime parses TransactionCompletedDateTime (dd.MM.yyyy HH:mm:ss, or
// the compact form).
func parseB2CTime(s string) (time.Time, error) {
	return parseLocal(s, b2cLayouts, "dd.MM.yyyy HH:mm:ss")
}

// statementLayouts are the Completion Time forms seen in portal exports:
// day first (the portal), ISO, Excel-shortened without seconds, slashes.
var statementLayouts = []string{
	"02-01-2006 15:04:05", "2006-01-02 15:04:05", "02-01-2006 15:04", "2006-01-02 15:04",
	"02/01/2006 15:04:05", "02/01/2006 15:04", "2006/01/02 15:04:05", "2006/01/02 15:04",
	"02.01.2006 15:04:05", "2006-01-02T15:04:05", "2-1-2006 15:04:05", "2-1-2006 15:04",
	"2/1/2006 15:04:05", "2/1/2006 15:04",
}

func parseStatementTime(s string) (time.Time, error) {
	// The portal's form and ISO, read without the layout interpreter: the
	// first two of statementLayouts, and no earlier layout reads either.
	if t, ok := quicktime.Parse(quicktime.DayFirst, s, EAT); ok {
		return plausible(s, t)
	}
	if t, ok := quicktime.Parse(quicktime.YearFirst, s, EAT); ok {
		return plausible(s, t)
	}
	return parseLocal(s, statementLayouts, "dd-mm-yyyy HH:MM:SS, yyyy-mm-dd HH:MM:SS or dd-mm-yyyy HH:MM")
}

// pullLayout is the Pull Transactions API's StartDate/EndDate form.
const pullLayout = "2006-01-02 15:04:05"

// parsePullTime parses trxDate: RFC 3339 with its stated offset (the
// documented "2020-08-05T10:13:00Z"), or a zoneless local time in EAT.
func parsePullTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return plausible(s, t)
	}
	return parseLocal(s, []string{pullLayout, "2006-01-02T15:04:05", "2006-01-02 15:04", compactLayout},
		"RFC 3339 or yyyy-MM-dd HH:mm:ss")
}
