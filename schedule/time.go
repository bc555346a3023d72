package schedule

import (
	"fmt"
	"time"
)

// ParseTime reads a time given on a command line or in a query: RFC 3339,
// or YYYY-MM-DD as midnight in zone. The result is in UTC.
func ParseTime(s string, zone *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, zone)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-11-02T00:00:00+03:00) or YYYY-MM-DD", s)
	}
	return t.UTC(), nil
}
