package mpesa_test

import (
	"context"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa"
)

type pullRecorder struct{ from, to []time.Time }

func (p *pullRecorder) Pull(_ context.Context, from, to time.Time, _ func(providers.Sighting) error) error {
	p.from, p.to = append(p.from, from), append(p.to, to)
	return nil
}

// TestRecentOnly: a pull is cut to the API's horizon and to now; a window
// wholly older pulls nothing.
func TestRecentOnly(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	rec := &pullRecorder{}
	p := mpesa.RecentOnly(rec, func() time.Time { return now })
	ctx := context.Background()
	emit := func(providers.Sighting) error { return nil }
	if err := p.Pull(ctx, now.Add(-72*time.Hour), now.Add(time.Hour), emit); err != nil {
		t.Fatal(err)
	}
	if err := p.Pull(ctx, now.Add(-96*time.Hour), now.Add(-48*time.Hour), emit); err != nil {
		t.Fatal(err)
	}
	if len(rec.from) != 1 || !rec.from[0].Equal(now.Add(-47*time.Hour)) || !rec.to[0].Equal(now) {
		t.Fatalf("pulled %v to %v, want one pull from now-47h to now", rec.from, rec.to)
	}
}
