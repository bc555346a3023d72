package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
	"github.com/reconcilehq/reconcile/queue"
)

// freePort returns a loopback address free now, for a process that must be
// told its address before it starts. The port is taken below the kernel's
// ephemeral range, so that no listener on port 0 (every other test server)
// can be given it between this check and the process's bind; ports are
// spread by process id so that test binaries running side by side rarely
// try the same one.
func freePort(t *testing.T) string {
	t.Helper()
	low, high := 20000, ephemeralLow()-1
	if high-low < 1000 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	for range 200 {
		port := low + int(nextPort.Add(7919)+int64(os.Getpid())*104729)%(high-low)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

var nextPort atomic.Int64

// ephemeralLow is the first port the kernel hands out for port 0.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil {
		return 0
	}
	return lo
}

// TestGracefulShutdown sends SIGTERM to `reconcile serve` while it charges
// M-Pesa intents (slow Daraja answers) and while callbacks keep arriving.
// Every callback it acknowledged is stored; no intent is left held by the
// stopped process; after a restart every intent finishes, each prompted once.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	addr := freePort(t)
	const token = "shutdownTestToken0123456789abcdefgh"
	fake := mpesafake.New(mpesafake.Config{Seed: 7, Latency: 150 * time.Millisecond})
	fakeURL := fake.Start()
	defer fake.Close()
	short, pass, key, secret := fake.Credentials()
	cfg := writeConfig(t, fmt.Sprintf(`
http:
  listen: %s
queue:
  job_timeout: 10s
  rescue_after: 15s
  shutdown_grace: 20s
charges:
  lease: 15s
  pending_poll: 1s
workers:
  charges: 4
providers:
  mpesa:
    base_url: %s
    short_code: "%s"
    callbacks:
      public_url: http://%s
      allow_any_ip: true
`, addr, fakeURL, short, addr))
	env := []string{"RECONCILE_DATABASE_URL=" + url, "RECONCILE_PROVIDERS_MPESA_CONSUMER_KEY=" + key,
		"RECONCILE_PROVIDERS_MPESA_CONSUMER_SECRET=" + secret, "RECONCILE_PROVIDERS_MPESA_PASS_KEY=" + pass,
		"RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN=" + token}

	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	q, err := queue.New(store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"mpesa": fakeCharger{}}}, charge.Config{})
	svc.UseQueue(q)
	const n = 40
	for i := range n {
		amount, _ := money.Parse(fmt.Sprint(100+i), "KES")
		if _, _, err := svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{
			Key: fmt.Sprintf("charge:order-%d", i), Provider: "mpesa", Amount: amount, Customer: fmt.Sprintf("2547%08d", 11110000+i)}}); err != nil {
			t.Fatal(err)
		}
	}

	srv := startProc(t, "serve", env, "serve", "--config", cfg)
	base := srv.url()
	// Callbacks arrive all along; remember those acknowledged.
	var (
		mu    sync.Mutex
		acked [][]byte
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := mpesafake.C2BBody(mpesafake.C2BPayment{TransID: fmt.Sprintf("SHT%07d", i), At: time.Now(), Amount: "10.00",
				ShortCode: short, BillRef: "WALKIN", MSISDN: "2547****0845", FirstName: "PETER"})
			resp, err := http.Post(base+"/daraja/"+token+"/c2b/confirmation", "application/json", bytes.NewReader(body))
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if resp.StatusCode == http.StatusOK {
				mu.Lock()
				acked = append(acked, body)
				mu.Unlock()
			}
			resp.Body.Close()
		}
	})
	if err := poll.Until(ctx, 60*time.Second, poll.Interval, func() (bool, error) { return len(fake.Pushes()) >= 5, nil }); err != nil {
		t.Fatalf("no STK pushes: %v\n%s", err, srv.output())
	}
	srv.term()
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()

	// Acknowledged means stored.
	for _, body := range acked {
		if _, dup, err := store.StoreCallback(ctx, ledger.Callback{Provider: "mpesa", DedupeKey: intake.DedupeKey(body),
			Body: body, ReceivedAt: time.Now()}); err != nil || !dup {
			t.Fatalf("an acknowledged callback was not stored (dup=%v, err=%v): %s", dup, err, body)
		}
	}
	// Nothing is held by the stopped process: in-flight charges finished
	// (recorded as prompted) and released their lease.
	now := time.Now()
	held := 0
	for i := range n {
		in, err := store.GetIntent(ctx, fmt.Sprintf("charge:order-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if in.State == ledger.StateProcessing && in.LeaseExpiresAt.After(now) {
			held++
			t.Errorf("%s is held until %s by the stopped process", in.Key, in.LeaseExpiresAt)
		}
	}
	stoppedWith := len(fake.Pushes())

	// A restart finishes everything; every customer is prompted once.
	again := startProc(t, "serve-again", env, "serve", "--config", cfg)
	again.url()
	if err := poll.Until(ctx, 60*time.Second, 50*time.Millisecond, func() (bool, error) { return len(fake.Pushes()) >= n, nil }); err != nil {
		t.Fatalf("only %d of %d pushes after restart: %v\n%s", len(fake.Pushes()), n, err, again.output())
	}
	if err := fake.SettleAll(ctx); err != nil {
		t.Fatal(err)
	}
	open := 0
	err = poll.Until(ctx, 60*time.Second, 100*time.Millisecond, func() (bool, error) {
		open = 0
		for i := range n {
			in, _ := store.GetIntent(ctx, fmt.Sprintf("charge:order-%d", i))
			if !in.State.Final() && in.State != ledger.StateUnknown {
				open++
			}
		}
		return open == 0, nil
	})
	if err != nil {
		t.Fatalf("%d intents still open after restart: %v\n%s", open, err, again.output())
	}
	again.term()
	perRef := map[string]int{}
	for _, p := range fake.Pushes() {
		perRef[p.AccountReference]++
	}
	for ref, c := range perRef {
		if c != 1 {
			t.Errorf("reference %s prompted %d times", ref, c)
		}
	}
	jobs, err := q.List(ctx, river.NewJobListParams().Kinds("charge").States("discarded"))
	if err != nil || len(jobs.Jobs) != 0 {
		t.Errorf("discarded charge jobs: %d (%v)", len(jobs.Jobs), err)
	}
	t.Logf("SIGTERM with %d of %d customers prompted and callbacks arriving: %d callbacks acknowledged, all stored; "+
		"%d intents held by the stopped process; after restart all %d finished, each prompted once",
		stoppedWith, n, len(acked), held, n)
}

// fakeCharger lets the test enqueue M-Pesa charge jobs; only serve charges.
type fakeCharger struct{}

func (fakeCharger) Charge(context.Context, providers.ChargeRequest) (providers.ChargeResult, error) {
	return providers.ChargeResult{}, fmt.Errorf("not used")
}
