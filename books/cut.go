package books

import (
	"fmt"
	"time"

	"github.com/reconcilehq/reconcile/schedule"
)

// PruneCut decides the cut of a prune from what the command line and the
// configuration give: before (a date, YYYY-MM-DD in UTC, or an RFC 3339
// time), or olderThan back from now, or else retention (books.retention)
// back from now. Giving both before and olderThan, a bad before, or none
// of the three is a *schedule.FlagError naming the flag.
func PruneCut(before string, olderThan, retention time.Duration, now time.Time) (time.Time, error) {
	switch {
	case before != "" && olderThan != 0:
		return time.Time{}, schedule.Flagf("before", "give --before or --older-than, not both")
	case before != "":
		t, err := schedule.ParseTime(before, time.UTC)
		if err != nil {
			return time.Time{}, schedule.Flagf("before", "--before: %v", err)
		}
		return t, nil
	case olderThan > 0:
		return now.Add(-olderThan).UTC(), nil
	case retention > 0:
		return now.Add(-retention).UTC(), nil
	}
	return time.Time{}, schedule.Flagf("before", "say what is old: --before DATE, --older-than DURATION, or books.retention in the configuration")
}

// CheckEraseKey checks, before any work, the secret erasure tokens are
// computed with: it must be set and at least MinEraseKey bytes long.
// setting names where it is set, for the error.
func CheckEraseKey(key, setting string) error {
	if key == "" {
		return fmt.Errorf("%s is not set: erasing needs a secret key of at least %d bytes, the same at every erasure",
			setting, MinEraseKey)
	}
	if len(key) < MinEraseKey {
		return fmt.Errorf("%s is shorter than %d bytes", setting, MinEraseKey)
	}
	return nil
}
