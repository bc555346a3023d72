package reconciler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/queue"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/schedule"
)

// TestTickLogs: a tick logs the next run in the provider's zone; a tick
// that finds every due window already queued says so, and why.
func TestTickLogs(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			store := e.New(t)
			q, err := queue.New(store, queue.Config{})
			if err != nil {
				t.Fatal(err)
			}
			cron, err := schedule.ParseCron("CRON_TZ=Africa/Nairobi 30 2 * * *")
			if err != nil {
				t.Fatal(err)
			}
			nairobi, err := time.LoadLocation("Africa/Nairobi")
			if err != nil {
				t.Fatal(err)
			}
			spec := schedule.Spec{Provider: "mpesa", Expr: "CRON_TZ=Africa/Nairobi 30 2 * * *", Cron: cron, Zone: nairobi, Lookback: 1, CatchUp: 2}
			now := time.Date(2026, 11, 2, 23, 30, 0, 0, time.UTC) // 02:30 on 3 Nov in Nairobi
			logs := &bytes.Buffer{}                               // Work logs synchronously
			w := &reconciler.TickWorker{Store: store, Queue: q, Specs: map[string]schedule.Spec{"mpesa": spec},
				Accounts: map[string][]string{"mpesa": {"600639"}},
				Clock:    func() time.Time { return now }, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
			job := &river.Job[reconciler.TickArgs]{Args: reconciler.TickArgs{Provider: "mpesa"}}
			ctx := context.Background()
			if err := w.Work(ctx, job); err != nil {
				t.Fatal(err)
			}
			if err := w.Work(ctx, job); err != nil {
				t.Fatal(err)
			}
			first := regexp.MustCompile(`"msg":"reconcile tick","provider":"mpesa","newest_window":"2026-11-01T21:00:00Z/2026-11-02T21:00:00Z","enqueued":3,"next_run":"2026-11-04T02:30:00\+03:00"`)
			if !first.MatchString(logs.String()) {
				t.Errorf("first tick not logged with its windows and next run:\n%s", logs)
			}
			// The other paybill's windows are jobs of their own.
			branch := regexp.MustCompile(`"msg":"reconcile tick","provider":"mpesa@600639","newest_window":"2026-11-01T21:00:00Z/2026-11-02T21:00:00Z","enqueued":3`)
			if !branch.MatchString(logs.String()) {
				t.Errorf("the account's windows not enqueued apart:\n%s", logs)
			}
			res, err := q.List(ctx, river.NewJobListParams().Kinds("reconcile_run").First(100))
			if err != nil {
				t.Fatal(err)
			}
			accounts := map[string]int{}
			for _, j := range res.Jobs {
				var args reconciler.RunWindowArgs
				if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
					t.Fatal(err)
				}
				accounts[args.Account]++
			}
			if accounts[""] != 3 || accounts["600639"] != 3 || len(accounts) != 2 {
				t.Errorf("run jobs by account: %v, want 3 each for the default account and 600639", accounts)
			}
			idle := regexp.MustCompile(`"msg":"reconcile tick enqueued nothing","provider":"mpesa",.*"enqueued":0,"next_run":"2026-11-04T02:30:00\+03:00","reason":"each due window \(2 first pass\(es\), 1 lookback\(s\)\) already has a job`)
			if !idle.MatchString(logs.String()) {
				t.Errorf("idle tick not explained:\n%s", logs)
			}
		})
	}
}
