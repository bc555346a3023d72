package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/ledger"
)

// AlertsConfig sends findings to finance ops in Slack.
type AlertsConfig struct {
	// Mode is off, webhook (incoming webhooks) or bot (a bot token with
	// chat.postMessage: threads, message updates and no duplicates after a
	// crash). Default off.
	Mode string `mapstructure:"mode"`
	// Channel receives run summaries and alerts without a severity channel.
	// Bot mode: a channel id (C0123456789). Webhook mode: a name whose URL
	// is in RECONCILE_ALERTS_WEBHOOK_URL.
	Channel string `mapstructure:"channel"`
	// SeverityChannels routes finding alerts by severity (low, medium, high).
	// In webhook mode each channel's URL is in
	// RECONCILE_ALERTS_WEBHOOK_URL_<NAME> (upper case, - as _).
	SeverityChannels map[string]string `mapstructure:"severity_channels"`
	// ImmediateSeverity is the lowest severity alerted on its own, not only
	// in the run summary; default high.
	ImmediateSeverity string `mapstructure:"immediate_severity"`
	// ImmediateMinAtRisk is, per currency, the least amount at risk alerted
	// on its own, e.g. ["KES 1000", "USD 10"].
	ImmediateMinAtRisk []string `mapstructure:"immediate_min_at_risk"`
	// SummaryWhenClean posts a summary for windows without findings too.
	SummaryWhenClean bool `mapstructure:"summary_when_clean"`
	// SummaryTop is how many findings a summary lists (1-10); default 5.
	SummaryTop int `mapstructure:"summary_top"`
	// FindingsURL is an optional page listing findings (no credentials).
	FindingsURL string `mapstructure:"findings_url"`
	// Zone is the time zone times are shown in; default each provider's
	// own zone (providers.<name>.zone: Nairobi time for M-Pesa).
	Zone string `mapstructure:"zone"`
	// ChannelInterval is the time between messages to one channel; default 1s.
	ChannelInterval time.Duration `mapstructure:"channel_interval"`
	// MaxAttempts is the tries of a delivery before it is discarded; default 10.
	MaxAttempts int `mapstructure:"max_attempts"`
	// APIURL is the Slack Web API base URL; default https://slack.com/api/.
	APIURL string `mapstructure:"api_url"`
	// BotToken (secret, RECONCILE_ALERTS_BOT_TOKEN) for bot mode.
	BotToken string `mapstructure:"bot_token" secret:"env"`
	// WebhookURL (secret, RECONCILE_ALERTS_WEBHOOK_URL) posts to Channel in
	// webhook mode.
	WebhookURL string `mapstructure:"webhook_url" secret:"env"`
	// SigningSecret (secret, RECONCILE_ALERTS_SIGNING_SECRET) verifies the
	// Slack interactions of bot mode's buttons.
	SigningSecret string `mapstructure:"signing_secret" secret:"env"`
	// Interactions puts Acknowledge and Resolve buttons on finding messages
	// (bot mode) and serves POST /slack/interactions.
	Interactions InteractionsConfig `mapstructure:"interactions"`

	// ChannelWebhooks are the webhook URLs of severity channels (webhook
	// mode), by channel: secrets, read by Load from
	// RECONCILE_ALERTS_WEBHOOK_URL_<CHANNEL>.
	ChannelWebhooks map[string]string `mapstructure:"-"`
}

// AlertsDelivery builds the alerts configuration for delivering messages
// (serve's workers): the Slack secrets are required. zones are the
// providers' zones, in which times are shown unless alerts.zone says
// otherwise. enabled is false in mode off.
func (c Config) AlertsDelivery(zones map[string]*time.Location) (cfg alerts.Config, enabled bool, err error) {
	return c.alerts(zones, true)
}

// AlertsPlanning builds the alerts configuration for commands that plan or
// show messages without sending them (run, findings resolve, previews): the
// Slack secrets are not needed there, so a missing one does not stop them.
func (c Config) AlertsPlanning(zones map[string]*time.Location) (cfg alerts.Config, enabled bool, err error) {
	return c.alerts(zones, false)
}

// placeholderWebhook stands in for a webhook URL a command does not use.
const placeholderWebhook = "https://hooks.slack.com/services/not-needed-here"

// findingsURL is where Slack links to findings: alerts.findings_url, or the
// console's findings page when the console is served at a known address.
func (c Config) findingsURL() string {
	if c.Alerts.FindingsURL != "" {
		return c.Alerts.FindingsURL
	}
	u, _ := c.Console.FindingsURL() // Validate checked it
	return u
}

func (c Config) alerts(zones map[string]*time.Location, secrets bool) (alerts.Config, bool, error) {
	a := c.Alerts
	if a.Mode == "" || a.Mode == "off" {
		return alerts.Config{}, false, nil
	}
	out := alerts.Config{Mode: alerts.Mode(a.Mode), BotToken: a.BotToken, APIURL: a.APIURL, Channel: a.Channel,
		SummaryWhenClean: a.SummaryWhenClean, SummaryTop: a.SummaryTop, FindingsURL: c.findingsURL(),
		ChannelInterval: a.ChannelInterval, MaxAttempts: a.MaxAttempts,
		ImmediateSeverity: ledger.Severity(a.ImmediateSeverity), Zones: zones, Buttons: a.Interactions.Enabled}
	if len(a.SeverityChannels) > 0 {
		out.SeverityChannels = map[ledger.Severity]string{}
		for sev, ch := range a.SeverityChannels {
			out.SeverityChannels[ledger.Severity(sev)] = ch
		}
	}
	for i, s := range a.ImmediateMinAtRisk {
		amt, err := alerts.ParseAmount(s)
		if err != nil {
			return out, true, fmt.Errorf("config alerts.immediate_min_at_risk[%d]: %w", i, err)
		}
		out.ImmediateMinAtRisk = append(out.ImmediateMinAtRisk, amt)
	}
	if a.Zone != "" {
		loc, err := time.LoadLocation(a.Zone)
		if err != nil {
			return out, true, fmt.Errorf("config alerts.zone: %w", err)
		}
		out.Location = loc
	}
	if out.Mode == alerts.ModeWebhook {
		out.Webhooks = map[string]string{}
		if a.Channel != "" && a.WebhookURL != "" {
			out.Webhooks[a.Channel] = a.WebhookURL
		}
		for _, ch := range a.SeverityChannels {
			if u := a.ChannelWebhooks[ch]; u != "" {
				out.Webhooks[ch] = u
			} else if ch == a.Channel && a.WebhookURL != "" {
				out.Webhooks[ch] = a.WebhookURL
			}
		}
		if !secrets {
			fill := func(ch string) {
				if _, ok := out.Webhooks[ch]; !ok && ch != "" {
					out.Webhooks[ch] = placeholderWebhook
				}
			}
			fill(a.Channel)
			for _, ch := range a.SeverityChannels {
				fill(ch)
			}
		}
	}
	if out.Mode == alerts.ModeBot && !secrets && out.BotToken == "" {
		out.BotToken = "xoxb-not-needed-here"
	}
	if err := out.WithDefaults().Validate(); err != nil {
		return out, true, fmt.Errorf("config alerts: %w (secrets: RECONCILE_ALERTS_BOT_TOKEN, RECONCILE_ALERTS_WEBHOOK_URL[_<CHANNEL>])", err)
	}
	return out.WithDefaults(), true, nil
}

// webhookEnv is the variable of a severity channel's webhook URL.
func webhookEnv(channel string) string {
	return "RECONCILE_ALERTS_WEBHOOK_URL_" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, channel)
}
