package schedule

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron parses a cron specification: five fields (minute hour
// day-of-month month day-of-week), or six with leading seconds, or a
// descriptor (@daily, @every 1h); optionally prefixed with CRON_TZ=Zone.
func ParseCron(spec string) (cron.Schedule, error) {
	s, err := parser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", spec, err)
	}
	return s, nil
}

// Window is [From, To).
type Window struct {
	From, To time.Time
}

func (w Window) String() string {
	return w.From.UTC().Format(time.RFC3339) + "/" + w.To.UTC().Format(time.RFC3339)
}

// Defaults of a schedule, which the CLI's configuration shares.
const (
	// DefaultSize is the length of a window: the local day.
	DefaultSize = 24 * time.Hour
	// DefaultLookback is how many earlier windows each tick runs again.
	DefaultLookback = 2
	// DefaultCatchUp caps the windows missed during downtime that are run.
	DefaultCatchUp = 7
)

// Spec is one provider's schedule.
type Spec struct {
	Provider string
	// Expr is the cron specification Cron was parsed from, for logs.
	Expr string
	// Cron says when to run.
	Cron cron.Schedule
	// Size is the length of a window; it must divide a day. Default
	// DefaultSize.
	Size time.Duration
	// Zone aligns windows to its midnight; default UTC.
	Zone *time.Location
	// Lookback is how many windows before the newest each tick runs again,
	// to pick up late evidence.
	Lookback int
	// CatchUp caps how many missed windows are run after downtime.
	CatchUp int
}

// Validate checks the window size.
func (s Spec) Validate() error {
	size := s.size()
	if size <= 0 || (24*time.Hour)%size != 0 {
		return fmt.Errorf("window %s must divide a day (e.g. 1h, 6h, 24h)", size)
	}
	if size < 24*time.Hour && hasDST(s.zone()) {
		return fmt.Errorf("window %s is shorter than a day, which needs a zone without daylight saving (%s has it); use 24h windows there", size, s.zone())
	}
	if s.Lookback < 0 || s.CatchUp < 0 {
		return errors.New("lookback and catch_up must not be negative")
	}
	return nil
}

func (s Spec) size() time.Duration {
	if s.Size == 0 {
		return DefaultSize
	}
	return s.Size
}

func (s Spec) zone() *time.Location {
	if s.Zone == nil {
		return time.UTC
	}
	return s.Zone
}

// Next is when the schedule fires after t, in the provider's zone, so that
// logs show the local time with its offset.
func (s Spec) Next(t time.Time) time.Time {
	return s.Cron.Next(t).In(s.zone())
}

// Local formats t in the provider's zone with its offset (RFC 3339).
func (s Spec) Local(t time.Time) string {
	return t.In(s.zone()).Format(time.RFC3339)
}

// Containing returns the window that contains t.
func (s Spec) Containing(t time.Time) Window {
	local := t.In(s.zone())
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, s.zone())
	size := s.size()
	if size == 24*time.Hour {
		next := midnight.AddDate(0, 0, 1)
		return Window{From: midnight.UTC(), To: next.UTC()}
	}
	k := local.Sub(midnight) / size
	from := midnight.Add(k * size)
	return Window{From: from.UTC(), To: from.Add(size).UTC()}
}

// Closed returns the newest window that has ended at t, then up to Lookback
// earlier ones, newest first.
func (s Spec) Closed(t time.Time) []Window {
	w := s.prev(s.Containing(t))
	out := []Window{w}
	for range s.Lookback {
		w = s.prev(w)
		out = append(out, w)
	}
	return out
}

// Missed returns the windows that ended after lastTo and by t, oldest first,
// at most CatchUp of them (the newest ones).
func (s Spec) Missed(lastTo, t time.Time) []Window {
	var out []Window
	for w := s.prev(s.Containing(t)); w.To.After(lastTo) && len(out) < s.CatchUp; w = s.prev(w) {
		out = append(out, w)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// prev is the window before w; across a day boundary it is computed in the
// zone, so days of 23 or 25 hours still align.
func (s Spec) prev(w Window) Window {
	return s.Containing(w.From.Add(-time.Nanosecond))
}

// hasDST reports whether loc's offset changes during a year.
func hasDST(loc *time.Location) bool {
	y := time.Now().Year()
	_, jan := time.Date(y, 1, 1, 12, 0, 0, 0, loc).Zone()
	_, jul := time.Date(y, 7, 1, 12, 0, 0, 0, loc).Zone()
	return jan != jul
}
