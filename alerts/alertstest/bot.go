package alertstest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"
)

// Web API methods a Bot fakes; pass them to Fail.
const (
	PostMessage   = "chat.postMessage"
	Update        = "chat.update"
	History       = "conversations.history"
	Replies       = "conversations.replies"
	PostEphemeral = "chat.postEphemeral"
	ViewsOpen     = "views.open"
	GroupUsers    = "usergroups.users.list"
)

// Bot is a fake Slack Web API for bot-token mode on slacktest's server.
type Bot struct {
	srv *slacktest.Server
	rec *recorder

	mu         sync.Mutex
	ephemerals []Ephemeral
	views      []OpenedView
	groups     map[string][]string
}

// Ephemeral is a message shown to one user (chat.postEphemeral).
type Ephemeral struct {
	Channel, User, Text string
}

// OpenedView is a modal opened with views.open.
type OpenedView struct {
	TriggerID string
	// View is the view's JSON as sent.
	View json.RawMessage
}

// NewBot starts a fake Web API, stopped when the test ends. Message
// timestamps come from now (nil: time.Now), so that history lookups by age
// agree with the caller's clock.
func NewBot(t testing.TB, now func() time.Time) *Bot {
	b := &Bot{rec: newRecorder(now), groups: map[string][]string{}}
	b.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/"+PostMessage, b.postMessage)
		c.Handle("/"+Update, b.update)
		c.Handle("/"+History, b.history)
		c.Handle("/"+Replies, b.replies)
		c.Handle("/"+PostEphemeral, b.ephemeral)
		c.Handle("/"+ViewsOpen, b.viewsOpen)
		c.Handle("/"+GroupUsers, b.groupUsers)
	})
	b.srv.Start()
	t.Cleanup(b.srv.Stop)
	return b
}

// APIURL is the base URL to give the client (Config.APIURL).
func (b *Bot) APIURL() string { return b.srv.GetAPIURL() }

// Fail makes the next requests to method answer with faults, in order.
func (b *Bot) Fail(method string, faults ...Fault) { b.rec.fail(method, faults) }

// Posts returns the accepted messages in the order they were accepted, as
// last updated.
func (b *Bot) Posts() []Post { return b.rec.all() }

// PostsPerAlert counts accepted messages per alert id.
func (b *Bot) PostsPerAlert() map[string]int { return countByAlert(b.rec.all()) }

// Requests counts the requests made to method, faults included.
func (b *Bot) Requests(method string) int { return b.rec.count(method) }

// RequestLog lists every request received, oldest first.
func (b *Bot) RequestLog() []Request { return b.rec.requestLog() }

// PendingFaults counts the faults of method not used yet.
func (b *Bot) PendingFaults(method string) int { return b.rec.pending(method) }

// WaitForPosts blocks until n messages are accepted or ctx ends.
func (b *Bot) WaitForPosts(ctx context.Context, n int) error { return b.rec.wait(ctx, n) }

// SetGroup makes user group id have the given members (usergroups.users.list).
func (b *Bot) SetGroup(id string, users ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.groups[id] = slices.Clone(users)
}

// Ephemerals returns the ephemeral messages sent, oldest first.
func (b *Bot) Ephemerals() []Ephemeral {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.ephemerals)
}

// Views returns the modals opened, oldest first.
func (b *Bot) Views() []OpenedView {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.views)
}

func (b *Bot) ephemeral(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	e := Ephemeral{Channel: r.Form.Get("channel"), User: r.Form.Get("user"), Text: r.Form.Get("text")}
	if f, ok := b.rec.next(PostEphemeral, e.Channel, ""); ok && fault(w, r, f, nil) {
		return
	}
	b.mu.Lock()
	b.ephemerals = append(b.ephemerals, e)
	b.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "message_ts": "1.000001"})
}

// viewsOpen answers views.open, which slack-go sends as a JSON body.
func (b *Bot) viewsOpen(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TriggerID string          `json:"trigger_id"`
		View      json.RawMessage `json:"view"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if f, ok := b.rec.next(ViewsOpen, "", ""); ok && fault(w, r, f, nil) {
		return
	}
	if req.TriggerID == "" {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_trigger_id"})
		return
	}
	b.mu.Lock()
	b.views = append(b.views, OpenedView{TriggerID: req.TriggerID, View: req.View})
	n := len(b.views)
	b.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "view": map[string]any{"id": "V" + strconv.Itoa(n), "type": "modal"}})
}

func (b *Bot) groupUsers(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	id := r.Form.Get("usergroup")
	if f, ok := b.rec.next(GroupUsers, "", ""); ok && fault(w, r, f, nil) {
		return
	}
	b.mu.Lock()
	users, ok := b.groups[id]
	b.mu.Unlock()
	if !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "no_such_subteam"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "users": users})
}

// Seed records a message as if someone had posted it (for history tests).
func (b *Bot) Seed(p Post) Post { return b.rec.add(p) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fault answers a request with f; it reports whether the request is done.
func fault(w http.ResponseWriter, r *http.Request, f Fault, accept func()) bool {
	if f.Accept && accept != nil {
		accept()
	}
	hang(r.Context(), f.Hang)
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	switch {
	case f.SlackError != "":
		writeJSON(w, map[string]any{"ok": false, "error": f.SlackError})
	case f.Status != 0 && f.Status != http.StatusOK:
		body := f.Body
		if body == "" {
			body = http.StatusText(f.Status)
		}
		http.Error(w, body, f.Status)
	case f.Accept:
		// Accepted, answered late (or never, when the client gave up).
		return false
	default:
		return false
	}
	return true
}

func (b *Bot) postMessage(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form.Del("token")
	p := Post{Channel: form.Get("channel"), ThreadTS: form.Get("thread_ts"), Text: form.Get("text"),
		Raw: []byte(form.Encode())}
	if bl := form.Get("blocks"); bl != "" {
		p.Blocks = json.RawMessage(bl)
	}
	if md := form.Get("metadata"); md != "" {
		p.Metadata = json.RawMessage(md)
		var meta struct {
			EventPayload struct {
				AlertID string `json:"alert_id"`
			} `json:"event_payload"`
		}
		if json.Unmarshal(p.Metadata, &meta) == nil {
			p.AlertID = meta.EventPayload.AlertID
		}
	}
	if p.Channel == "" {
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	var stored Post
	accepted := false
	accept := func() { stored, accepted = b.rec.add(p), true }
	if f, ok := b.rec.next(PostMessage, p.Channel, p.AlertID); ok {
		if fault(w, r, f, accept) {
			return
		}
		if r.Context().Err() != nil {
			return
		}
	}
	if !accepted {
		accept()
	}
	writeJSON(w, map[string]any{"ok": true, "channel": stored.Channel, "ts": stored.TS,
		"message": map[string]any{"type": "message", "text": stored.Text, "ts": stored.TS, "thread_ts": stored.ThreadTS}})
}

// update answers chat.update: it replaces the text, blocks and metadata of
// the message at ts and counts the update.
func (b *Bot) update(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	channel, ts := r.Form.Get("channel"), r.Form.Get("ts")
	if f, ok := b.rec.next(Update, channel, ""); ok && fault(w, r, f, nil) {
		return
	}
	var blocks, meta json.RawMessage
	if bl := r.Form.Get("blocks"); bl != "" {
		blocks = json.RawMessage(bl)
	}
	if md := r.Form.Get("metadata"); md != "" {
		meta = json.RawMessage(md)
	}
	if !b.rec.replace(channel, ts, r.Form.Get("text"), blocks, meta) {
		writeJSON(w, map[string]any{"ok": false, "error": "message_not_found"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "channel": channel, "ts": ts, "text": r.Form.Get("text")})
}

// history answers conversations.history: top-level messages of a channel
// newest first, from oldest on, paged by an offset cursor.
func (b *Bot) history(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	channel := r.Form.Get("channel")
	if f, ok := b.rec.next(History, channel, ""); ok && fault(w, r, f, nil) {
		return
	}
	var msgs []Post
	for _, p := range b.rec.all() {
		if p.Channel == channel && (p.ThreadTS == "" || p.ThreadTS == p.TS) {
			msgs = append(msgs, p)
		}
	}
	slices.Reverse(msgs)
	b.page(w, r, msgs)
}

// replies answers conversations.replies: the thread's parent, then its
// replies, oldest first.
func (b *Bot) replies(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	channel, ts := r.Form.Get("channel"), r.Form.Get("ts")
	if f, ok := b.rec.next(Replies, channel, ""); ok && fault(w, r, f, nil) {
		return
	}
	var msgs []Post
	for _, p := range b.rec.all() {
		if p.Channel == channel && (p.TS == ts || p.ThreadTS == ts) {
			msgs = append(msgs, p)
		}
	}
	if len(msgs) == 0 {
		writeJSON(w, map[string]any{"ok": false, "error": "thread_not_found"})
		return
	}
	b.page(w, r, msgs)
}

func (b *Bot) page(w http.ResponseWriter, r *http.Request, msgs []Post) {
	oldest, _ := strconv.ParseFloat(r.Form.Get("oldest"), 64)
	withMeta := r.Form.Get("include_all_metadata") == "1" || r.Form.Get("include_all_metadata") == "true"
	var kept []Post
	for _, p := range msgs {
		if ts, _ := strconv.ParseFloat(p.TS, 64); ts >= oldest {
			kept = append(kept, p)
		}
	}
	offset, _ := strconv.Atoi(r.Form.Get("cursor"))
	limit, _ := strconv.Atoi(r.Form.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	end := min(offset+limit, len(kept))
	offset = min(offset, end)
	out := make([]map[string]any, 0, end-offset)
	for _, p := range kept[offset:end] {
		m := map[string]any{"type": "message", "ts": p.TS, "text": p.Text}
		if p.ThreadTS != "" {
			m["thread_ts"] = p.ThreadTS
		}
		if withMeta && p.Metadata != nil {
			m["metadata"] = p.Metadata
		}
		out = append(out, m)
	}
	resp := map[string]any{"ok": true, "messages": out, "has_more": end < len(kept)}
	if end < len(kept) {
		resp["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(end)}
	}
	writeJSON(w, resp)
}
