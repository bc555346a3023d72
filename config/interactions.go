package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/reconcilehq/reconcile/alerts"
)

// InteractionsConfig turns on the buttons of finding messages in Slack
// (bot mode) and says who may press them.
type InteractionsConfig struct {
	// Enabled puts Acknowledge and Resolve buttons, and a link to the
	// console's finding page, on finding messages, and serves
	// POST /slack/interactions, which needs RECONCILE_ALERTS_SIGNING_SECRET.
	Enabled bool `mapstructure:"enabled"`
	// AllowedUsers are the Slack user ids (U0123ABCD) who may act.
	AllowedUsers []string `mapstructure:"allowed_users"`
	// AllowedGroups are the Slack user-group ids (S0123ABCD) whose members
	// may act.
	AllowedGroups []string `mapstructure:"allowed_groups"`
}

// SlackInteractions builds the configuration of the interactions endpoint,
// without the books: bot mode, the signing secret and who may act. zones
// are the providers' (see AlertsDelivery).
func (c Config) SlackInteractions(zones map[string]*time.Location) (alerts.InteractionsConfig, error) {
	cfg, enabled, err := c.AlertsDelivery(zones)
	if err != nil {
		return alerts.InteractionsConfig{}, err
	}
	var errs []error
	if !enabled || cfg.Mode != alerts.ModeBot {
		errs = append(errs, errors.New("config alerts.interactions: the buttons need alerts.mode bot"))
	}
	a := c.Alerts
	if a.SigningSecret == "" {
		errs = append(errs, fmt.Errorf("config alerts.signing_secret: set %s to the Slack app's signing secret", EnvName("alerts.signing_secret")))
	}
	if len(a.Interactions.AllowedUsers) == 0 && len(a.Interactions.AllowedGroups) == 0 {
		errs = append(errs, errors.New("config alerts.interactions: name who may act in allowed_users or allowed_groups"))
	}
	if err := errors.Join(errs...); err != nil {
		return alerts.InteractionsConfig{}, err
	}
	return alerts.InteractionsConfig{SigningSecret: a.SigningSecret, AllowedUsers: a.Interactions.AllowedUsers,
		AllowedGroups: a.Interactions.AllowedGroups, Alerts: cfg}, nil
}
