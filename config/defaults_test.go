package config

import (
	"strings"
	"testing"
	"time"
)

// TestScheduleOfAnUnpullableProvider: a schedule for Stripe without an API
// key would judge every window on stored evidence and report charges not yet
// imported as missing; it is refused unless no_pull says that is meant.
func TestScheduleOfAnUnpullableProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		noPull string
		want   string
	}{
		{"", "config schedules.stripe: stripe cannot be pulled without RECONCILE_PROVIDERS_STRIPE_API_KEY"},
		{"    no_pull: true\n", ""},
	} {
		cfg, err := parse(writeConfig(t, "schedules:\n  stripe:\n    cron: \"0 3 * * *\"\n"+tc.noPull))
		if err != nil {
			t.Fatal(err)
		}
		ps, err := cfg.DescribeProviders(time.Now)
		if err != nil {
			t.Fatal(err)
		}
		specs, err := cfg.Specs(ps)
		switch {
		case tc.want == "" && (err != nil || len(specs) != 1):
			t.Errorf("no_pull: %v, %d schedule(s)", err, len(specs))
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "no_pull: true")):
			t.Errorf("without no_pull: %v, want %q", err, tc.want)
		}
	}
}

// TestFindingsURLDefaultsToTheConsole: with the console served at a known
// address, Slack links to its findings pages without more configuration;
// an explicit alerts.findings_url wins, and a console with no known address
// leaves it empty.
func TestFindingsURLDefaultsToTheConsole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{"console:\n  mode: proxy\n  trusted_proxies: [127.0.0.1/32]\n  viewers: [\"*\"]\n  public_url: https://reconcile.example.com/\n",
			"https://reconcile.example.com/console/findings"},
		{"console:\n  mode: oidc\n  operators: [ops@example.com]\n  oidc:\n    issuer: https://id.example.com\n    client_id: reconcile\n" +
			"    redirect_url: https://ops.example.com/console/callback\n", "https://ops.example.com/console/findings"},
		{"console:\n  mode: proxy\n  trusted_proxies: [127.0.0.1/32]\n  viewers: [\"*\"]\n  public_url: https://reconcile.example.com\n" +
			"alerts:\n  findings_url: https://wiki.example.com/findings\n", "https://wiki.example.com/findings"},
		{"console:\n  mode: local\n", ""},
		{"alerts:\n  findings_url: \"\"\n", ""},
	} {
		cfg, err := parse(writeConfig(t, tc.yaml))
		if err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
			continue
		}
		if got := cfg.findingsURL(); got != tc.want {
			t.Errorf("%s: findings_url %q, want %q", tc.yaml, got, tc.want)
		}
	}
	if _, err := parse(writeConfig(t, "console:\n  mode: local\n  public_url: \"ftp://x\"\n")); err == nil ||
		!strings.Contains(err.Error(), "console.public_url") {
		t.Errorf("a bad console.public_url: %v", err)
	}
}
