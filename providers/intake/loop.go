package intake

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/providers"
)

// ReprocessEvery interprets the callbacks of each provider of parsers that
// were stored but not processed (the process died between the two), at
// start and then every interval, until ctx ends. Failures are logged; the
// next round tries again.
func (p *Processor) ReprocessEvery(ctx context.Context, parsers map[string]providers.CallbackParser, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		for _, name := range slices.Sorted(maps.Keys(parsers)) {
			if n, err := p.Reprocess(ctx, name, parsers[name]); err != nil && ctx.Err() == nil {
				p.logger().Warn("reprocessing stored callbacks", "provider", name, "error", err)
			} else if n > 0 {
				p.logger().Info("reprocessed stored callbacks", "provider", name, "count", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// logger is the Processor's Logger, or one that discards.
func (p *Processor) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}
