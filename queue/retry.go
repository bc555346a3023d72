package queue

import (
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// Backoff is an exponential retry policy with jitter: the n-th retry waits
// Base * 2^(n-1), at most Max, give or take a fifth.
type Backoff struct {
	// Base is the first retry's wait; default DefaultRetryBase.
	Base time.Duration
	// Max caps every wait; default DefaultRetryMax.
	Max time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// NextRetry implements river.ClientRetryPolicy.
func (b Backoff) NextRetry(job *rivertype.JobRow) time.Time {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	return now().Add(b.Delay(job.Attempt))
}

// Nominal is the wait before retry number attempt (1 = first retry),
// without jitter.
func (b Backoff) Nominal(attempt int) time.Duration {
	base, maxWait := b.Base, b.Max
	if base <= 0 {
		base = DefaultRetryBase
	}
	if maxWait <= 0 {
		maxWait = DefaultRetryMax
	}
	d := base
	for i := 1; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

// Delay is the wait before retry number attempt (1 = first retry), give or
// take a fifth.
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Nominal(attempt)
	spread := int64(d / 5)
	if spread > 0 {
		d += time.Duration(rand.Int64N(2*spread+1) - spread) // jitter
	}
	return d
}
