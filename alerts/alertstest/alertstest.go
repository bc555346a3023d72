// Package alertstest provides fake Slack endpoints for tests of alert
// delivery: a Web API built on slack-go's slacktest server (chat.postMessage
// with message metadata, conversations.history and conversations.replies)
// and incoming webhooks on an httptest server. Both record what they
// receive and can answer the next requests with faults: a status with
// Retry-After, a Slack error, a hang past the client's timeout, with or
// without the message having been accepted first.
//
// It must not be imported outside tests.
package alertstest

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Post is one message a fake accepted.
type Post struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	// Blocks is the Block Kit JSON as posted.
	Blocks json.RawMessage
	// AlertID is the alert id from the message metadata (bot) or from the
	// footer's "alert N" (webhook).
	AlertID string
	// Metadata is the message metadata as posted (bot), or nil.
	Metadata json.RawMessage
	// Raw is the request body: the form (bot, token removed) or the JSON
	// (webhook), as first posted.
	Raw []byte
	// Updates counts the chat.update calls that changed the message.
	Updates int
	// Earlier holds the Blocks each update replaced, oldest first.
	Earlier []json.RawMessage
}

// Fault is how a fake answers one request instead of normally.
type Fault struct {
	// Status is the HTTP status to answer; 0 means 200.
	Status int
	// RetryAfter is the Retry-After header to send, if any.
	RetryAfter string
	// SlackError makes the Web API answer 200 {"ok":false,"error":...}.
	SlackError string
	// Body is the body of a webhook error answer (e.g. "invalid_payload").
	Body string
	// Hang holds the request this long, or until the client gives up.
	Hang time.Duration
	// Accept records the message before the fault: Slack took it, but the
	// answer was lost.
	Accept bool
}

// Request is one request a fake received.
type Request struct {
	Method  string
	Channel string
	// AlertID is the alert a post carried, if any.
	AlertID string
	// At is the fake's clock when the request arrived.
	At time.Time
	// Fault is the fault it was answered with, if any.
	Fault *Fault
}

// recorder keeps posts and pending faults.
type recorder struct {
	mu       sync.Mutex
	posts    []Post
	log      []Request
	faults   map[string][]Fault
	requests map[string]int
	now      func() time.Time
	lastTS   time.Time
	notify   chan struct{}
}

func newRecorder(now func() time.Time) *recorder {
	if now == nil {
		now = time.Now
	}
	return &recorder{faults: map[string][]Fault{}, requests: map[string]int{}, now: now, notify: make(chan struct{})}
}

// next logs a request to method and pops its next fault, if any.
func (r *recorder) next(method, channel, alertID string) (Fault, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[method]++
	req := Request{Method: method, Channel: channel, AlertID: alertID, At: r.now()}
	q := r.faults[method]
	if len(q) == 0 {
		r.log = append(r.log, req)
		return Fault{}, false
	}
	f := q[0]
	r.faults[method] = q[1:]
	req.Fault = &f
	r.log = append(r.log, req)
	return f, true
}

func (r *recorder) requestLog() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

func (r *recorder) pending(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.faults[method])
}

func (r *recorder) fail(method string, faults []Fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults[method] = append(r.faults[method], faults...)
}

// add records p, stamping a unique, increasing ts.
func (r *recorder) add(p Post) Post {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.now().UTC()
	if !t.After(r.lastTS) {
		t = r.lastTS.Add(time.Microsecond)
	}
	r.lastTS = t
	p.TS = fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
	r.posts = append(r.posts, p)
	close(r.notify)
	r.notify = make(chan struct{})
	return p
}

// replace updates the post at channel and ts; it reports whether it exists.
func (r *recorder) replace(channel, ts, text string, blocks, meta json.RawMessage) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, p := range r.posts {
		if p.Channel == channel && p.TS == ts {
			r.posts[i].Earlier = append(p.Earlier[:len(p.Earlier):len(p.Earlier)], p.Blocks)
			r.posts[i].Text, r.posts[i].Blocks, r.posts[i].Updates = text, blocks, p.Updates+1
			if meta != nil {
				r.posts[i].Metadata = meta
			}
			return true
		}
	}
	return false
}

func (r *recorder) all() []Post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.posts)
}

func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[method]
}

// wait blocks until at least n posts are recorded or ctx ends.
func (r *recorder) wait(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		have, ch := len(r.posts), r.notify
		r.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("alertstest: %d posts, waiting for %d: %w", have, n, ctx.Err())
		case <-ch:
		}
	}
}

// hang holds a request for d or until the client goes away.
func hang(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

var footerAlertID = regexp.MustCompile(`alert (\d+)`)

// countByAlert counts posts per alert id.
func countByAlert(posts []Post) map[string]int {
	n := map[string]int{}
	for _, p := range posts {
		n[p.AlertID]++
	}
	return n
}
