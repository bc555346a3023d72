package main

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/console"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// consoleRoutes serves the console under /console when it is on.
func (s *server) consoleRoutes() error {
	cc, err := s.a.cfg.Console.Console()
	if err != nil || cc == nil {
		return err
	}
	c, err := console.New(*cc, console.Deps{Store: s.store, Jobs: consoleJobs{q: s.queue, secrets: s.a.secrets()},
		Replay: func(ctx context.Context, q ledger.QuarantineItem) (string, error) { return s.a.replay(ctx, s.d, q) }, Findings: s.findings, Providers: s.providers, Clock: s.a.clock, Logger: s.logger})
	if err != nil {
		return err
	}
	mux := s.mux
	if s.a.cfg.Console.Listen != "" {
		s.consoleMux = newRouteMux()
		mux = s.consoleMux
	}
	mux.Handle("/console/", c.Handler())
	s.logger.Info("console served", "path", "/console/", "mode", cc.Mode, "own_listener", s.a.cfg.Console.Listen != "")
	return nil
}

// consoleJobs shows the console River's discarded jobs.
type consoleJobs struct {
	q       *queue.Queue
	secrets []string
}

func (j consoleJobs) Discarded(ctx context.Context, limit int) ([]console.Job, error) {
	res, err := j.q.List(ctx, river.NewJobListParams().First(limit).States(rivertype.JobStateDiscarded).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc))
	if err != nil {
		return nil, err
	}
	out := make([]console.Job, 0, len(res.Jobs))
	for _, r := range res.Jobs {
		out = append(out, j.view(r))
	}
	return out, nil
}

func (j consoleJobs) Retry(ctx context.Context, id int64) (console.Job, error) {
	r, err := j.q.Retry(ctx, id)
	if err != nil {
		return console.Job{}, err
	}
	return j.view(r), nil
}

func (j consoleJobs) view(r *rivertype.JobRow) console.Job {
	when := r.ScheduledAt
	if r.FinalizedAt != nil {
		when = *r.FinalizedAt
	}
	return console.Job{ID: r.ID, Kind: r.Kind, State: string(r.State), Subject: jobSubject(r), Attempt: r.Attempt,
		MaxAttempts: r.MaxAttempts, When: when.UTC().Truncate(time.Second), LastError: redactAll(lastError(r), j.secrets)}
}
