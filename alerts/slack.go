package alerts

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/slack-go/slack"
)

// posted is where a message went.
type posted struct {
	Channel   string
	MessageTS string
	ThreadTS  string
}

// poster sends messages to Slack in one mode.
type poster interface {
	post(ctx context.Context, m message) (posted, *slackError)
	// find looks for an earlier post of alert alertID among the recent
	// messages of m's channel (or thread) posted since since.
	find(ctx context.Context, m message, since time.Time) (posted, bool, *slackError)
	// update replaces the message at ts in m's channel with m.
	update(ctx context.Context, m message, ts string) *slackError
}

// webhookPoster posts to incoming webhooks. It cannot look messages up.
type webhookPoster struct {
	urls        map[string]string
	client      *http.Client
	defaultWait time.Duration
	secrets     []string
}

func (w *webhookPoster) post(ctx context.Context, m message) (posted, *slackError) {
	u, ok := w.urls[m.Channel]
	if !ok {
		return posted{}, &slackError{class: failRejected, msg: fmt.Sprintf("no webhook URL for channel %q", m.Channel)}
	}
	ctx, body := withBodyCapture(ctx)
	err := slack.PostWebhookCustomHTTPContext(ctx, u, w.client, m.webhookMessage())
	if err != nil {
		return posted{}, classify(err, body.text(), w.defaultWait, w.secrets)
	}
	return posted{Channel: m.Channel}, nil
}

func (w *webhookPoster) find(context.Context, message, time.Time) (posted, bool, *slackError) {
	return posted{}, false, nil
}

func (w *webhookPoster) update(context.Context, message, string) *slackError {
	return &slackError{class: failRejected, msg: "incoming webhooks cannot update messages"}
}

// botPoster posts with a bot token through the Web API.
type botPoster struct {
	api          *slack.Client
	historyLimit int
	defaultWait  time.Duration
	secrets      []string
}

func newBotPoster(cfg Config, client *http.Client, log *slog.Logger) *botPoster {
	api := slack.New(cfg.BotToken,
		slack.OptionAPIURL(cfg.APIURL),
		slack.OptionHTTPClient(client),
		slack.OptionOnWarning(func(method string, _ any, w *slack.Warning) {
			log.Warn("slack api warning", slog.String("method", method), slog.Any("codes", w.Codes))
		}))
	return &botPoster{api: api, historyLimit: cfg.HistoryLimit, defaultWait: cfg.DefaultRetryAfter,
		secrets: []string{cfg.BotToken}}
}

func (b *botPoster) post(ctx context.Context, m message) (posted, *slackError) {
	ch, ts, err := b.api.PostMessageContext(ctx, m.Channel, m.botOptions()...)
	if err != nil {
		return posted{}, classify(err, "", b.defaultWait, b.secrets)
	}
	if ch == "" {
		ch = m.Channel
	}
	return posted{Channel: ch, MessageTS: ts, ThreadTS: m.ThreadTS}, nil
}

func (b *botPoster) update(ctx context.Context, m message, ts string) *slackError {
	if _, _, _, err := b.api.UpdateMessageContext(ctx, m.Channel, ts, m.updateOptions()...); err != nil {
		return classify(err, "", b.defaultWait, b.secrets)
	}
	return nil
}

// historySkew allows for clocks that differ between this host and Slack
// when the lookup starts from the alert's creation time.
const historySkew = 10 * time.Minute

// find reads the channel's history (or the thread's replies) newest first,
// with message metadata, back to since or HistoryLimit messages.
func (b *botPoster) find(ctx context.Context, m message, since time.Time) (posted, bool, *slackError) {
	want := strconv.FormatInt(m.AlertID, 10)
	oldest := slackTS(since.Add(-historySkew))
	page := min(b.historyLimit, 200)
	cursor := ""
	for read := 0; read < b.historyLimit; {
		var (
			msgs    []slack.Message
			more    bool
			next    string
			callErr error
		)
		if m.ThreadTS != "" {
			msgs, more, next, callErr = b.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: m.Channel, Timestamp: m.ThreadTS, Cursor: cursor, Oldest: oldest, Limit: page,
				IncludeAllMetadata: true, Inclusive: true,
			})
		} else {
			var resp *slack.GetConversationHistoryResponse
			resp, callErr = b.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: m.Channel, Cursor: cursor, Oldest: oldest, Limit: page, IncludeAllMetadata: true, Inclusive: true,
			})
			if resp != nil {
				msgs, more, next = resp.Messages, resp.HasMore, resp.ResponseMetaData.NextCursor
			}
		}
		if callErr != nil {
			e := classify(callErr, "", b.defaultWait, b.secrets)
			e.msg = "looking for an earlier post: " + e.msg
			return posted{}, false, e
		}
		for _, msg := range msgs {
			if msg.Metadata.EventType != metadataEventType {
				continue
			}
			if id, _ := msg.Metadata.EventPayload["alert_id"].(string); id == want {
				return posted{Channel: m.Channel, MessageTS: msg.Timestamp, ThreadTS: m.ThreadTS}, true, nil
			}
		}
		read += len(msgs)
		if !more || next == "" || len(msgs) == 0 {
			break
		}
		cursor = next
	}
	return posted{}, false, nil
}

// slackTS renders t as a Slack message timestamp ("1714550400.000000").
func slackTS(t time.Time) string {
	if t.IsZero() || t.Unix() < 0 {
		return "0"
	}
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// Incoming webhooks answer errors with a short plain-text reason
// (invalid_payload, channel_not_found...), which slack-go discards. The
// transport below keeps the start of an error body for the error message.

type bodyCaptureKey struct{}

type capturedBody struct{ s string }

func (c *capturedBody) text() string {
	if c == nil {
		return ""
	}
	return c.s
}

func withBodyCapture(ctx context.Context) (context.Context, *capturedBody) {
	c := &capturedBody{}
	return context.WithValue(ctx, bodyCaptureKey{}, c), c
}

type captureTransport struct{ base http.RoundTripper }

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 300 {
		return resp, err
	}
	c, ok := req.Context().Value(bodyCaptureKey{}).(*capturedBody)
	if !ok {
		return resp, nil
	}
	head, rerr := io.ReadAll(io.LimitReader(resp.Body, 256))
	c.s = printable(string(head), 120)
	if rerr != nil {
		return resp, nil
	}
	resp.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(head), resp.Body), Closer: resp.Body}
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// printable keeps the first line of s, printable characters only, at most
// n runes.
func printable(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	return truncate(s, n)
}
