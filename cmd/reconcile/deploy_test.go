package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/dbtest"
)

// TestPrometheusRules checks deploy/prometheus-rules.yaml with promtool and
// runs its unit tests. promtool comes with Debian's prometheus package,
// which .ci/run installs: a missing promtool fails the test.
func TestPrometheusRules(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not installed (Debian: apt-get install prometheus; .ci/run installs it): %v", err)
	}
	for _, args := range [][]string{{"check", "rules", "prometheus-rules.yaml"}, {"test", "rules", "prometheus-rules.test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../deploy"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// metricRef finds metric names in PromQL: ours, Go's and the process's.
var metricRef = regexp.MustCompile(`\b(?:reconcile|go|process)_[a-z0-9_]+\b`)

// TestDeployReferencesExist: every metric the Grafana dashboard and the alert
// rules query is one that `reconcile serve` exports from start.
func TestDeployReferencesExist(t *testing.T) {
	t.Parallel()
	s, _ := testServer(t, dbtest.SQLiteURL(t))
	exported := map[string]bool{}
	for name, f := range scrape(t, s.Admin()) {
		exported[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exported[name+suffix] = true
			}
		}
	}
	check := func(where, expr string) {
		refs := metricRef.FindAllString(expr, -1)
		if len(refs) == 0 {
			t.Errorf("%s: no metric in %q", where, expr)
		}
		for _, m := range refs {
			if !exported[m] {
				t.Errorf("%s: %s is not exported by reconcile serve (in %q)", where, m, expr)
			}
		}
	}

	raw, err := os.ReadFile("../../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	var queried []string
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			check("dashboard panel "+p.Title, tg.Expr)
			queried = append(queried, metricRef.FindAllString(tg.Expr, -1)...)
		}
	}
	// The dashboard shows every documented family.
	for _, f := range documentedFamilies {
		if !slices.ContainsFunc(queried, func(m string) bool { return m == f || strings.TrimSuffix(m, "_bucket") == f }) {
			t.Errorf("the dashboard shows no panel of %s", f)
		}
	}

	raw, err = os.ReadFile("../../deploy/prometheus-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("prometheus-rules.yaml: %v", err)
	}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			check("alert "+r.Alert, r.Expr)
			alerts = append(alerts, r.Alert)
		}
	}
	for _, want := range []string{"ReconcileRunStale", "ReconcileOpenAtRiskHigh", "ReconcileDeadLetters", "ReconcileCallbacksRejected"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s", want)
		}
	}
}

// TestDeployEnvNames: every RECONCILE_* variable the deployment files set or
// mention is a setting reconcile reads, and the unit and compose file run
// commands that exist.
func TestDeployEnvNames(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, k := range config.Keys() {
		known[config.EnvName(k)] = true
	}
	env := regexp.MustCompile(`RECONCILE_[A-Z0-9_]+`)
	for _, f := range []string{"../../Dockerfile", "../../deploy/compose.yaml", "../../deploy/reconcile.service",
		"../../deploy/reconcile.env.example", "../../docs/deploy.md"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range env.FindAllString(string(raw), -1) {
			if !known[v] && !strings.HasPrefix(v, "RECONCILE_ALERTS_WEBHOOK_URL_") {
				t.Errorf("%s: %s is not a setting of reconcile", f, v)
			}
		}
	}
	unit, err := os.ReadFile("../../deploy/reconcile.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reconcile migrate --config", "reconcile serve --config", "EnvironmentFile=", "DynamicUser=yes", "ProtectSystem=strict"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("reconcile.service lacks %q", want)
		}
	}
}
