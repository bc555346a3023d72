package ledger

import "time"

// QuarantineItem is rejected input kept for audit with the reason it was
// rejected.
type QuarantineItem struct {
	ID int64
	// Source names the input path: intents_csv, mpesa_statement, mpesa_callback...
	Source string
	// Origin names where it came from: a file path or a remote address.
	Origin string
	// Line is the 1-based line in Origin, 0 when not a file.
	Line   int
	Field  string
	Reason string
	Raw    []byte
	At     time.Time
	// Status is kept until someone dismisses or replays the item.
	Status QuarantineStatus
}
