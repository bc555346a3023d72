package alertstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// WebhookMethod is the method name to give Fail for webhook posts.
const WebhookMethod = "webhook"

// Webhook is a fake of Slack's incoming webhooks: one URL per channel, each
// with a secret path, on one httptest server.
type Webhook struct {
	srv *httptest.Server
	rec *recorder

	mu    sync.Mutex
	paths map[string]string // path -> channel
	urls  map[string]string // channel -> URL
}

// NewWebhook starts a fake with a webhook URL for each channel, stopped
// when the test ends. now stamps the posts (nil: time.Now).
func NewWebhook(t testing.TB, now func() time.Time, channels ...string) *Webhook {
	w := &Webhook{rec: newRecorder(now), paths: map[string]string{}, urls: map[string]string{}}
	w.srv = httptest.NewServer(http.HandlerFunc(w.handle))
	t.Cleanup(w.srv.Close)
	for _, ch := range channels {
		secret := make([]byte, 12)
		_, _ = rand.Read(secret)
		path := "/services/T0000TEST/B" + strings.ToUpper(hex.EncodeToString(secret[:4])) + "/" + hex.EncodeToString(secret[4:])
		w.paths[path] = ch
		w.urls[ch] = w.srv.URL + path
	}
	return w
}

// URLs maps each channel to its webhook URL (Config.Webhooks).
func (w *Webhook) URLs() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.urls))
	for k, v := range w.urls {
		out[k] = v
	}
	return out
}

// Fail makes the next webhook posts, to any channel, answer with faults.
func (w *Webhook) Fail(faults ...Fault) { w.rec.fail(WebhookMethod, faults) }

// Posts returns the accepted messages in the order they were accepted.
func (w *Webhook) Posts() []Post { return w.rec.all() }

// PostsPerAlert counts accepted messages per alert id.
func (w *Webhook) PostsPerAlert() map[string]int { return countByAlert(w.rec.all()) }

// Requests counts the webhook requests made, faults included.
func (w *Webhook) Requests() int { return w.rec.count(WebhookMethod) }

// RequestLog lists every webhook request received, oldest first.
func (w *Webhook) RequestLog() []Request { return w.rec.requestLog() }

// PendingFaults counts the faults not used yet.
func (w *Webhook) PendingFaults() int { return w.rec.pending(WebhookMethod) }

// WaitForPosts blocks until n messages are accepted or ctx ends.
func (w *Webhook) WaitForPosts(ctx context.Context, n int) error { return w.rec.wait(ctx, n) }

func (w *Webhook) handle(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	channel, ok := w.paths[r.URL.Path]
	w.mu.Unlock()
	if !ok || r.Method != http.MethodPost {
		http.Error(rw, "no_service", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		Text   string          `json:"text"`
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Text == "" && len(msg.Blocks) == 0 {
		http.Error(rw, "invalid_payload", http.StatusBadRequest)
		return
	}
	p := Post{Channel: channel, Text: msg.Text, Blocks: msg.Blocks, Raw: body}
	if m := footerAlertID.FindSubmatch(msg.Blocks); m != nil {
		p.AlertID = string(m[1])
	}
	accepted := false
	accept := func() { w.rec.add(p); accepted = true }
	if f, ok := w.rec.next(WebhookMethod, channel, p.AlertID); ok {
		if fault(rw, r, f, accept) {
			return
		}
		if r.Context().Err() != nil {
			return
		}
	}
	if !accepted {
		accept()
	}
	_, _ = io.WriteString(rw, "ok")
}
