package stripe

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/providertest"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// T0 is the fixed clock of the tests: 2024-11-23 14:00:00 UTC.
var T0 = time.Date(2024, time.November, 23, 14, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

type fakeBundle struct {
	fake *stripefake.Server
	url  string
	hc   *http.Client
}

// setupFake starts a stateful fake and a client pointed at it.
func setupFake(t *testing.T, cfg Config) (*Client, fakeBundle) {
	t.Helper()
	f := stripefake.New(fixedClock(T0))
	u := f.Start()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		f.Close()
	})
	cfg.APIKey = "sk_test_123"
	cfg.BaseURL = u
	cfg.HTTPClient = hc
	if cfg.Clock == nil {
		cfg.Clock = fixedClock(T0)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, fakeBundle{fake: f, url: u, hc: hc}
}

func amount(t testing.TB, s, cur string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, cur)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// renderSightings prints sightings one per line for golden files.
func renderSightings(ss []providers.Sighting) string {
	var b strings.Builder
	for _, s := range ss {
		x := s.Txn
		fmt.Fprintf(&b, "%s %s %s %s %s at=%s", x.Type, x.ID, x.Status, x.Amount.Currency, x.Amount.Text(),
			x.OccurredAt.Format(time.RFC3339))
		settle := ""
		if !x.Settlement.IsZero() {
			settle = x.Settlement.Currency + "_" + x.Settlement.Text()
		}
		for _, kv := range [][2]string{{"ref", x.Reference}, {"pref", x.ProviderRef}, {"cp", x.Counterparty}, {"linked", x.LinkedID},
			{"settled", settle}, {"rate", x.ExchangeRate}, {"category", s.Category}} {
			if kv[1] != "" {
				fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
			}
		}
		fmt.Fprintf(&b, " src=%s:%s\n", s.Source.Channel, s.Source.Ref)
	}
	return b.String()
}

// checkSighting asserts what every sighting must have (providertest) and
// that an undocumented line counts as other.
func checkSighting(t testing.TB, s providers.Sighting) {
	t.Helper()
	providertest.CheckSighting(t, s)
	if s.Txn.Type == ledger.TxnOther && s.Category != "" && s.Category != CategoryOther {
		t.Fatalf("an undocumented line counts as %q", s.Category)
	}
}
