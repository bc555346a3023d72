package schedule

import (
	"fmt"
	"time"
)

// FlagError is a bad value given on a command line: its text names the
// flag, and the command line reports it as a mistake in the command, not a
// failure of the work.
type FlagError struct {
	// Flag is the flag at fault, without its dashes.
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// Flagf is a FlagError of flag, its text formatted as fmt.Errorf does.
func Flagf(flag, format string, args ...any) error {
	return &FlagError{Flag: flag, Err: fmt.Errorf(format, args...)}
}

// RunWindow reads the --from and --to of an on-demand run in the provider's
// zone (ParseTime): --to defaults to one day after --from, and must be
// after it.
func RunWindow(from, to string, zone *time.Location) (start, end time.Time, err error) {
	if start, err = ParseTime(from, zone); err != nil {
		return start, end, Flagf("from", "--from: %v", err)
	}
	end = start.In(zone).AddDate(0, 0, 1).UTC()
	if to != "" {
		if end, err = ParseTime(to, zone); err != nil {
			return start, end, Flagf("to", "--to: %v", err)
		}
	}
	if !end.After(start) {
		return start, end, Flagf("to", "--to (%s) must be after --from (%s)", end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	return start, end, nil
}

// ListWindow reads the --from and --to of a list in zone (ParseTime):
// either may be empty, for no bound on that side; when both are given, --to
// must be after --from.
func ListWindow(from, to string, zone *time.Location) (start, end time.Time, err error) {
	if from != "" {
		if start, err = ParseTime(from, zone); err != nil {
			return start, end, Flagf("from", "--from %v", err)
		}
	}
	if to != "" {
		if end, err = ParseTime(to, zone); err != nil {
			return start, end, Flagf("to", "--to %v", err)
		}
	}
	if !start.IsZero() && !end.IsZero() && !end.After(start) {
		return start, end, Flagf("to", "--to %s is not after --from %s", to, from)
	}
	return start, end, nil
}
