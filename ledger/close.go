package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PeriodClose records that a month was closed: by whom, through which
// surface, when, and the close report as it stood (Summary, JSON), for the
// next close to say what changed since. A close of every provider has an
// empty Provider.
type PeriodClose struct {
	// Period is the month, YYYY-MM.
	Period    string
	Provider  string
	ClosedBy  string
	ClosedVia Surface
	ClosedAt  time.Time
	Note      string
	Summary   string
}

// CloseStore keeps the month-end closes.
type CloseStore interface {
	// ClosePeriod records c; ErrConflict when the period is closed already
	// for the same provider (or all).
	ClosePeriod(ctx context.Context, c PeriodClose) (PeriodClose, error)
	// ListCloses lists every close, by period then provider.
	ListCloses(ctx context.Context) ([]PeriodClose, error)
}

// ParsePeriod reads a month, YYYY-MM, and returns its first day (in UTC;
// Bounds places it in a zone).
func ParsePeriod(s string) (time.Time, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil || t.Format("2006-01") != s {
		return time.Time{}, &FieldError{Field: "period", Err: fmt.Errorf("%q: want a month, YYYY-MM", s)}
	}
	return t, nil
}

// PeriodBounds are the first instant of month period in zone and of the
// month after.
func PeriodBounds(period string, zone *time.Location) (from, to time.Time, err error) {
	t, err := ParsePeriod(period)
	if err != nil {
		return from, to, err
	}
	if zone == nil {
		zone = time.UTC
	}
	from = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, zone)
	return from.UTC(), from.AddDate(0, 1, 0).UTC(), nil
}

// PeriodOf is the month, YYYY-MM, that t falls in, in zone.
func PeriodOf(t time.Time, zone *time.Location) string {
	if zone == nil {
		zone = time.UTC
	}
	return t.In(zone).Format("2006-01")
}

// CheckClose validates a close before it is stored.
func CheckClose(c PeriodClose) error {
	if _, err := ParsePeriod(c.Period); err != nil {
		return err
	}
	if c.ClosedBy == "" {
		return &FieldError{Field: "actor", Err: errEmpty}
	}
	if c.ClosedAt.IsZero() {
		return &FieldError{Field: "closed_at", Err: errors.New("is not set")}
	}
	return nil
}

// ClosedBefore is the close of f's period that f was raised after: a
// finding whose evidence lies in a month closed (for its provider, or for
// all) before a run first saw it. ok is false for a finding raised in time,
// or in an open month.
func ClosedBefore(f Finding, closes []PeriodClose, zone *time.Location) (PeriodClose, bool) {
	period := PeriodOf(f.OccurredAt, zone)
	for _, c := range closes {
		if c.Period == period && (c.Provider == "" || c.Provider == f.Provider) && f.FirstSeenAt.After(c.ClosedAt) {
			return c, true
		}
	}
	return PeriodClose{}, false
}
