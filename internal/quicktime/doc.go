// Package quicktime reads the two timestamp forms that fill most statement
// lines, "dd-mm-yyyy HH:MM:SS" and "yyyy-mm-dd HH:MM:SS", without going
// through time.Parse's layout interpreter. It accepts only what
// time.ParseInLocation with the matching layout accepts, and returns the
// same time; anything else (another form, an invalid date) is left to the
// caller's time.Parse, which says what is wrong.
//
// It knows no provider and no zone of its own: callers pass the zone.
package quicktime
