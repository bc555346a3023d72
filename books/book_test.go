package books_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/demo"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

// The demo books every test reads from: a day of the demo (intents charged
// through River, M-Pesa callbacks, a statement, a Stripe pull, runs,
// findings) on each engine, and what the demo does not make, built once
// by the first test that asks. No test writes to them: a test that
// changes books copies one first.
var (
	sources      = map[ledger.Engine]string{}
	sourcesOnce  sync.Once
	sourcesErr   error
	sourcesClean = func() {}
)

// source returns the URL of the demo book on engine e.
func source(t testing.TB, e ledger.Engine) string {
	t.Helper()
	sourcesOnce.Do(func() { sourcesClean, sourcesErr = buildSources() })
	if sourcesErr != nil {
		t.Fatalf("build the demo books: %v", sourcesErr)
	}
	return sources[e]
}

// The people planted across the books, whom the erase tests look for.
const (
	// phone is the demo's first M-Pesa customer: in its intent, STK
	// callbacks, attempts' CheckoutRequestIDs, events and River's jobs.
	phone = "254712340000"
	// email is the demo's first Stripe customer.
	email = "buyer0@example.com"
)

// scenarioDay is an M-Pesa day of the scenario generator, a week before
// the demo's: C2B confirmations that name payers by hashed MSISDN, STK
// callbacks, statement rows, traps and anomalies.
var scenarioDay = scenario.Mpesa(7, demo.Day.AddDate(0, 0, -7), 40)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		sourcesClean()
		os.Exit(code)
	}))
}

func buildSources() (cleanup func(), err error) {
	ctx := context.Background()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return func() {}, errors.New("TEST_DATABASE_URL is not set: run the tests with `make test`, which starts a throwaway PostgreSQL")
	}
	dir, err := os.MkdirTemp("", "books-test-")
	if err != nil {
		return func() {}, err
	}
	schema := "t_books_" + randomHex(6)
	cleanup = func() {
		_ = os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, base); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			_ = c.Close(ctx)
		}
	}
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return cleanup, err
	}
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema)
	_ = conn.Close(ctx)
	if err != nil {
		return cleanup, err
	}
	sources[ledger.EnginePostgres] = withSchema(base, schema)
	sources[ledger.EngineSQLite] = "sqlite:" + filepath.Join(dir, "source.db")
	var g errgroup.Group
	for _, u := range sources {
		g.Go(func() error {
			s, err := database.Open(ctx, u, database.Options{})
			if err != nil {
				return err
			}
			defer s.Close()
			if _, err := database.Migrate(ctx, s); err != nil {
				return err
			}
			return fill(ctx, s, filepath.Join(dir, string(s.Engine())))
		})
	}
	return cleanup, g.Wait()
}

func withSchema(base, schema string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// noteArgs is a job that carries a person's contact details, as a
// notification job would; no worker takes it.
type noteArgs struct {
	Phone string `json:"phone"`
	Email string `json:"email"`
	Text  string `json:"text"`
}

func (noteArgs) Kind() string { return "books_test_note" }

type noteWorker struct{ river.WorkerDefaults[noteArgs] }

func (noteWorker) Work(context.Context, *river.Job[noteArgs]) error { return nil }

// failArgs is a job whose worker fails, leaving its error and who tried
// it in River's columns.
type failArgs struct {
	Customer string `json:"customer"`
}

func (failArgs) Kind() string { return "books_test_fail" }

type failWorker struct{ river.WorkerDefaults[failArgs] }

func (failWorker) Work(context.Context, *river.Job[failArgs]) error {
	return errors.New("the provider refused " + phone)
}

// fill writes a demo-sized book: the demo, the scenario day, and what
// neither makes (decisions on findings with their history, an alert, a
// manual link, released quarantine, River jobs of every kind of column).
func fill(ctx context.Context, s ledger.Store, tmp string) error {
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if _, err := demo.Run(ctx, demo.Options{Store: s, Out: io.Discard, TempDir: tmp}); err != nil {
		return err
	}
	if err := scenarioDay.Load(ctx, s); err != nil {
		return err
	}
	rec := reconciler.New(s, reconciler.Config{Clock: func() time.Time { return scenarioDay.Now }, Owner: "books-test",
		Grace: map[string]time.Duration{"mpesa": scenarioDay.Grace}})
	if _, err := rec.Run(ctx, reconciler.Params{Provider: "mpesa", From: scenarioDay.From, To: scenarioDay.To, NoPull: true}); err != nil {
		return err
	}
	now := demo.Day.AddDate(0, 0, 2).UTC()
	// An intent whose key holds a person's e-mail address, which the
	// provider never charged: a run opens a missing_at_provider finding
	// whose id derives from the key.
	amount, _ := money.Parse("1500", "KES")
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{CreatedAt: demo.Day.Add(9 * time.Hour).UTC(), UpdatedAt: demo.Day.Add(9 * time.Hour).UTC(),
		State: ledger.StateSucceeded, IntentParams: ledger.IntentParams{Key: "subscription:" + email + ":2026-11", Provider: "mpesa",
			Amount: amount, Customer: "+254 712 340 000", Reference: "SUB2611", Metadata: map[string]string{"contact": "0712340000", "mail": email}}}); err != nil {
		return err
	}
	rec = reconciler.New(s, reconciler.Config{Clock: func() time.Time { return now }, Owner: "books-test",
		Grace: map[string]time.Duration{"mpesa": time.Hour}})
	if _, err := rec.Run(ctx, reconciler.Params{Provider: "mpesa", From: demo.Day, To: demo.Day.AddDate(0, 0, 1), NoPull: true}); err != nil {
		return err
	}
	open, err := s.ListFindings(ctx, ledger.FindingFilter{Statuses: []ledger.FindingStatus{ledger.FindingOpen}})
	if err != nil {
		return err
	}
	if len(open) < 4 {
		return fmt.Errorf("only %d open findings", len(open))
	}
	slices.SortFunc(open, func(a, b ledger.Finding) int { return strings.Compare(a.ID, b.ID) })
	ops := ledger.Actor{Name: "ops@shop.example", Surface: ledger.SurfaceCLI}
	if _, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: open[0].ID, To: ledger.FindingAcknowledged, Actor: ops,
		Note: "called the customer on 0712 340 000", Now: now}); err != nil {
		return err
	}
	if _, err := s.UpdateFinding(ctx, ledger.FindingUpdate{ID: open[1].ID, To: ledger.FindingResolved, Actor: ops,
		Note: "refunded by hand; receipt sent to " + email, Now: now}); err != nil {
		return err
	}
	if _, err := s.NoteFinding(ctx, ledger.FindingNote{ID: open[2].ID, Actor: ops, Note: "customer +254712340000 says paid", Now: now}); err != nil {
		return err
	}
	a, _, err := s.RecordAlert(ctx, ledger.Alert{Subject: open[2].ID, Reason: "opened", Provider: open[2].Provider,
		Severity: open[2].Severity, Channel: "finance-ops", State: ledger.AlertPending, CreatedAt: now})
	if err != nil {
		return err
	}
	if _, err := s.MarkAlertFailed(ctx, ledger.AlertFailure{ID: a.ID, Error: "timeout: posting about 254712340000", MayHavePosted: true, Now: now}); err != nil {
		return err
	}
	for _, f := range open {
		if f.Kind == ledger.KindUnknownCharge && len(f.ProviderTxnIDs) == 1 {
			if err := s.AddManualLink(ctx, ledger.ManualLink{Provider: f.Provider, TxnID: f.ProviderTxnIDs[0],
				IntentKey: "mpesa:order-2001", Actor: ops.Name, Note: "payer " + email + " confirmed", At: now}); err != nil {
				return err
			}
			break
		}
	}
	for i, st := range []ledger.QuarantineStatus{ledger.QuarantineDismissed, ledger.QuarantineReplayed, ledger.QuarantineKept} {
		id, err := s.AddQuarantine(ctx, ledger.QuarantineItem{Source: "mpesa_callback", Origin: "10.0.0.7", Field: "MSISDN",
			Reason: fmt.Sprintf("MSISDN 0712340000 of item %d is not registered", i),
			Raw:    fmt.Appendf(nil, `{"MSISDN":%s,"BillRefNumber":"INV%d","Note":"+254712340000"}`, phone, i), At: demo.Day.UTC()})
		if err != nil {
			return err
		}
		if st != ledger.QuarantineKept {
			if _, err := s.UpdateQuarantine(ctx, ledger.QuarantineUpdate{ID: id, To: st, Actor: ops, Note: "for 0712340000", Now: now}); err != nil {
				return err
			}
		}
	}
	if _, _, err := s.InsertEvent(ctx, ledger.Event{ID: ledger.EventID(ledger.EventChargeSucceeded, "books:event-1"),
		Type: ledger.EventChargeSucceeded, IntentKey: "books:event-1", CreatedAt: now,
		Payload: []byte(`{"intent_key":"books:event-1","customer":"254 712 340 000","receipt_to":"` + email + `"}`)}); err != nil {
		return err
	}
	if _, _, err := s.SaveAPIRequest(ctx, ledger.APIRequest{Key: "idem-books-1", RequestHash: "h1", Status: 201,
		Response: []byte(`{"key":"mpesa:order-2001","customer":"` + phone + `","amount":"150.00"}`), CreatedAt: now}); err != nil {
		return err
	}
	// River: a unique job that waits (unique key and states), and one
	// that failed (its error and who tried it).
	workers := river.NewWorkers()
	river.AddWorker(workers, failWorker{})
	river.AddWorker(workers, noteWorker{})
	q, err := queue.New(s, queue.Config{Workers: workers, Queues: map[string]int{river.QueueDefault: 1}, MaxAttempts: 1,
		FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		return err
	}
	if _, err := q.Insert(ctx, noteArgs{Phone: "+" + phone, Email: email, Text: "remind 0712340000"},
		&river.InsertOpts{Queue: "notes", ScheduledAt: now.AddDate(1, 0, 0), UniqueOpts: river.UniqueOpts{ByArgs: true}}); err != nil {
		return err
	}
	failed, err := q.Insert(ctx, failArgs{Customer: phone}, nil)
	if err != nil {
		return err
	}
	if err := q.Start(ctx); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := q.Get(ctx, failed.Job.ID)
		if err != nil {
			return err
		}
		if j.State == "discarded" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the failing job is %s after 30s", j.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return q.Stop(stop)
}

// open opens a store on u, closed when the test ends.
func open(t testing.TB, u string) ledger.Store {
	t.Helper()
	s, err := database.Open(t.Context(), u, database.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", database.Redact(u), err)
	}
	t.Cleanup(s.Close)
	return s
}
