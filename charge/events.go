package charge

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// Headers of an outgoing event delivery. The signature is
// "v1=" + hex(HMAC-SHA256(secret, timestamp + "." + body)); receivers should
// check it, refuse timestamps older than a few minutes, and use the
// Idempotency-Key (the event id) to process each event once.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderEventType      = "Reconcile-Event-Type"
	HeaderTimestamp      = "Reconcile-Timestamp"
	HeaderSignature      = "Reconcile-Signature"
)

// Sign returns the signature header value for body sent at ts.
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts.Unix(), 10)))
	mac.Write([]byte("."))
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a delivery's signature and that it is at most tolerance old.
func Verify(secret, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q: not a Unix time", timestamp)
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("timestamp %s is outside the %s tolerance", ts.UTC().Format(time.RFC3339), tolerance)
	}
	if !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(signature)) {
		return errors.New("signature does not match")
	}
	return nil
}

func deliverOpts() *river.InsertOpts {
	return &river.InsertOpts{Queue: queue.QueueEvents, MaxAttempts: 20}
}

type eventWorker struct {
	river.WorkerDefaults[DeliverEventArgs]
	svc    *Service
	client *http.Client
}

func (w *eventWorker) Timeout(*river.Job[DeliverEventArgs]) time.Duration { return 30 * time.Second }

func (w *eventWorker) Work(ctx context.Context, job *river.Job[DeliverEventArgs]) error {
	s := w.svc
	ev, err := s.store.GetEvent(ctx, job.Args.EventID)
	if errors.Is(err, ledger.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	now := s.clock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.Args.Endpoint, bytes.NewReader(ev.Payload))
	if err != nil {
		return river.JobCancel(fmt.Errorf("event %s: endpoint: %w", ev.ID, err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderIdempotencyKey, ev.ID)
	req.Header.Set(HeaderEventType, ev.Type)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(s.cfg.SigningSecret, now, ev.Payload))
	client := w.client
	if client == nil {
		client = &http.Client{Timeout: 20 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		s.metrics.EventDeliveries.WithLabelValues("error").Inc()
		return fmt.Errorf("event %s: deliver: %w", ev.ID, redactURLError(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		s.metrics.EventDeliveries.WithLabelValues("delivered").Inc()
		return nil
	case code == http.StatusRequestTimeout, code == http.StatusConflict, code == http.StatusTooEarly,
		code == http.StatusTooManyRequests, code >= 500:
		s.metrics.EventDeliveries.WithLabelValues("retry").Inc()
		return fmt.Errorf("event %s: endpoint answered %d", ev.ID, code)
	default:
		s.metrics.EventDeliveries.WithLabelValues("refused").Inc()
		return river.JobCancel(fmt.Errorf("event %s: endpoint refused it with %d", ev.ID, code))
	}
}

// redactURLError drops the URL from a client error: endpoints can carry
// tokens in their query.
func redactURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
