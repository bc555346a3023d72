package alerts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// Environment of the worker process TestKilledWorker starts.
const (
	envWorker   = "ALERTS_TEST_WORKER"
	envDB       = "ALERTS_TEST_DB"
	envMode     = "ALERTS_TEST_MODE"
	envTarget   = "ALERTS_TEST_TARGET"
	envAlert    = "ALERTS_TEST_ALERT"
	workerToken = "xoxb-000000000000-TESTTOKENVALUE"
)

// TestKilledWorker starts a worker process that delivers an alert, lets
// Slack take the message, and SIGKILLs the worker before it records the
// delivery. The redelivery (attempt 2, as after River's rescue) loses
// nothing; in bot mode it finds the message and posts nothing twice, in
// webhook mode it posts again and counts the duplicate.
func TestKilledWorker(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode      Mode
		wantPosts int
		wantDups  int
	}{{ModeBot, 1, 0}, {ModeWebhook, 2, 1}} {
		t.Run(string(c.mode), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbURL := dbtest.PostgresURL(t)
			store, err := database.Open(ctx, dbURL, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(store.Close)
			b := setupDelivery(t, store, c.mode, nil)
			dup, _, _ := fixtureFindings(t)
			alerts := b.rec.run(dup)

			// Slack takes the message, then holds the answer.
			hold := alertstest.Fault{Accept: true, Hang: time.Minute}
			target := b.cfg.APIURL
			if c.mode == ModeBot {
				b.bot.Fail(alertstest.PostMessage, hold)
			} else {
				b.hook.Fail(hold)
				target = b.cfg.Webhooks["C0URGENT"]
			}
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), envWorker+"=1", envDB+"="+dbURL, envMode+"="+string(c.mode),
				envTarget+"="+target, envAlert+"="+strconv.FormatInt(alerts[0].ID, 10))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if c.mode == ModeBot {
				err = b.bot.WaitForPosts(waitCtx, 1)
			} else {
				err = b.hook.WaitForPosts(waitCtx, 1)
			}
			if err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatal(err)
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			if state, _ := cmd.Process.Wait(); state.Success() {
				t.Fatal("worker was not killed")
			}
			a, err := store.GetAlert(ctx, alerts[0].ID)
			if err != nil || a.State != ledger.AlertPending || a.Attempts != 0 {
				t.Fatalf("after the kill the alert is %s with %d attempts: %v", a.State, a.Attempts, err)
			}

			if err := b.d.Deliver(ctx, alerts[0].ID, 2); err != nil {
				t.Fatal(err)
			}
			a, _ = store.GetAlert(ctx, alerts[0].ID)
			var posts []alertstest.Post
			if c.mode == ModeBot {
				posts = b.bot.Posts()
			} else {
				posts = b.hook.Posts()
			}
			if a.State != ledger.AlertDelivered || len(posts) != c.wantPosts || duplicates(b) != c.wantDups {
				t.Fatalf("after redelivery: %s, %d posts, %d duplicates counted", a.State, len(posts), duplicates(b))
			}
			if c.mode == ModeBot && a.MessageTS != posts[0].TS {
				t.Fatalf("recorded ts %s, posted %s", a.MessageTS, posts[0].TS)
			}
		})
	}
}

// workerMain is the worker process TestKilledWorker starts (see TestMain):
// it delivers one alert and is killed while Slack holds the answer.
func workerMain() int {
	ctx := context.Background()
	store, err := database.Open(ctx, os.Getenv(envDB), database.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer store.Close()
	cfg := Config{Mode: Mode(os.Getenv(envMode)), Channel: "C0FINOPS",
		SeverityChannels: map[ledger.Severity]string{ledger.SeverityHigh: "C0URGENT"}, Timeout: 5 * time.Minute}
	if cfg.Mode == ModeBot {
		cfg.APIURL, cfg.BotToken = os.Getenv(envTarget), workerToken
	} else {
		cfg.Webhooks = map[string]string{"C0URGENT": os.Getenv(envTarget), "C0FINOPS": os.Getenv(envTarget)}
	}
	d, err := NewDeliverer(store, cfg, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	id, _ := strconv.ParseInt(os.Getenv(envAlert), 10, 64)
	fmt.Fprintf(os.Stderr, "delivery returned instead of being killed: %v\n", d.Deliver(ctx, id, 1))
	return 1
}
