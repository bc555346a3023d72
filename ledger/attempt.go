package ledger

import "time"

// Outcome is the result of one attempt at the provider.
type Outcome string

// Attempt outcomes. Started means recorded before the provider call, with no
// result yet; unknown means the call's result could not be learned.
const (
	OutcomeStarted   Outcome = "started"
	OutcomePending   Outcome = "pending"
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	OutcomeUnknown   Outcome = "unknown"
	// OutcomeImported marks a provider reference recorded by an import.
	OutcomeImported Outcome = "imported"
)

// Attempt is one try at the provider for an intent, recorded before the call.
type Attempt struct {
	ID          int64
	IntentKey   string
	Number      int
	ClaimToken  int64
	ProviderRef string
	Outcome     Outcome
	Error       string
	StartedAt   time.Time
	FinishedAt  time.Time
}

// AttemptParams records a new attempt. The number is assigned by the store.
type AttemptParams struct {
	IntentKey   string
	ClaimToken  int64
	ProviderRef string
	Outcome     Outcome
	Now         time.Time
}

// AttemptUpdate records what an attempt learned. Empty fields are left as
// they were; a non-zero Now sets the finish time for final outcomes.
type AttemptUpdate struct {
	ID          int64
	ProviderRef string
	Outcome     Outcome
	Error       string
	Now         time.Time
}

// FinishParams is the outcome of an attempt and what it does to the intent.
type FinishParams struct {
	Attempt    AttemptUpdate
	Transition TransitionParams
	// Event announces the new state; nil for none.
	Event *Event
}
