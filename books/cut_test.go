package books_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/schedule"
)

// TestPruneCut: the cut is --before, else --older-than, else the
// configured retention, back from now; anything else names the flag.
func TestPruneCut(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 3, 8, 0, 0, 0, time.FixedZone("EAT", 3*3600))
	for _, c := range []struct {
		name              string
		before            string
		olderThan, retain time.Duration
		want              time.Time
		err               string
	}{
		{name: "date", before: "2026-08-01", retain: time.Hour, want: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)},
		{name: "time", before: "2026-08-01T10:00:00+03:00", want: time.Date(2026, 8, 1, 7, 0, 0, 0, time.UTC)},
		{name: "older than", olderThan: 48 * time.Hour, retain: time.Hour, want: time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC)},
		{name: "retention", retain: 24 * time.Hour, want: time.Date(2026, 11, 2, 5, 0, 0, 0, time.UTC)},
		{name: "both", before: "2026-08-01", olderThan: time.Hour, err: "give --before or --older-than, not both"},
		{name: "bad date", before: "August", err: "--before: "},
		{name: "nothing", err: "say what is old: --before DATE, --older-than DURATION, or books.retention in the configuration"},
	} {
		got, err := books.PruneCut(c.before, c.olderThan, c.retain, now)
		if c.err == "" {
			if err != nil || !got.Equal(c.want) || got.Location() != time.UTC {
				t.Errorf("%s: %s (%v), want %s", c.name, got, err, c.want)
			}
			continue
		}
		var fe *schedule.FlagError
		if !errors.As(err, &fe) || len(err.Error()) < len(c.err) || err.Error()[:len(c.err)] != c.err {
			t.Errorf("%s: %v, want an error starting %q", c.name, err, c.err)
		}
	}
}

// TestCheckEraseKey: the erasure key must be set and long enough; the
// error names the setting.
func TestCheckEraseKey(t *testing.T) {
	t.Parallel()
	if err := books.CheckEraseKey("", "KEY"); err == nil || err.Error() != "KEY is not set: erasing needs a secret key of at least 16 bytes, the same at every erasure" {
		t.Errorf("no key: %v", err)
	}
	if err := books.CheckEraseKey("short", "KEY"); err == nil || err.Error() != "KEY is shorter than 16 bytes" {
		t.Errorf("a short key: %v", err)
	}
	if err := books.CheckEraseKey("0123456789abcdef", "KEY"); err != nil {
		t.Errorf("a long enough key: %v", err)
	}
}
