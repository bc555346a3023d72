// Package logging makes the binary's logger: log/slog to standard error as
// text or JSON, phone numbers masked in every message and attribute. It is
// made once, in main, and passed to what logs.
package logging
