package alerts

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// channelLimiter spaces the messages of each channel: a token bucket per
// channel (one token per interval, up to burst), and a pause until the
// Retry-After of a 429. It paces one process; Slack's 429s pace the rest.
type channelLimiter struct {
	mu       sync.Mutex
	every    rate.Limit
	burst    int
	limiters map[string]*rate.Limiter
	blocked  map[string]time.Time
}

func newChannelLimiter(interval time.Duration, burst int) *channelLimiter {
	return &channelLimiter{every: rate.Every(interval), burst: burst,
		limiters: map[string]*rate.Limiter{}, blocked: map[string]time.Time{}}
}

// reserve takes a token of channel at now and returns how long to wait
// before posting. When the wait would exceed max, or the channel is paused
// by a 429, it takes nothing and returns the wait with ok false.
func (l *channelLimiter) reserve(channel string, now time.Time, max time.Duration) (wait time.Duration, paused, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := l.blocked[channel]; now.Before(until) {
		return until.Sub(now), true, false
	}
	lim := l.limiters[channel]
	if lim == nil {
		lim = rate.NewLimiter(l.every, l.burst)
		l.limiters[channel] = lim
	}
	r := lim.ReserveN(now, 1)
	wait = r.DelayFrom(now)
	if wait > max {
		r.CancelAt(now)
		return wait, false, false
	}
	return wait, false, true
}

// pause holds channel back until until (a 429's Retry-After).
func (l *channelLimiter) pause(channel string, until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until.After(l.blocked[channel]) {
		l.blocked[channel] = until
	}
}
