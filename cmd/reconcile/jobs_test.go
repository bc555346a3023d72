package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

// TestJobsListAndRetry: a charge that keeps failing ends discarded after its
// attempts; `jobs list --state discarded` shows it and `jobs retry` runs it
// again.
func TestJobsListAndRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv := fake.NewServer(fake.Options{HonourKeys: true, Fail: func(string, int) fake.Failure { return fake.Unavailable }})
	defer srv.Close()
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"fake": &fake.Charger{Name: "fake", BaseURL: srv.URL()}}},
		charge.Config{MaxAttempts: 2})
	w := river.NewWorkers()
	charge.AddWorkers(w, svc)
	q, err := queue.New(store, queue.Config{Workers: w, Queues: map[string]int{queue.QueueCharges: 1},
		FetchPollInterval: 50 * time.Millisecond, RetryPolicy: queue.Backoff{Base: 50 * time.Millisecond, Max: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	amount, _ := money.Parse("10", "KES")
	if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "charge:down-1", Provider: "fake", Amount: amount}}); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var id int64
	poll.Wait(t, 30*time.Second, "the failing job to be discarded", func() bool {
		res, err := q.List(ctx, river.NewJobListParams().States(rivertype.JobStateDiscarded))
		if err == nil && len(res.Jobs) == 1 {
			id = res.Jobs[0].ID
		}
		return id != 0
	})
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := q.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "jobs", "list", "--state", "discarded", "--database-url", url)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d   charge  discarded  2/2      charge:down-1", id)) || !strings.Contains(out, "unavailable") {
		t.Fatalf("jobs list: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = cli(t, "jobs", "retry", fmt.Sprint(id), "--database-url", url)
	if code != 0 || !strings.Contains(out, "will run again") {
		t.Fatalf("jobs retry: %d %s", code, out)
	}
	j, err := q.Get(ctx, id)
	if err != nil || j.State != rivertype.JobStateAvailable {
		t.Fatalf("after retry: %+v, %v", j, err)
	}
	if code, _, _ := cli(t, "jobs", "retry", "abc", "--database-url", url); code != 2 {
		t.Fatalf("retry abc: exit %d, want 2", code)
	}
}
