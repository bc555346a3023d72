package queue

import (
	"testing"
	"time"
)

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	t.Parallel()
	b := Backoff{Base: time.Second, Max: time.Minute}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 7: time.Minute, 30: time.Minute} {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := b.Delay(attempt)
			if d < want*4/5 || d > want*6/5 {
				t.Fatalf("attempt %d: delay %v outside %v ± 20%%", attempt, d, want)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("attempt %d: no jitter", attempt)
		}
	}
}

// TestBackoffDefaults: a Backoff that sets nothing waits DefaultRetryBase
// first and at most DefaultRetryMax, the defaults of the configuration.
func TestBackoffDefaults(t *testing.T) {
	t.Parallel()
	var b Backoff
	if got := b.Nominal(1); got != DefaultRetryBase {
		t.Errorf("first wait %v, want %v", got, DefaultRetryBase)
	}
	if got := b.Nominal(50); got != DefaultRetryMax {
		t.Errorf("longest wait %v, want %v", got, DefaultRetryMax)
	}
}
