package ledger

import (
	"fmt"
	"slices"
)

// Transition is a status change a person may make to a finding by hand:
// the status it moves to, the statuses it may start from, and the history
// action that records it.
type Transition struct {
	To     FindingStatus
	From   []FindingStatus
	Action Action
}

// transitions are every status change people make; runs move findings
// through their own paths (UpsertFindings, resolving what they no longer
// see). Both engines apply these through TransitionTo, compare-and-set on
// From, and nothing else decides which changes a person may make.
var transitions = []Transition{
	// Acknowledging an acknowledged finding records who looks at it now.
	{To: FindingAcknowledged, From: []FindingStatus{FindingOpen, FindingAcknowledged}, Action: ActionAcknowledged},
	{To: FindingResolved, From: []FindingStatus{FindingOpen, FindingAcknowledged}, Action: ActionResolved},
	{To: FindingOpen, From: []FindingStatus{FindingResolved}, Action: ActionReopened},
}

// TransitionTo is the change a person makes to move a finding to status
// to; an error for a status no person moves a finding to.
func TransitionTo(to FindingStatus) (Transition, error) {
	for _, t := range transitions {
		if t.To == to {
			return t, nil
		}
	}
	return Transition{}, fmt.Errorf("cannot move a finding to %q by hand", to)
}

// Allows reports whether a finding in status from may make the change.
func (t Transition) Allows(from FindingStatus) bool { return slices.Contains(t.From, from) }

// FromText lists From as text, for a store to compare the stored status
// with.
func (t Transition) FromText() []string {
	out := make([]string, len(t.From))
	for i, s := range t.From {
		out[i] = string(s)
	}
	return out
}
