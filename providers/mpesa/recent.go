package mpesa

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/providers"
)

// PullHorizon is how far back a pull reaches: the Pull Transactions API
// serves only its last 48 hours, less an hour of margin.
const PullHorizon = 47 * time.Hour

// RecentOnly pulls with p only the part of a window that the Pull
// Transactions API can still serve (the last PullHorizon, up to now); older
// evidence comes from callbacks and statements. A window wholly outside
// pulls nothing.
func RecentOnly(p providers.Puller, clock func() time.Time) providers.Puller {
	return recentOnly{p: p, clock: clock}
}

type recentOnly struct {
	p     providers.Puller
	clock func() time.Time
}

func (r recentOnly) Pull(ctx context.Context, from, to time.Time, emit func(providers.Sighting) error) error {
	now := r.clock()
	if earliest := now.Add(-PullHorizon); from.Before(earliest) {
		from = earliest
	}
	if to.After(now) {
		to = now
	}
	if !from.Before(to) {
		return nil
	}
	return r.p.Pull(ctx, from, to, emit)
}
