package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

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

// Bounds of what the quarantine keeps of one item.
const (
	// MaxQuarantineRaw is how much of the rejected input is kept; the rest
	// is cut, and the reason notes the whole size and its SHA-256.
	MaxQuarantineRaw = 64 << 10
	// MaxQuarantineReason bounds the reason.
	MaxQuarantineReason = 4 << 10
	maxQuarantineName   = 1 << 10
)

// Bounded returns q fit to be stored: its texts valid UTF-8 without control
// characters (a database text column refuses NUL) and bounded, its raw
// input cut to MaxQuarantineRaw with the whole size and SHA-256 noted in the
// reason. The stores apply it to every item they add.
func (q QuarantineItem) Bounded() QuarantineItem {
	q.Source = SafeText(q.Source, maxQuarantineName)
	q.Origin = SafeText(q.Origin, maxQuarantineName)
	q.Field = SafeText(q.Field, maxQuarantineName)
	q.Reason = SafeText(q.Reason, MaxQuarantineReason)
	if len(q.Raw) > MaxQuarantineRaw {
		sum := sha256.Sum256(q.Raw)
		q.Reason += fmt.Sprintf(" [raw input cut: first %d of %d bytes kept, sha256 %s]", MaxQuarantineRaw, len(q.Raw),
			hex.EncodeToString(sum[:]))
		q.Raw = q.Raw[:MaxQuarantineRaw:MaxQuarantineRaw]
	}
	return q
}
