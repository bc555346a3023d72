package config

import (
	"strings"
	"testing"
)

// TestSecretsFromEnvironmentOnly refuses the Slack signing secret and the
// console's OpenID Connect secrets in the config file, and takes them from
// the environment.
func TestSecretsFromEnvironmentOnly(t *testing.T) {
	for _, tc := range []struct{ key, yaml string }{
		{"alerts.signing_secret", "alerts:\n  signing_secret: abc\n"},
		{"console.oidc.client_secret", "console:\n  oidc:\n    client_secret: abc\n"},
		{"console.oidc.session_key", "console:\n  oidc:\n    session_key: abc\n"},
	} {
		_, err := parse(writeConfig(t, tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.key) || strings.Contains(err.Error(), "abc") {
			t.Errorf("%s in the file: %v", tc.key, err)
		}
	}
	t.Setenv("RECONCILE_ALERTS_SIGNING_SECRET", "from-the-environment")
	t.Setenv("RECONCILE_CONSOLE_OIDC_CLIENT_SECRET", "client-secret-env")
	t.Setenv("RECONCILE_CONSOLE_OIDC_SESSION_KEY", strings.Repeat("s", 32))
	cfg, err := parse(writeConfig(t, `
console:
  mode: oidc
  operators: [ops@example.com]
  oidc:
    issuer: https://id.example.com
    client_id: reconcile
    redirect_url: https://reconcile.example.com/console/callback
alerts:
  mode: bot
  channel: C0FINOPS
  interactions:
    enabled: true
    allowed_groups: [S0FINOPS]
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Alerts.SigningSecret != "from-the-environment" || cfg.Console.OIDC.ClientSecret != "client-secret-env" {
		t.Errorf("secrets not read from the environment")
	}
	cc, err := cfg.Console.Console()
	if err != nil || cc.OIDC.Issuer != "https://id.example.com" || len(cc.OIDC.SessionKey) != 32 {
		t.Errorf("console: %+v %v", cc, err)
	}
	// Interactions need the bot token too (serve checks it).
	if _, err := cfg.SlackInteractions(nil); err == nil || !strings.Contains(err.Error(), "RECONCILE_ALERTS_BOT_TOKEN") {
		t.Errorf("interactions without a bot token: %v", err)
	}
	t.Setenv("RECONCILE_ALERTS_BOT_TOKEN", "xoxb-000000000000-CONFIGTEST")
	cfg, err = parse(writeConfig(t, "alerts:\n  mode: bot\n  channel: C0FINOPS\n  interactions:\n    enabled: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.SlackInteractions(nil); err == nil || !strings.Contains(err.Error(), "allowed_users or allowed_groups") {
		t.Errorf("interactions naming nobody: %v", err)
	}
	// Buttons need bot mode.
	if _, err := parse(writeConfig(t, "alerts:\n  mode: webhook\n  channel: finance\n  interactions:\n    enabled: true\n")); err == nil ||
		!strings.Contains(err.Error(), "buttons") {
		t.Errorf("buttons in webhook mode: %v", err)
	}
}
