package alerts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// RetryAfterError says that a delivery did not happen yet and should run
// again after Wait without counting as a try: Slack answered 429 (Wait is
// its Retry-After), the channel's rate token is further away than
// Config.MaxLocalWait, or an earlier alert of the channel is still
// undelivered. A queue worker snoozes the job: river.JobSnooze(e.Wait).
type RetryAfterError struct {
	AlertID int64
	Wait    time.Duration
	// Reason says what is waited for.
	Reason string
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("alerts: alert %d: retry after %s: %s", e.AlertID, e.Wait, e.Reason)
}

// PermanentError says that Slack refused the message for a reason a retry
// cannot fix (an invalid payload, a missing or archived channel, a revoked
// token); the alert is marked discarded. A queue worker cancels the job:
// river.JobCancel(err), which leaves it listed with the discarded jobs.
type PermanentError struct {
	AlertID int64
	Err     error
}

func (e *PermanentError) Error() string {
	return fmt.Sprintf("alerts: alert %d: permanent failure: %v", e.AlertID, e.Err)
}

func (e *PermanentError) Unwrap() error { return e.Err }

// RetryAfter reports whether err asks for a snooze, and for how long.
func RetryAfter(err error) (time.Duration, bool) {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.Wait, true
	}
	return 0, false
}

// IsPermanent reports whether err is a delivery that must not be retried.
func IsPermanent(err error) bool {
	var pe *PermanentError
	return errors.As(err, &pe)
}

// failClass sorts a failed call to Slack.
type failClass string

const (
	failRateLimited failClass = "rate_limited"
	failRejected    failClass = "rejected"
	failServer      failClass = "server_error"
	failTimeout     failClass = "timeout"
	failNetwork     failClass = "network"
)

// ambiguous reports whether a failure of this class may have happened after
// Slack accepted the message.
func (c failClass) ambiguous() bool {
	return c == failServer || c == failTimeout || c == failNetwork
}

// slackError is a failed call to Slack, its text free of secrets.
type slackError struct {
	class failClass
	wait  time.Duration
	msg   string
}

func (e *slackError) Error() string { return string(e.class) + ": " + e.msg }

// Retryable reports whether another try may succeed.
func (e *slackError) Retryable() bool { return e.class != failRejected }

// Slack Web API error codes worth another try; every other ok:false code
// is a problem with the request or the setup.
var retryableCodes = map[string]bool{
	"internal_error":      true,
	"fatal_error":         true,
	"service_unavailable": true,
	"request_timeout":     true,
	"team_added_to_org":   true,
}

// classify turns an error from slack-go into a slackError whose text holds
// no secret: slack-go's errors can quote the request URL, and a webhook URL
// is a credential. body is the start of an error response body, when read.
func classify(err error, body string, defaultWait time.Duration, secrets []string) *slackError {
	if err == nil {
		return nil
	}
	e := &slackError{}
	var (
		rl    *slack.RateLimitedError
		sc    slack.StatusCodeError
		se    slack.SlackErrorResponse
		ne    *strconv.NumError
		ue    *url.Error
		netEr net.Error
	)
	switch {
	case errors.As(err, &rl):
		e.class, e.wait, e.msg = failRateLimited, rl.RetryAfter, "Slack answered 429, retry after "+rl.RetryAfter.String()
		if e.wait <= 0 {
			e.wait = defaultWait
		}
	case errors.As(err, &ne) && ne.Func == "ParseInt":
		// A 429 whose Retry-After is not a number of seconds.
		e.class, e.wait, e.msg = failRateLimited, defaultWait, "Slack answered 429 with an unreadable Retry-After"
	case errors.As(err, &sc):
		e.msg = "HTTP " + strconv.Itoa(sc.Code)
		if t := http.StatusText(sc.Code); t != "" {
			e.msg += " " + t
		}
		if body != "" {
			e.msg += ": " + body
		}
		switch {
		case sc.Code == http.StatusTooManyRequests:
			e.class, e.wait = failRateLimited, defaultWait
		case sc.Code >= 500:
			e.class = failServer
		case sc.Code == http.StatusRequestTimeout:
			e.class = failTimeout
		default:
			e.class = failRejected
		}
	case errors.As(err, &se):
		e.msg = "Slack error " + se.Err
		switch {
		case se.Err == "ratelimited":
			e.class, e.wait = failRateLimited, defaultWait
		case retryableCodes[se.Err]:
			e.class = failServer
		default:
			e.class = failRejected
		}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netEr) && netEr.Timeout():
		e.class, e.msg = failTimeout, "no answer in time"
		if errors.As(err, &ue) {
			e.msg = ue.Op + ": " + ue.Err.Error()
		}
	case errors.As(err, &ue):
		e.class, e.msg = failNetwork, ue.Op+": "+ue.Err.Error()
	case errors.Is(err, context.Canceled):
		e.class, e.msg = failNetwork, "canceled"
	default:
		// Anything else (an unreadable answer) is treated as a fault of the
		// server: retried.
		e.class, e.msg = failServer, err.Error()
	}
	e.msg = redact(e.msg, secrets)
	return e
}

// redact removes secrets and any URL from s.
func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 8 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	s = urlPattern.ReplaceAllString(s, "[url]")
	return secretPattern.ReplaceAllString(s, "[redacted]")
}
