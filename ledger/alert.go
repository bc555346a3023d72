package ledger

import (
	"context"
	"time"
)

// AlertState is where an alert's delivery stands.
type AlertState string

// Alert states.
const (
	AlertPending   AlertState = "pending"
	AlertDelivered AlertState = "delivered"
	AlertDiscarded AlertState = "discarded"
)

// Alert records that something was, or is to be, announced: unique per
// (Subject, Reason), so each announcement is made once however often a run
// sees the same thing.
type Alert struct {
	ID int64
	// Subject is what the alert is about: a finding id, or a run key for a
	// run summary.
	Subject string
	// Reason says why it is announced (opened, escalated to ..., resolved...).
	Reason    string
	Provider  string
	RunID     int64
	Severity  Severity
	Channel   string
	State     AlertState
	MessageTS string
	// ThreadTS is the Slack thread the message was posted in, if any.
	ThreadTS string
	Attempts int
	Error    string
	// MayHavePosted says that a failed try may have posted the message
	// after all (its outcome is unknown, or it followed such a try): the
	// next try looks for the post before posting again.
	MayHavePosted bool
	CreatedAt     time.Time
	DeliveredAt   time.Time
}

// AlertDelivery records a successful post.
type AlertDelivery struct {
	ID        int64
	Channel   string
	MessageTS string
	ThreadTS  string
	Now       time.Time
}

// AlertFailure records a failed try of an alert.
type AlertFailure struct {
	ID    int64
	Error string
	// Discard gives delivery up.
	Discard bool
	// MayHavePosted is the alert's new Alert.MayHavePosted.
	MayHavePosted bool
	Now           time.Time
}

// AlertStore keeps alert records.
type AlertStore interface {
	// RecordAlert inserts the alert unless (Subject, Reason) exists; created
	// says whether it was new. Callers enqueue delivery only when created.
	RecordAlert(ctx context.Context, a Alert) (stored Alert, created bool, err error)
	GetAlert(ctx context.Context, id int64) (Alert, error)
	// MarkAlertDelivered records the post; a second call for a delivered
	// alert fails with ErrConflict.
	MarkAlertDelivered(ctx context.Context, d AlertDelivery) (Alert, error)
	// MarkAlertFailed records a failed try (and, with Discard, that delivery
	// was given up).
	MarkAlertFailed(ctx context.Context, f AlertFailure) (Alert, error)
	// FirstDelivered returns the earliest delivered alert of a subject, whose
	// message starts the thread of follow-ups; ErrNotFound when none.
	FirstDelivered(ctx context.Context, subject string) (Alert, error)
	// ListAlerts lists alerts of a run (all runs when runID is 0), oldest first.
	ListAlerts(ctx context.Context, runID int64, limit int) ([]Alert, error)
}
