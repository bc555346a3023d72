package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// DeliveryStore is what delivery needs of the books; a ledger.Store has it.
type DeliveryStore interface {
	GetAlert(ctx context.Context, id int64) (ledger.Alert, error)
	GetFinding(ctx context.Context, id string) (ledger.Finding, error)
	FindingHistory(ctx context.Context, id string) ([]ledger.HistoryEvent, error)
	GetRun(ctx context.Context, id int64) (ledger.Run, error)
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	ListAlerts(ctx context.Context, runID int64, limit int) ([]ledger.Alert, error)
	FirstDelivered(ctx context.Context, subject string) (ledger.Alert, error)
	MarkAlertDelivered(ctx context.Context, d ledger.AlertDelivery) (ledger.Alert, error)
	MarkAlertFailed(ctx context.Context, f ledger.AlertFailure) (ledger.Alert, error)
	// GetRemedy reads the request a request or decided alert is about.
	GetRemedy(ctx context.Context, id int64) (ledger.Remedy, error)
}

// Options are a Deliverer's collaborators. All are optional.
type Options struct {
	// Logger receives warnings (a possible duplicate, a recovered post).
	// Default: discard.
	Logger *slog.Logger
	// Metrics counts outcomes. Default: fresh, unregistered collectors.
	Metrics *Metrics
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Sleep waits d or until ctx ends, for the channel's rate token.
	// Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// HTTPClient sends the requests to Slack; its Timeout defaults to
	// Config.Timeout. Default: a client of its own.
	HTTPClient *http.Client
}

// Deliverer posts recorded alerts to Slack. One Deliverer serves a
// process: its per-channel token buckets only pace what shares it. It is
// safe for concurrent use.
type Deliverer struct {
	store   DeliveryStore
	cfg     Config
	poster  poster
	limiter *channelLimiter
	log     *slog.Logger
	metrics *Metrics
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
}

// NewDeliverer checks cfg (after WithDefaults) and returns a Deliverer.
func NewDeliverer(store DeliveryStore, cfg Config, opts Options) (*Deliverer, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Deliverer{store: store, cfg: cfg, limiter: newChannelLimiter(cfg.ChannelInterval, cfg.ChannelBurst),
		log: opts.Logger, metrics: opts.Metrics, now: opts.Now, sleep: opts.Sleep}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.metrics == nil {
		d.metrics = NewMetrics()
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.sleep == nil {
		d.sleep = sleepCtx
	}
	client := &http.Client{}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		client = &c
	}
	if client.Timeout == 0 {
		client.Timeout = cfg.Timeout
	}
	switch cfg.Mode {
	case ModeBot:
		d.poster = newBotPoster(cfg, client, d.log)
	case ModeWebhook:
		base := client.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		client.Transport = captureTransport{base: base}
		var secrets []string
		for _, u := range cfg.Webhooks {
			secrets = append(secrets, u)
			if pu, err := url.Parse(u); err == nil && len(pu.Path) > 1 {
				secrets = append(secrets, pu.Path, strings.TrimPrefix(pu.Path, "/"))
			}
		}
		d.poster = &webhookPoster{urls: cfg.Webhooks, client: client, defaultWait: cfg.DefaultRetryAfter, secrets: secrets}
	}
	return d, nil
}

// Deliver posts alert alertID. attempt is the queue's count of tries,
// starting at 1, not counting snoozes (River's job.Attempt).
//
// It returns nil when the alert is delivered, was delivered already, or is
// a run summary superseded by a newer one; a *RetryAfterError when it must
// wait (snooze the job, the try does not count); a *PermanentError when
// Slack refused it for good (cancel the job; the alert is marked discarded);
// any other error for a failed try to be retried with backoff (the alert is
// marked discarded when attempt reaches Config.MaxAttempts).
//
// In bot mode a retry first looks for a message carrying the alert's id in
// its metadata among the channel's recent messages: a try that posted and
// then crashed before recording is recorded, not posted again. In webhook
// mode no lookup is possible; posting again after a try of unknown outcome
// counts Metrics.PossibleDuplicates.
func (d *Deliverer) Deliver(ctx context.Context, alertID int64, attempt int) error {
	a, err := d.store.GetAlert(ctx, alertID)
	if errors.Is(err, ledger.ErrNotFound) {
		return &PermanentError{AlertID: alertID, Err: err}
	}
	if err != nil {
		return fmt.Errorf("alerts: deliver alert %d: %w", alertID, err)
	}
	if a.State == ledger.AlertDelivered {
		d.metrics.result(d.cfg.Mode, ResultAlreadyDelivered)
		return nil
	}
	r, err := parseReason(a.Reason)
	if err != nil {
		return d.reject(ctx, a, err)
	}
	now := d.now()

	if done, err := d.gate(ctx, a, r, now); done || err != nil {
		return err
	}

	m, err := d.build(ctx, a, r)
	if err != nil {
		if errors.Is(err, ledger.ErrNotFound) {
			return d.reject(ctx, a, err)
		}
		return fmt.Errorf("alerts: deliver alert %d: %w", a.ID, err)
	}
	if err := d.pace(ctx, a, m, now); err != nil {
		return err
	}

	// Tries before this one that left no record ended in a crash, or failed
	// to record their outcome: they may have posted.
	unrecorded := attempt-1 > a.Attempts
	maybePosted := unrecorded || a.MayHavePosted
	if attempt > 1 || a.Attempts > 0 {
		if done, err := d.recoverEarlierPost(ctx, a, m, attempt, maybePosted); done || err != nil {
			return err
		}
	}
	return d.postAndRecord(ctx, a, m, attempt, maybePosted)
}

// gate decides whether the alert may go out now, before its message is
// built. It reports done (with a nil error) when a newer run summary
// supersedes the alert, which is then discarded, and returns a
// *RetryAfterError while an earlier alert to the same channel or finding is
// not delivered yet.
func (d *Deliverer) gate(ctx context.Context, a ledger.Alert, r reason, now time.Time) (done bool, err error) {
	var siblings []ledger.Alert
	if a.RunID != 0 { // zero would list every alert
		if siblings, err = d.store.ListAlerts(ctx, a.RunID, listAll); err != nil {
			return false, fmt.Errorf("alerts: deliver alert %d: %w", a.ID, err)
		}
	}
	if r.Kind == reasonSummary {
		if newer := newerSummary(a, siblings); newer != 0 {
			if _, err := d.store.MarkAlertFailed(ctx, ledger.AlertFailure{ID: a.ID,
				Error: fmt.Sprintf("superseded by alert %d", newer), Discard: true, Now: now}); err != nil {
				return false, fmt.Errorf("alerts: deliver alert %d: %w", a.ID, err)
			}
			d.metrics.result(d.cfg.Mode, ResultSuperseded)
			return true, nil
		}
	}
	if earlier := d.blockedBy(a, siblings, now); earlier != 0 {
		d.metrics.result(d.cfg.Mode, ResultOrdered)
		return false, &RetryAfterError{AlertID: a.ID, Wait: d.cfg.OrderWait,
			Reason: fmt.Sprintf("alert %d to the same channel or finding is not delivered yet", earlier)}
	}
	return false, nil
}

// pace reserves the message's channel with the rate limiter before any call
// to Slack about it: it sleeps for a short local wait and returns a
// *RetryAfterError when the wait is longer than Config.MaxLocalWait or Slack
// has paused the channel.
func (d *Deliverer) pace(ctx context.Context, a ledger.Alert, m message, now time.Time) error {
	wait, paused, ok := d.limiter.reserve(m.Channel, now, d.cfg.MaxLocalWait)
	if !ok {
		source := "local"
		if paused {
			source = "slack"
		}
		d.metrics.result(d.cfg.Mode, ResultRateLimited)
		d.metrics.wait(source, wait)
		return &RetryAfterError{AlertID: a.ID, Wait: wait, Reason: "channel " + m.Channel + " is rate limited"}
	}
	if wait > 0 {
		d.metrics.wait("local", wait)
		if err := d.sleep(ctx, wait); err != nil {
			return fmt.Errorf("alerts: deliver alert %d: %w", a.ID, err)
		}
	}
	return nil
}

// recoverEarlierPost looks in the channel for a message an earlier try
// posted without recording it (bot mode). It reports done when it found and
// recorded one, so the alert is not posted again.
func (d *Deliverer) recoverEarlierPost(ctx context.Context, a ledger.Alert, m message, attempt int, maybePosted bool) (done bool, err error) {
	p, found, serr := d.poster.find(ctx, m, a.CreatedAt)
	if serr != nil {
		return false, d.failed(ctx, a, m.Channel, attempt, serr, maybePosted)
	}
	if !found {
		return false, nil
	}
	if err := d.record(ctx, a, p, d.now()); err != nil {
		return false, err
	}
	d.metrics.result(d.cfg.Mode, ResultRecovered)
	d.log.Info("slack alert was posted by an earlier try; recorded without posting again",
		slog.Int64("alert_id", a.ID), slog.String("channel", p.Channel), slog.String("ts", p.MessageTS))
	d.updateParent(ctx, m)
	return true, nil
}

// postAndRecord posts the message, records the delivery and marks the
// thread's parent resolved. A webhook post after a try of unknown outcome is
// counted as a possible duplicate.
func (d *Deliverer) postAndRecord(ctx context.Context, a ledger.Alert, m message, attempt int, maybePosted bool) error {
	p, serr := d.poster.post(ctx, m)
	if serr != nil {
		return d.failed(ctx, a, m.Channel, attempt, serr, maybePosted)
	}
	if d.cfg.Mode == ModeWebhook && maybePosted {
		d.metrics.duplicate(d.cfg.Mode)
		d.log.Warn("slack alert posted again after a try of unknown outcome; webhooks cannot look up an earlier post",
			slog.Int64("alert_id", a.ID), slog.String("channel", m.Channel), slog.Int("attempt", attempt))
	}
	if err := d.record(ctx, a, p, d.now()); err != nil {
		return err
	}
	d.metrics.result(d.cfg.Mode, ResultDelivered)
	d.updateParent(ctx, m)
	return nil
}

// updateParent marks the thread's first message resolved (bot mode). It
// decorates what the follow-up already says, so a failure is logged and
// counted, not retried.
func (d *Deliverer) updateParent(ctx context.Context, m message) {
	if m.Parent == nil {
		return
	}
	if err := d.poster.update(ctx, *m.Parent, m.ParentTS); err != nil {
		d.metrics.ParentUpdates.WithLabelValues("failed").Inc()
		d.log.Warn("could not mark the first slack message of a resolved finding",
			slog.Int64("alert_id", m.AlertID), slog.String("channel", m.Parent.Channel), slog.String("error", err.Error()))
		return
	}
	d.metrics.ParentUpdates.WithLabelValues("updated").Inc()
}

// record marks the alert delivered. Losing the race to another delivery of
// the same alert means it was posted twice: counted, not an error.
func (d *Deliverer) record(ctx context.Context, a ledger.Alert, p posted, now time.Time) error {
	_, err := d.store.MarkAlertDelivered(ctx, ledger.AlertDelivery{ID: a.ID, Channel: p.Channel,
		MessageTS: p.MessageTS, ThreadTS: p.ThreadTS, Now: now})
	if errors.Is(err, ledger.ErrConflict) {
		d.metrics.duplicate(d.cfg.Mode)
		d.log.Warn("slack alert was delivered concurrently by another try", slog.Int64("alert_id", a.ID))
		return nil
	}
	if err != nil {
		return fmt.Errorf("alerts: record delivery of alert %d: %w", a.ID, err)
	}
	return nil
}

// mayHavePostedNote tells a person reading a recorded failure that it
// followed a try which may have posted; Alert.MayHavePosted carries the
// doubt to later tries.
const mayHavePostedNote = " (an earlier try may have posted)"

// failed records a failed try and returns the error the queue acts on.
func (d *Deliverer) failed(ctx context.Context, a ledger.Alert, channel string, attempt int, e *slackError, maybePosted bool) error {
	now := d.now()
	switch {
	case e.class == failRateLimited:
		d.limiter.pause(channel, now.Add(e.wait))
		d.metrics.result(d.cfg.Mode, ResultRateLimited)
		d.metrics.wait("slack", e.wait)
		return &RetryAfterError{AlertID: a.ID, Wait: e.wait, Reason: e.Error()}
	case !e.Retryable():
		return d.reject(ctx, a, e)
	}
	text := e.Error()
	if maybePosted && !e.class.ambiguous() {
		text += mayHavePostedNote
	}
	last := attempt >= d.cfg.MaxAttempts
	if _, err := d.store.MarkAlertFailed(ctx, ledger.AlertFailure{ID: a.ID, Error: text, Discard: last,
		MayHavePosted: maybePosted || e.class.ambiguous(), Now: now}); err != nil {
		return fmt.Errorf("alerts: deliver alert %d: %v; recording the failure: %w", a.ID, e, err)
	}
	if last {
		d.metrics.result(d.cfg.Mode, ResultDiscarded)
		return fmt.Errorf("alerts: deliver alert %d: try %d of %d, giving up: %w", a.ID, attempt, d.cfg.MaxAttempts, e)
	}
	d.metrics.result(d.cfg.Mode, ResultFailed)
	return fmt.Errorf("alerts: deliver alert %d: try %d of %d: %w", a.ID, attempt, d.cfg.MaxAttempts, e)
}

// reject gives the alert up for good.
func (d *Deliverer) reject(ctx context.Context, a ledger.Alert, cause error) error {
	if _, err := d.store.MarkAlertFailed(ctx, ledger.AlertFailure{ID: a.ID, Error: cause.Error(), Discard: true, Now: d.now()}); err != nil {
		return fmt.Errorf("alerts: deliver alert %d: %v; recording the failure: %w", a.ID, cause, err)
	}
	d.metrics.result(d.cfg.Mode, ResultRejected)
	return &PermanentError{AlertID: a.ID, Err: cause}
}

// blockedBy returns the earliest alert that must be delivered before a: an
// earlier undelivered alert of the same run to the same channel, or about
// the same subject, younger than OrderTimeout. Zero when none.
func (d *Deliverer) blockedBy(a ledger.Alert, siblings []ledger.Alert, now time.Time) int64 {
	for _, s := range siblings {
		if s.ID >= a.ID {
			break
		}
		if s.State != ledger.AlertPending || now.Sub(s.CreatedAt) > d.cfg.OrderTimeout {
			continue
		}
		if s.Channel == a.Channel || s.Subject == a.Subject {
			return s.ID
		}
	}
	return 0
}

// newerSummary returns a newer summary alert of a's run, or zero.
func newerSummary(a ledger.Alert, siblings []ledger.Alert) int64 {
	var newer int64
	for _, s := range siblings {
		if s.ID > a.ID && s.Subject == a.Subject {
			if r, err := parseReason(s.Reason); err == nil && r.Kind == reasonSummary {
				newer = s.ID
			}
		}
	}
	return newer
}

// build loads what the alert is about and renders its message.
func (d *Deliverer) build(ctx context.Context, a ledger.Alert, r reason) (message, error) {
	if r.Kind == reasonRequest || r.Kind == reasonDecided {
		return d.buildRemedy(ctx, a, r)
	}
	if r.Kind == reasonSummary {
		run, err := d.store.GetRun(ctx, a.RunID)
		if err != nil {
			return message{}, err
		}
		open, err := openFindings(ctx, d.store, run)
		if err != nil {
			return message{}, err
		}
		m := buildSummary(d.cfg, summaryInput{AlertID: a.ID, Run: run, Findings: open}, metadata(a, "run_key"))
		m.Channel = a.Channel
		return m, nil
	}
	f, err := d.store.GetFinding(ctx, a.Subject)
	if err != nil {
		return message{}, err
	}
	hist, err := resolutionHistory(ctx, d.store, f)
	if err != nil {
		return message{}, err
	}
	m, err := buildFindingMessage(d.cfg, a, f, hist)
	if err != nil {
		return message{}, err
	}
	if r.Kind == reasonResolved && d.cfg.Mode == ModeBot {
		parent, err := d.store.FirstDelivered(ctx, a.Subject)
		switch {
		case err == nil && parent.MessageTS != "":
			m.Channel = parent.Channel
			m.ThreadTS = parent.MessageTS
			if parent.ThreadTS != "" {
				m.ThreadTS = parent.ThreadTS
			}
			if pm, err := resolvedParent(d.cfg, parent, f, hist); err == nil {
				m.Parent, m.ParentTS = &pm, parent.MessageTS
			}
		case err != nil && !errors.Is(err, ledger.ErrNotFound):
			return message{}, err
		}
	}
	return m, nil
}

// resolutionHistory is the history of f when a person resolved it (who and
// where, for the message), nil otherwise.
func resolutionHistory(ctx context.Context, s interface {
	FindingHistory(context.Context, string) ([]ledger.HistoryEvent, error)
}, f ledger.Finding) ([]ledger.HistoryEvent, error) {
	if f.Status != ledger.FindingResolved || f.ResolvedBy != ledger.ResolvedByPerson {
		return nil, nil
	}
	return s.FindingHistory(ctx, f.ID)
}

// openFindings are the open and acknowledged findings a run last saw.
func openFindings(ctx context.Context, s interface {
	ListFindings(context.Context, ledger.FindingFilter) ([]ledger.Finding, error)
}, run ledger.Run) ([]ledger.Finding, error) {
	return s.ListFindings(ctx, ledger.FindingFilter{Provider: run.Provider, RunID: run.ID,
		Statuses: []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged}, Limit: listAll})
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// JobArgs are the arguments of the queue job that delivers one alert.
type JobArgs struct {
	AlertID int64 `json:"alert_id"`
}

// JobKind is the queue job kind of alert delivery.
const JobKind = "alerts.deliver"

// Kind names the job kind (river.JobArgs).
func (JobArgs) Kind() string { return JobKind }

// String identifies the job in logs.
func (a JobArgs) String() string { return "alert " + strconv.FormatInt(a.AlertID, 10) }
