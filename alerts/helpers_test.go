package alerts

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) == "1" {
		os.Exit(workerMain())
	}
	goleak.VerifyTestMain(m,
		// database/sql's connection opener of the SQLite store lives until
		// the store is closed at cleanup, which goleak may race.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
	)
}

var (
	eat = time.FixedZone("EAT", 3*3600)
	// t0 is the fixed clock of message and planning tests.
	t0 = time.Date(2024, 5, 2, 6, 0, 0, 0, time.UTC)
	// The window of the fixture run: 1 May 2024 in Nairobi.
	winFrom = time.Date(2024, 5, 1, 0, 0, 0, 0, eat).UTC()
	winTo   = winFrom.Add(24 * time.Hour)
)

func kes(t testing.TB, v string) money.Amount {
	t.Helper()
	a, err := money.Parse(v, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fixtureFindings are three findings as the reconciler would raise them,
// with a raw counterparty and free text that must be masked in messages.
func fixtureFindings(t testing.TB) (dup, failed, unknown ledger.Finding) {
	t.Helper()
	dupIDs := []string{"SE41XYZ124", "SE41XYZ123"}
	dup = ledger.Finding{
		ID: ledger.FindingID(ledger.KindDuplicateCharge, "charge:order-4471", dupIDs), Kind: ledger.KindDuplicateCharge,
		Severity: ledger.SeverityHigh, Provider: "mpesa", IntentKey: "charge:order-4471", ProviderTxnIDs: dupIDs,
		Expected: kes(t, "1500.00"), Actual: kes(t, "3000.00"), AtRisk: kes(t, "1500.00"),
		Counterparty: "254712340845 - JANE WANJIKU DOE",
		Detail:       "2 successful charges for one intent; customer 254712340845 paid twice, see https://hooks.slack.com/services/T1/B2/secret",
		OccurredAt:   time.Date(2024, 5, 1, 9, 12, 30, 0, eat).UTC(), Status: ledger.FindingOpen,
		FirstSeenAt: t0, LastSeenAt: t0, FirstRunID: 1, LastRunID: 1,
	}
	failed = ledger.Finding{
		ID: ledger.FindingID(ledger.KindStatusMismatch, "charge:order-4480", []string{"SE41XYZ200"}), Kind: ledger.KindStatusMismatch,
		Severity: ledger.SeverityHigh, Provider: "mpesa", IntentKey: "charge:order-4480", ProviderTxnIDs: []string{"SE41XYZ200"},
		Expected: kes(t, "2000.00"), Actual: kes(t, "2000.00"), AtRisk: kes(t, "2000.00"),
		Counterparty: "2547****0112 PETER",
		Detail:       "intent failed locally but the provider took the money",
		OccurredAt:   time.Date(2024, 5, 1, 14, 3, 0, 0, eat).UTC(), Status: ledger.FindingOpen,
		FirstSeenAt: t0, LastSeenAt: t0, FirstRunID: 1, LastRunID: 1,
	}
	unknown = ledger.Finding{
		ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{"SE41XYZ300"}), Kind: ledger.KindUnknownCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{"SE41XYZ300"},
		Actual: kes(t, "750.00"), AtRisk: kes(t, "750.00"), Counterparty: "jane.doe@example.com",
		Detail:     "successful charge that links to no intent",
		OccurredAt: time.Date(2024, 5, 1, 18, 45, 0, 0, eat).UTC(), Status: ledger.FindingOpen,
		FirstSeenAt: t0, LastSeenAt: t0, FirstRunID: 1, LastRunID: 1,
	}
	return dup, failed, unknown
}

// fixtureDispute is a Stripe charge presented in GBP, settled in USD and
// disputed, its funds withdrawn.
func fixtureDispute(t testing.TB) ledger.Finding {
	t.Helper()
	gbp, err := money.Parse("40.00", "GBP")
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"ch_3PgbZ0B7WZ01zgkW", "dp_1PgdPzB7WZ01zgkW"}
	return ledger.Finding{
		ID: ledger.FindingID(ledger.KindDisputedCharge, "charge:order-4472", ids), Kind: ledger.KindDisputedCharge,
		Severity: ledger.SeverityHigh, Provider: "stripe", IntentKey: "charge:order-4472", ProviderTxnIDs: ids,
		Expected: gbp, Actual: gbp, AtRisk: gbp, Counterparty: "cus_QXgA1b2C3d4E5f",
		Detail: "customer disputed charge ch_3PgbZ0B7WZ01zgkW for GBP 40.00 on 2024-11-23T15:00:01Z: GBP 40.00 withdrawn from the balance " +
			"(settled as USD 50.12 at 1.253)",
		OccurredAt: time.Date(2024, 11, 23, 10, 2, 0, 0, time.UTC), Status: ledger.FindingOpen,
		FirstSeenAt: t0, LastSeenAt: t0, FirstRunID: 1, LastRunID: 1,
	}
}

// fixtureRun is a finished run of the fixture window.
func fixtureRun() ledger.Run {
	return ledger.Run{ID: 1, Key: ledger.RunKey("mpesa", winFrom, winTo), Provider: "mpesa", From: winFrom, To: winTo,
		State: ledger.RunFinished, Attempt: 1, StartedAt: t0, FinishedAt: t0.Add(2 * time.Second),
		Counts: ledger.RunCounts{Intents: 1210, Transactions: 1213, Matched: 1204, Findings: 3, New: 3}}
}

// testConfig is a valid configuration of mode; channels are channel ids
// (bot) or webhook names (webhook).
func testConfig(mode Mode, webhooks map[string]string) Config {
	cfg := Config{
		Mode:               mode,
		Channel:            "C0FINOPS",
		SeverityChannels:   map[ledger.Severity]string{ledger.SeverityHigh: "C0URGENT"},
		ImmediateMinAtRisk: []money.Amount{mustKES("1000")},
		FindingsURL:        "https://ops.example.com/findings",
		Location:           eat,
		Timeout:            2 * time.Second,
		ChannelInterval:    10 * time.Millisecond,
		ChannelBurst:       1,
	}
	switch mode {
	case ModeBot:
		cfg.BotToken = "xoxb-000000000000-TESTTOKENVALUE"
	case ModeWebhook:
		cfg.Webhooks = webhooks
	}
	return cfg.WithDefaults()
}

func mustKES(s string) money.Amount {
	a, err := money.Parse(s, "KES")
	if err != nil {
		panic(err)
	}
	return a
}

// formGolden renders a posted form, keys sorted, JSON values indented.
func formGolden(t *testing.T, raw []byte) []byte {
	t.Helper()
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for _, k := range keys {
		for _, v := range form[k] {
			if strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
				b.WriteString(k + ":\n")
				b.Write(golden.IndentJSON(t, []byte(v)))
			} else {
				b.WriteString(k + ": " + v + "\n")
			}
		}
	}
	return b.Bytes()
}

// fakeClock is a clock that moves only when told to, or when slept on.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.Advance(d)
	return ctx.Err()
}

// testHTTPClient returns a client with a transport of its own, whose idle
// connections are closed when the test ends.
func testHTTPClient(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
