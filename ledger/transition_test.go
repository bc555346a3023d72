package ledger

import "testing"

// TestTransitions pins the status changes people may make by hand.
func TestTransitions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		to    FindingStatus
		from  FindingStatus
		allow bool
	}{
		{FindingAcknowledged, FindingOpen, true},
		{FindingAcknowledged, FindingAcknowledged, true},
		{FindingAcknowledged, FindingResolved, false},
		{FindingResolved, FindingOpen, true},
		{FindingResolved, FindingAcknowledged, true},
		{FindingResolved, FindingResolved, false},
		{FindingOpen, FindingResolved, true},
		{FindingOpen, FindingOpen, false},
		{FindingOpen, FindingAcknowledged, false},
	} {
		tr, err := TransitionTo(c.to)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Allows(c.from); got != c.allow {
			t.Errorf("%s -> %s allowed %v, want %v", c.from, c.to, got, c.allow)
		}
	}
	if _, err := TransitionTo("closed"); err == nil {
		t.Error("a move to an unknown status is allowed")
	}
}
