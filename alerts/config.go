package alerts

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Mode says how messages reach Slack.
type Mode string

// Modes.
const (
	// ModeWebhook posts to incoming-webhook URLs, one per channel. Webhooks
	// cannot thread, update or look messages up.
	ModeWebhook Mode = "webhook"
	// ModeBot posts with a bot token through chat.postMessage: follow-ups
	// are threaded and a redelivery finds an earlier post of the same alert.
	ModeBot Mode = "bot"
)

// DefaultFindingsCommand is the command shown in every message; {provider}
// is replaced by the provider id.
const DefaultFindingsCommand = "reconcile findings list --provider {provider} --status open"

// Config is everything the planner and the deliverer need. Secrets (BotToken,
// Webhooks) come from the environment through the caller's configuration and
// are never logged: Config's LogValue and String leave them out.
type Config struct {
	// Mode is ModeWebhook or ModeBot. Required.
	Mode Mode
	// BotToken is the bot token (xoxb-...) for ModeBot. Secret.
	BotToken string
	// Webhooks maps a channel name, as used in Channel and SeverityChannels,
	// to its incoming-webhook URL, for ModeWebhook. Secret.
	Webhooks map[string]string
	// APIURL is the Slack Web API base URL, ending in a slash. Default
	// "https://slack.com/api/"; tests point it at a fake.
	APIURL string

	// Channel receives run summaries and finding alerts of any severity
	// without an entry in SeverityChannels. In ModeBot it is a channel id
	// (C0123456789): the duplicate check reads the channel's history, which
	// needs the id. In ModeWebhook it names a Webhooks entry. Required.
	Channel string
	// SeverityChannels routes finding alerts by severity. Optional.
	SeverityChannels map[ledger.Severity]string

	// ImmediateSeverity is the lowest severity that gets a message of its
	// own (opened, escalated, reopened, resolved) instead of only a line in
	// the run summary. Default high.
	ImmediateSeverity ledger.Severity
	// ImmediateMinAtRisk is, per currency, the least amount at risk that
	// gets a message of its own (inclusive). A finding whose currency has no
	// entry, or that has no amount at risk, is judged by severity alone.
	ImmediateMinAtRisk []money.Amount

	// SummaryWhenClean posts a run summary for a window without findings
	// the first time it is reconciled. Default false: a clean window is
	// announced only when its last findings went away.
	SummaryWhenClean bool
	// SummaryTop is how many findings a run summary lists, 1 to 10.
	// Default 5.
	SummaryTop int
	// FindingsCommand is the command every message shows to list the
	// findings; {provider} is replaced. Default DefaultFindingsCommand.
	FindingsCommand string
	// FindingsURL is an optional http(s) page listing findings; messages
	// link to it with provider and status added to the query. It must hold
	// no credentials, query or fragment.
	FindingsURL string
	// Buttons puts Acknowledge and Resolve buttons, and a link to the
	// finding's console page (next to FindingsURL), on finding messages.
	// ModeBot only; the interactions endpoint (Interactions) must be served
	// to Slack.
	Buttons bool
	// Location is the zone times are shown in. When nil, each message uses
	// its provider's zone from Zones (M-Pesa times in Nairobi time), and
	// UTC for a provider not listed.
	Location *time.Location
	// Zones are the providers' zones, by provider name.
	Zones map[string]*time.Location

	// Timeout bounds one HTTP request to Slack. Default 10s.
	Timeout time.Duration
	// ChannelInterval is the time between messages to one channel (the
	// token bucket's refill period). Default 1s, Slack's posting limit.
	ChannelInterval time.Duration
	// ChannelBurst is how many messages may go to one channel back to back
	// before ChannelInterval applies. Default 2.
	ChannelBurst int
	// MaxLocalWait is the longest a delivery waits in-process for its
	// channel's rate token; a longer wait is returned as a RetryAfterError.
	// Default 5s.
	MaxLocalWait time.Duration
	// DefaultRetryAfter is the wait after a 429 without a usable Retry-After
	// header. Default 30s.
	DefaultRetryAfter time.Duration
	// OrderWait is how long a delivery snoozes when an earlier alert of its
	// channel (or of its finding) is still undelivered. Default 2s.
	OrderWait time.Duration
	// OrderTimeout is the age after which an undelivered earlier alert no
	// longer holds later ones back. Default 15m.
	OrderTimeout time.Duration
	// MaxAttempts is the number of tries before an alert is given up and
	// marked discarded; the queue job's MaxAttempts must be the same.
	// Default 10.
	MaxAttempts int
	// HistoryLimit is how many recent messages of a channel (or thread) a
	// bot-mode redelivery reads looking for an earlier post of the same
	// alert. Default 200.
	HistoryLimit int
}

// Defaults used by WithDefaults.
const (
	DefaultAPIURL            = "https://slack.com/api/"
	DefaultSummaryTop        = 5
	DefaultTimeout           = 10 * time.Second
	DefaultChannelInterval   = time.Second
	DefaultChannelBurst      = 2
	DefaultMaxLocalWait      = 5 * time.Second
	DefaultDefaultRetryAfter = 30 * time.Second
	DefaultOrderWait         = 2 * time.Second
	DefaultOrderTimeout      = 15 * time.Minute
	DefaultMaxAttempts       = 10
	DefaultHistoryLimit      = 200
	maxSummaryTop            = 10
)

// zone is where the times of a message about provider are shown.
func (c Config) zone(provider string) *time.Location {
	if c.Location != nil {
		return c.Location
	}
	if z := c.Zones[provider]; z != nil {
		return z
	}
	return time.UTC
}

// WithDefaults returns c with every unset field at its default.
func (c Config) WithDefaults() Config {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	if c.ImmediateSeverity == "" {
		c.ImmediateSeverity = ledger.SeverityHigh
	}
	if c.SummaryTop == 0 {
		c.SummaryTop = DefaultSummaryTop
	}
	if c.FindingsCommand == "" {
		c.FindingsCommand = DefaultFindingsCommand
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ChannelInterval == 0 {
		c.ChannelInterval = DefaultChannelInterval
	}
	if c.ChannelBurst == 0 {
		c.ChannelBurst = DefaultChannelBurst
	}
	if c.MaxLocalWait == 0 {
		c.MaxLocalWait = DefaultMaxLocalWait
	}
	if c.DefaultRetryAfter == 0 {
		c.DefaultRetryAfter = DefaultDefaultRetryAfter
	}
	if c.OrderWait == 0 {
		c.OrderWait = DefaultOrderWait
	}
	if c.OrderTimeout == 0 {
		c.OrderTimeout = DefaultOrderTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.HistoryLimit == 0 {
		c.HistoryLimit = DefaultHistoryLimit
	}
	return c
}

var botChannelID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,}$`)

// Validate reports every problem with c (after WithDefaults), each naming
// the field at fault. It never includes a secret in its message.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ledger.FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	c.validateDestination(bad)
	c.validateRouting(bad)
	c.validateLimits(bad)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("alerts config: %w", err)
	}
	return nil
}

// problemFunc records one problem with a config field; Validate collects them.
type problemFunc func(field, format string, args ...any)

// validateDestination checks where messages go: the mode and its
// credentials, the channels and whether buttons can be carried.
func (c Config) validateDestination(bad problemFunc) {
	channels := c.channels()
	switch c.Mode {
	case ModeBot:
		if c.BotToken == "" {
			bad("bot_token", "is empty: set it in the environment")
		} else if !strings.HasPrefix(c.BotToken, "xox") {
			bad("bot_token", "does not look like a Slack token (xoxb-...)")
		}
		for _, ch := range channels {
			if !botChannelID.MatchString(ch) {
				bad("channel", "%q is not a channel id such as C0123456789 (bot mode reads the channel's history by id)", ch)
			}
		}
	case ModeWebhook:
		if len(c.Webhooks) == 0 {
			bad("webhooks", "is empty: set a webhook URL per channel in the environment")
		}
		for _, name := range sortedKeys(c.Webhooks) {
			if err := checkWebhookURL(c.Webhooks[name]); err != nil {
				bad("webhooks."+name, "%v", err)
			}
		}
		for _, ch := range channels {
			if _, ok := c.Webhooks[ch]; !ok {
				bad("channel", "%q has no webhook URL", ch)
			}
		}
	default:
		bad("mode", "%q is neither %q nor %q", c.Mode, ModeWebhook, ModeBot)
	}
	if c.Channel == "" {
		bad("channel", "is empty")
	}
	if c.Buttons && c.Mode != ModeBot {
		bad("buttons", "need bot mode: incoming webhooks cannot carry interactive buttons")
	}
}

// validateRouting checks what decides a message's channel and content: the
// severities, the at-risk thresholds, the summary size and the URLs.
func (c Config) validateRouting(bad problemFunc) {
	for _, sev := range sortedKeys(c.SeverityChannels) {
		if sev.Rank() == 0 {
			bad("severity_channels", "%q is not a severity (low, medium, high)", sev)
		}
	}
	if c.ImmediateSeverity.Rank() == 0 {
		bad("immediate_severity", "%q is not a severity (low, medium, high)", c.ImmediateSeverity)
	}
	seen := map[string]bool{}
	for _, a := range c.ImmediateMinAtRisk {
		switch {
		case a.IsZero():
			bad("immediate_min_at_risk", "has an amount without a currency")
		case seen[a.Currency]:
			bad("immediate_min_at_risk", "lists %s twice", a.Currency)
		case a.Value.IsNegative():
			bad("immediate_min_at_risk", "%s is negative", a)
		}
		seen[a.Currency] = true
	}
	if c.SummaryTop < 1 || c.SummaryTop > maxSummaryTop {
		bad("summary_top", "%d is outside 1..%d", c.SummaryTop, maxSummaryTop)
	}
	if c.FindingsURL != "" {
		if err := checkFindingsURL(c.FindingsURL); err != nil {
			bad("findings_url", "%v", err)
		}
	}
	if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		bad("api_url", "is not an http(s) URL without credentials")
	}
}

// validateLimits checks the timing and counting limits: every duration
// positive, burst and attempts at least one, history within 1..1000.
func (c Config) validateLimits(bad problemFunc) {
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"timeout", c.Timeout}, {"channel_interval", c.ChannelInterval}, {"max_local_wait", c.MaxLocalWait},
		{"default_retry_after", c.DefaultRetryAfter}, {"order_wait", c.OrderWait}, {"order_timeout", c.OrderTimeout}} {
		if d.v <= 0 {
			bad(d.field, "must be positive, got %s", d.v)
		}
	}
	if c.ChannelBurst < 1 {
		bad("channel_burst", "must be at least 1, got %d", c.ChannelBurst)
	}
	if c.MaxAttempts < 1 {
		bad("max_attempts", "must be at least 1, got %d", c.MaxAttempts)
	}
	if c.HistoryLimit < 1 || c.HistoryLimit > 1000 {
		bad("history_limit", "%d is outside 1..1000", c.HistoryLimit)
	}
}

// channels lists every channel a message may be routed to, sorted.
func (c Config) channels() []string {
	set := map[string]bool{}
	if c.Channel != "" {
		set[c.Channel] = true
	}
	for _, ch := range c.SeverityChannels {
		if ch != "" {
			set[ch] = true
		}
	}
	return sortedKeys(set)
}

// channelFor routes a finding of severity sev.
func (c Config) channelFor(sev ledger.Severity) string {
	if ch := c.SeverityChannels[sev]; ch != "" {
		return ch
	}
	return c.Channel
}

// immediate reports whether f gets messages of its own.
func (c Config) immediate(f ledger.Finding) bool {
	if f.Severity.Rank() < c.ImmediateSeverity.Rank() {
		return false
	}
	if f.AtRisk.IsZero() {
		return true
	}
	for _, min := range c.ImmediateMinAtRisk {
		if min.Currency == f.AtRisk.Currency {
			return f.AtRisk.Value.GreaterThanOrEqual(min.Value)
		}
	}
	return true
}

func checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("is not a URL") // the parse error would quote the secret
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return errors.New("is not an http(s) URL")
	}
	return nil
}

func checkFindingsURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("is not a URL")
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return errors.New("is not an http(s) URL")
	case u.User != nil:
		return errors.New("must not hold credentials")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("must not have a query or fragment (they could carry secrets into Slack)")
	}
	return nil
}

// LogValue shows the configuration without its secrets.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("mode", string(c.Mode)),
		slog.Bool("bot_token_set", c.BotToken != ""),
		slog.Any("webhook_channels", sortedKeys(c.Webhooks)),
		slog.String("channel", c.Channel),
		slog.String("immediate_severity", string(c.ImmediateSeverity)),
	)
}

// String describes the configuration without its secrets.
func (c Config) String() string {
	return fmt.Sprintf("alerts.Config{mode=%s bot_token_set=%t webhook_channels=%v channel=%s}",
		c.Mode, c.BotToken != "", sortedKeys(c.Webhooks), c.Channel)
}

// GoString keeps %#v from printing the secrets.
func (c Config) GoString() string { return c.String() }

// ParseAmount reads a threshold written as "KES 1000" or "USD 25.50", for
// ImmediateMinAtRisk.
func ParseAmount(s string) (money.Amount, error) {
	cur, val, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return money.Amount{}, fmt.Errorf("amount %q: want CURRENCY VALUE, e.g. \"KES 1000\"", s)
	}
	a, err := money.Parse(strings.TrimSpace(val), cur)
	if err != nil {
		return money.Amount{}, fmt.Errorf("amount %q: %w", s, err)
	}
	return a, nil
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
