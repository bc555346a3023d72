package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
)

// Queue names.
const (
	QueueCharges = "charges"
	QueueEvents  = "events"
	QueueAlerts  = "alerts"
	QueueRuns    = "runs"
)

// Defaults of Config, which the CLI's configuration shares.
const (
	DefaultJobTimeout  = 90 * time.Second
	DefaultRescueAfter = 5 * time.Minute
	// DefaultRetryBase and DefaultRetryMax are Backoff's when it sets none.
	DefaultRetryBase = 2 * time.Second
	DefaultRetryMax  = 10 * time.Minute
)

// Config configures the River client. Without Workers the client only
// inserts and lists (the CLI); with them it also works jobs (serve).
type Config struct {
	Workers *river.Workers
	// Queues maps queue names to their concurrency; default one worker per
	// queue that has workers.
	Queues       map[string]int
	PeriodicJobs []*river.PeriodicJob
	Logger       *slog.Logger
	// ID names this client among replicas; default River's (host + time).
	ID string
	// JobTimeout bounds one try of a job; default DefaultJobTimeout.
	JobTimeout time.Duration
	// RescueStuckJobsAfter is when a running job whose worker died is tried
	// again; default DefaultRescueAfter (at least JobTimeout).
	RescueStuckJobsAfter time.Duration
	RetryPolicy          river.ClientRetryPolicy
	// MaxAttempts caps tries of jobs that do not set their own.
	MaxAttempts int
	// FetchPollInterval is how often idle workers look for jobs; default River's.
	FetchPollInterval time.Duration
	// FetchCooldown is the least time between two fetches of jobs; it caps
	// throughput at about (workers / cooldown) jobs a second. Default 10ms.
	FetchCooldown time.Duration
	ErrorHandler  river.ErrorHandler
	// CompletedJobRetention keeps completed jobs this long; default River's 24 h.
	CompletedJobRetention time.Duration
	// NoLeader keeps this client out of leader election: it schedules no
	// periodic jobs and runs no maintenance (a replica without the
	// scheduler role).
	NoLeader bool
}

// Queue is a River client on the ledger's engine.
type Queue struct {
	river engine.RiverClient
	drv   engine.Driver
}

// New creates the River client on store's database.
func New(store ledger.Store, cfg Config) (*Queue, error) {
	drv, err := engine.Of(store)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	rc := &river.Config{
		Logger:                      cfg.Logger,
		ID:                          cfg.ID,
		JobTimeout:                  orDefault(cfg.JobTimeout, DefaultJobTimeout),
		RescueStuckJobsAfter:        orDefault(cfg.RescueStuckJobsAfter, DefaultRescueAfter),
		RetryPolicy:                 cfg.RetryPolicy,
		MaxAttempts:                 cfg.MaxAttempts,
		PeriodicJobs:                cfg.PeriodicJobs,
		ErrorHandler:                cfg.ErrorHandler,
		CompletedJobRetentionPeriod: cfg.CompletedJobRetention,
		FetchPollInterval:           cfg.FetchPollInterval,
		LeaderElectionDisabled:      cfg.NoLeader,
	}
	if rc.RescueStuckJobsAfter < rc.JobTimeout {
		rc.RescueStuckJobsAfter = rc.JobTimeout
	}
	if rc.Logger == nil {
		rc.Logger = slog.New(slog.DiscardHandler)
	}
	rc.FetchCooldown = orDefault(cfg.FetchCooldown, 10*time.Millisecond)
	if rc.FetchPollInterval > 0 && rc.FetchPollInterval < rc.FetchCooldown {
		rc.FetchCooldown = rc.FetchPollInterval
	}
	if cfg.Workers != nil {
		rc.Workers = cfg.Workers
		rc.Queues = map[string]river.QueueConfig{}
		for name, n := range cfg.Queues {
			if n > 0 {
				rc.Queues[name] = river.QueueConfig{MaxWorkers: n}
			}
		}
		if len(rc.Queues) == 0 {
			rc.Queues[river.QueueDefault] = river.QueueConfig{MaxWorkers: 1}
		}
	}
	c, err := drv.NewRiverClient(rc)
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	return &Queue{river: c, drv: drv}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// InsertTx enqueues args inside the ledger transaction tx: the job exists if
// and only if the transaction commits.
func (q *Queue) InsertTx(ctx context.Context, tx ledger.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return q.river.InsertTx(ctx, tx, args, opts)
}

// Insert enqueues args on its own.
func (q *Queue) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return q.river.Insert(ctx, args, opts)
}

// CompleteTx marks job completed inside tx, so that the job completes if and
// only if the outcome it recorded in tx commits. It works only inside a
// River worker.
func CompleteTx[T river.JobArgs](ctx context.Context, tx ledger.Tx, job *river.Job[T]) error {
	drv, err := engine.Of(tx)
	if err != nil {
		return err
	}
	return drv.CompleteJobTx(ctx, tx, job.JobRow)
}

// Start starts working jobs.
func (q *Queue) Start(ctx context.Context) error { return q.river.Start(ctx) }

// Stop stops fetching jobs and waits for running ones to finish (or ctx to end).
func (q *Queue) Stop(ctx context.Context) error { return q.river.Stop(ctx) }

// StopAndCancel cancels running jobs' contexts and waits for them to return.
func (q *Queue) StopAndCancel(ctx context.Context) error { return q.river.StopAndCancel(ctx) }

// Subscribe delivers job events (completed, failed, ...) of the given kinds.
func (q *Queue) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	return q.river.Subscribe(kinds...)
}

// List lists jobs.
func (q *Queue) List(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error) {
	return q.river.JobList(ctx, params)
}

// Get returns one job.
func (q *Queue) Get(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return q.river.JobGet(ctx, id)
}

// Retry makes a discarded, cancelled or retryable job available to run now,
// with its attempts left as they are (River gives it one more try).
func (q *Queue) Retry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return q.river.JobRetry(ctx, id)
}

// InsertManyTx enqueues many jobs inside the ledger transaction tx in one
// statement per engine, with the same options for each; the jobs exist if
// and only if the transaction commits. It returns how many were inserted,
// not counting unique jobs that already existed.
func (q *Queue) InsertManyTx(ctx context.Context, tx ledger.Tx, args []river.JobArgs, opts *river.InsertOpts) (int, error) {
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i] = river.InsertManyParams{Args: a, InsertOpts: opts}
	}
	res, err := q.river.InsertManyTx(ctx, tx, params)
	n := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			n++
		}
	}
	return n, err
}
