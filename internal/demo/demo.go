package demo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
	"github.com/reconcilehq/reconcile/providers/statement"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/report"
)

// EAT is M-Pesa's zone.
var EAT = mpesa.EAT

// Day is the demonstrated business day (in Nairobi for M-Pesa, UTC for Stripe).
var Day = time.Date(2026, 11, 2, 0, 0, 0, 0, EAT)

// Options configure a demonstration.
type Options struct {
	// Store is a fresh, migrated, empty store.
	Store ledger.Store
	// Out receives the report.
	Out io.Writer
	// TempDir holds the statement file; default os.TempDir.
	TempDir string
	Logger  *slog.Logger
	// DatabaseURL is shown in the suggested next commands.
	DatabaseURL string
	// Command is how the user runs reconcile, for those commands; default
	// "reconcile".
	Command string
}

// Result is what the demonstration found, for tests.
type Result struct {
	Outcomes map[string]*reconciler.Outcome
}

// clock runs from a fixed afternoon of Day at the speed of real time, so
// every run of the demo sees the same day.
type clock struct {
	base  time.Time
	start time.Time
}

func (c clock) now() time.Time { return c.base.Add(time.Since(c.start)).UTC() }

// Run performs the demonstration.
func Run(ctx context.Context, opt Options) (*Result, error) {
	d := &demo{opt: opt, clk: clock{base: Day.Add(15 * time.Hour), start: time.Now()}}
	if d.opt.Logger == nil {
		d.opt.Logger = slog.New(slog.DiscardHandler)
	}
	if d.opt.TempDir == "" {
		d.opt.TempDir = os.TempDir()
	}
	defer d.close()
	steps := []struct {
		title string
		fn    func(context.Context) error
	}{
		{"Starting fake M-Pesa (Daraja) and Stripe servers on loopback, and the callback endpoint", d.setup},
		{"Creating a day of intents (each with its charge job, in one transaction)", d.createIntents},
		{"Simulating a worker that dies right after calling the provider", d.crash},
		{"Charging through the queue", d.charge},
		{"Refunding a Stripe payment through the queue; its worker dies mid-refund", d.refund},
		{"M-Pesa customers answer their phones: callbacks arrive (some twice, some never)", d.callbacks},
		{"Evidence that does not fit the books arrives", d.anomalies},
		{"Invoices paid by paybill: late, in parts, short and over", d.invoices},
		{"Importing the M-Pesa portal statement", d.importStatement},
		{"Reconciling the day", d.reconcile},
		{"The money reaches the bank: last week's Stripe payouts against the bank statement", d.bank},
	}
	for i, s := range steps {
		fmt.Fprintf(opt.Out, "\n[%d/%d] %s\n", i+1, len(steps), s.title)
		if err := s.fn(ctx); err != nil {
			return nil, fmt.Errorf("demo: %s: %w", s.title, err)
		}
	}
	d.nextSteps()
	return &Result{Outcomes: d.outcomes}, nil
}

type demo struct {
	opt      Options
	clk      clock
	mfake    *mpesafake.Server
	sfake    *stripefake.Server
	cbSrv    *httptest.Server
	svc      *charge.Service
	q        *queue.Queue
	proc     *intake.Processor
	chargers map[string]providers.Charger
	stripe   *stripe.Client
	keys     []string
	outcomes map[string]*reconciler.Outcome
	// crashed are the intents a simulated dead worker left behind.
	crashed map[string]string
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.opt.Out, "      "+format+"\n", args...)
}

func (d *demo) close() {
	if d.q != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = d.q.Stop(ctx)
	}
	for _, c := range []interface{ Close() }{d.cbSrv, d.mfake, d.sfake} {
		if c != nil && !isNil(c) {
			c.Close()
		}
	}
}

func isNil(c any) bool {
	switch v := c.(type) {
	case *httptest.Server:
		return v == nil
	case *mpesafake.Server:
		return v == nil
	case *stripefake.Server:
		return v == nil
	}
	return false
}

const pathToken = "demo0123456789abcdefghijklmnopqrstuv"

func (d *demo) setup(ctx context.Context) error {
	store := d.opt.Store
	// The callback endpoint exists before the fake, which needs its URL.
	var handler atomic.Pointer[http.Handler]
	d.cbSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*handler.Load()).ServeHTTP(w, r)
	}))
	hcfg := mpesa.HandlerConfig{PathToken: pathToken, AllowIPs: []string{}, Quarantine: store, Clock: d.clk.now}
	crashedRef := ledger.DeriveReference("mpesa:order-2003")
	decide := func(p mpesafake.Push, rng *rand.Rand) mpesafake.Outcome {
		o := mpesafake.Mixed(p, rng)
		if p.AccountReference == crashedRef {
			// The customer whose prompt a dead worker sent does pay: the
			// money shows up later, and the run settles the unknown intent.
			o = mpesafake.Outcome{Callback: mpesafake.DeliverOnce, AlsoC2B: true}
		}
		return o
	}
	d.mfake = mpesafake.New(mpesafake.Config{Seed: 2026, Clock: d.clk.now, Decide: decide,
		ConfirmationURL: hcfg.CallbackURL(d.cbSrv.URL, "c2b/confirmation")})
	mURL := d.mfake.Start()
	d.sfake = stripefake.New(d.clk.now)
	sURL := d.sfake.Start()

	short, pass, key, secret := d.mfake.Credentials()
	mch, err := mpesa.NewCharger(mpesa.Config{BaseURL: mURL, ShortCode: short, PassKey: pass, ConsumerKey: key,
		ConsumerSecret: secret, CallbackURL: hcfg.CallbackURL(d.cbSrv.URL, "stk"), Clock: d.clk.now})
	if err != nil {
		return err
	}
	d.stripe, err = stripe.New(stripe.Config{APIKey: "sk_test_demo", BaseURL: sURL, PaymentMethod: "pm_card_visa", Clock: d.clk.now})
	if err != nil {
		return err
	}
	d.chargers = map[string]providers.Charger{mpesa.Provider: mch, "stripe": d.stripe}
	d.svc = charge.New(charge.Deps{Store: store, Chargers: d.chargers, Clock: d.clk.now, Logger: d.opt.Logger},
		charge.Config{Lease: 3 * time.Second, PendingPoll: 300 * time.Millisecond, PendingGiveUp: 2 * time.Minute, Owner: "demo"})
	workers := river.NewWorkers()
	charge.AddWorkers(workers, d.svc)
	// One charge worker: jobs run in order, so the fakes hand out the same
	// ids every time the demo runs.
	d.q, err = queue.New(store, queue.Config{Workers: workers, Queues: map[string]int{queue.QueueCharges: 1},
		FetchPollInterval: 50 * time.Millisecond, RetryPolicy: queue.Backoff{Base: 100 * time.Millisecond, Max: time.Second},
		JobTimeout: 2 * time.Second, RescueStuckJobsAfter: 5 * time.Second})
	if err != nil {
		return err
	}
	d.svc.UseQueue(d.q)
	d.proc = &intake.Processor{Store: store, Applier: d.svc, Clock: d.clk.now, Logger: d.opt.Logger}
	h, err := mpesa.NewHandler(hcfg, d.proc, d.opt.Logger)
	if err != nil {
		return err
	}
	var hh http.Handler = h
	handler.Store(&hh)
	d.say("Daraja fake %s, Stripe fake %s, callbacks at %s/daraja/<token>/...", mURL, sURL, d.cbSrv.URL)
	return nil
}

// pollEvery is how often the demo looks again at what it waits for.
const pollEvery = 50 * time.Millisecond

// waitFinal waits until every intent left pending/processing is done.
func (d *demo) waitFinal(ctx context.Context, keys []string, limit time.Duration) error {
	open := 0
	err := poll.Until(ctx, limit, pollEvery, func() (bool, error) {
		open = 0
		for _, k := range keys {
			in, err := d.opt.Store.GetIntent(ctx, k)
			if err != nil {
				return false, err
			}
			if !in.State.Final() && in.State != ledger.StateUnknown {
				open++
			}
		}
		return open == 0, nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("%d intent(s) still open: %w", open, err)
	}
	return err
}

func (d *demo) tally(ctx context.Context) (map[string]map[ledger.State]int, error) {
	out := map[string]map[ledger.State]int{}
	for _, k := range d.keys {
		in, err := d.opt.Store.GetIntent(ctx, k)
		if err != nil {
			return nil, err
		}
		if out[in.Provider] == nil {
			out[in.Provider] = map[ledger.State]int{}
		}
		out[in.Provider][in.State]++
	}
	return out, nil
}

// reconciler is the reconciler the demo runs its windows with.
func (d *demo) reconciler() *reconciler.Reconciler {
	return reconciler.New(d.opt.Store, reconciler.Config{Clock: d.clk.now, Logger: d.opt.Logger, Settler: d.svc,
		Pullers: map[string]providers.Puller{"stripe": d.stripe},
		Grace:   map[string]time.Duration{mpesa.Provider: mpesa.DefaultSettlementGrace, "stripe": stripe.DefaultSettlementGrace},
		Zones:   map[string]*time.Location{mpesa.Provider: EAT, "stripe": time.UTC}})
}

func (d *demo) reconcile(ctx context.Context) error {
	rec := d.reconciler()
	d.outcomes = map[string]*reconciler.Outcome{}
	windows := []struct {
		provider string
		from     time.Time
	}{{mpesa.Provider, Day}, {"stripe", time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}}
	zones := map[string]*time.Location{mpesa.Provider: EAT, "stripe": time.UTC}
	cfg := alerts.Config{Mode: alerts.ModeWebhook, Channel: "finance-ops", Zones: zones,
		Webhooks: map[string]string{"finance-ops": "https://hooks.slack.com/services/demo"}}
	for _, w := range windows {
		out, err := rec.Run(ctx, reconciler.Params{Provider: w.provider, From: w.from, To: w.from.AddDate(0, 0, 1)})
		if err != nil {
			return err
		}
		d.outcomes[w.provider] = out
		fmt.Fprintln(d.opt.Out)
		r := report.FromOutcome(out)
		r.Zone = zones[w.provider]
		if err := report.WriteRun(d.opt.Out, report.Text, r); err != nil {
			return err
		}
		fmt.Fprintf(d.opt.Out, "\n  Slack would say (text fallback; `reconcile alerts preview --run %d` shows the Block Kit):\n", out.Run.ID)
		if err := alerts.PreviewText(d.opt.Out, cfg, out.Run, out.Findings); err != nil {
			return err
		}
	}
	return nil
}

func (d *demo) importStatement(ctx context.Context) error {
	path := filepath.Join(d.opt.TempDir, "mpesa-statement-2026-11-02.csv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := d.mfake.WriteStatement(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	f, err = os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := (&statement.Importer{Store: d.opt.Store, Clock: d.clk.now}).Import(ctx, statement.File{Name: path, Reader: f,
		Parser: mpesa.StatementParser{Clock: d.clk.now}, Source: "mpesa_statement"})
	if err != nil {
		return err
	}
	d.say("%s: %d rows: %d new transaction(s) (payments whose callbacks never came), %d already known from callbacks",
		filepath.Base(path), c.Lines, c.NewTxns, c.Duplicates+c.NewSources-c.NewTxns)
	return nil
}

func (d *demo) nextSteps() {
	cmd := cmp.Or(d.opt.Command, "reconcile")
	fmt.Fprintf(d.opt.Out, `
Try next:
  %[2]s findings list --database-url %[1]s
  %[2]s run --provider mpesa --from 2026-11-02 --to 2026-11-03 --no-pull --format json --database-url %[1]s
  %[2]s findings resolve <id> --note "refunded by hand" --database-url %[1]s
  %[2]s jobs list --state completed --database-url %[1]s
  %[2]s serve --database-url %[1]s     (callbacks and API on :8080, /healthz and /metrics on 127.0.0.1:8081; see config.example.yaml)
`, d.opt.DatabaseURL, cmd)
}
