package reconciler

import (
	"log/slog"
	"time"
)

const (
	slogError = slog.LevelError
	slogWarn  = slog.LevelWarn
)

func logLevel(o *Outcome) slog.Level {
	if o.PullError != "" {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

func logAttrs(o *Outcome, d time.Duration) []slog.Attr {
	c := o.Run.Counts
	attrs := []slog.Attr{
		slog.Int64("run_id", o.Run.ID), slog.String("provider", o.Run.Provider),
		slog.Time("from", o.Run.From), slog.Time("to", o.Run.To), slog.Bool("dry_run", o.DryRun),
		slog.Int("intents", c.Intents), slog.Int("transactions", c.Transactions), slog.Int("matched", c.Matched),
		slog.Int("findings", c.Findings), slog.Int("new", c.New), slog.Int("resolved", c.Resolved),
		slog.Int("settled", c.Settled), slog.String("duration", d.Round(time.Millisecond).String()),
		slog.Int("late_intents", o.Late.Intents), slog.Int("late_transactions", o.Late.Txns),
		slog.String("late_lookups", o.Late.Took.Round(time.Millisecond).String()),
	}
	if o.Run.Account != "" {
		attrs = append(attrs, slog.String("account", o.Run.Account))
	}
	if o.PullError != "" {
		attrs = append(attrs, slog.String("pull_error", o.PullError))
	}
	if o.Reads != "" {
		attrs = append(attrs, slog.String("reads", o.Reads))
	}
	return attrs
}
